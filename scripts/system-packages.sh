#!/usr/bin/env bash
# Make sure the Debian packages a make target needs are installed:
#
#   scripts/system-packages.sh "the tests" chromium libomp5 ...
#
# Present: one line. Missing, as root with apt-get: installs them, saying so. Otherwise: stops
# with one line naming what to install and how. SYSTEM_PACKAGES=no skips the check (the tests
# that need a missing package then skip, each saying why).
set -euo pipefail
purpose=$1
shift

if [ "${SYSTEM_PACKAGES:-yes}" = no ]; then
    echo "==> system packages for $purpose: not checked (SYSTEM_PACKAGES=no)"
    exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    # Not Debian (macOS, say): only Chromium matters here; the rest is Linux-only (README, Set-up).
    if [[ " $* " == *" chromium "* ]]; then
        for browser in "${CHROMIUM:-}" /Applications/Chromium.app/Contents/MacOS/Chromium "$(command -v chromium || true)"; do
            if [ -n "$browser" ] && [ -x "$browser" ]; then
                echo "==> system packages for $purpose: Chromium at $browser; not a Debian system, so no Slurm, fonts or libomp5 installed"
                exit 0
            fi
        done
        echo "make: Chromium is missing for $purpose; install it (macOS: brew install --cask chromium) or set CHROMIUM=/path/to/chromium, or run with SYSTEM_PACKAGES=no" >&2
        exit 1
    fi
    echo "==> system packages for $purpose: not a Debian system, nothing installed ($* are Linux-only)"
    exit 0
fi

missing=()
for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "==> system packages for $purpose: installed ($*)"
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "make: missing system packages for $purpose: ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]} (or run with SYSTEM_PACKAGES=no to go without)" >&2
    exit 1
fi
echo "==> installing system packages for $purpose: ${missing[*]} (apt-get; a minute or two) ..."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "make: apt-get could not install ${missing[*]} (its last lines are above)" >&2
    exit 1
fi
echo "==> installed ${missing[*]}"
