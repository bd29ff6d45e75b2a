#!/usr/bin/env bash
# Create the virtual environment and install torch (the pinned build) and this project into it,
# editable; with its test extras when asked for (`make run` needs none of them):
#
#   scripts/install-python-packages.sh .venv python3 ".[test]"
#
# uv installs (about five times faster than pip on a fresh 2-core machine); it is itself
# installed from PyPI with the venv's pip. INSTALLER=pip, or uv failing, installs with pip.
set -euo pipefail
venv=$1
python=$2
project=${3:-.}
installer=${INSTALLER:-uv}
# Pinned in installs (the CPU build where the configured index has one); the package itself needs torch>=2.4.
torch="torch==2.13.0"
bin=$venv/bin
pip=("$bin/python" -m pip --disable-pip-version-check)

echo "==> [1/3] creating the virtual environment in $venv ..."
test -x "$bin/python" || "$python" -m venv "$venv"

if [ "$installer" = uv ]; then
    echo "==> [2/3] installing uv, a faster installer than pip ..."
    if ! "${pip[@]}" install -q uv; then
        echo "==> uv could not be installed; pip installs instead"
        installer=pip
    fi
else
    echo "==> [2/3] installer: pip (INSTALLER=$installer)"
fi

if [ "$installer" = uv ]; then
    echo "==> [3/3] installing $torch, cs336-lectures and their dependencies with uv ..."
    # uv reads no pip configuration: hand it pip's (indexes, local wheels, constraints, certificates),
    # so that both installers see the same packages.
    setting() {
        local from_env="PIP_$(echo "$1" | tr 'a-z-' 'A-Z_')"
        printf '%s' "${!from_env:-$("${pip[@]}" config get "global.$1" 2>/dev/null || true)}"
    }
    export_if_set() { [ -z "$2" ] || export "$1=$2"; }
    export_if_set UV_INDEX_URL "$(setting index-url)"
    export_if_set UV_EXTRA_INDEX_URL "$(setting extra-index-url)"
    export_if_set UV_FIND_LINKS "$(setting find-links)"
    export_if_set UV_CONSTRAINT "$(setting constraint)"
    export_if_set SSL_CERT_FILE "$(setting cert)"
    # Built with the venv's setuptools when it has one (Python < 3.12): no separate build
    # environment to create and fill, which took half the time to the URL on a loaded machine.
    own_build=()
    if "$bin/python" -c "import setuptools" 2>/dev/null; then
        own_build=(--no-build-isolation-package cs336-lectures)
    fi
    # pip's rule across indexes (the best version anywhere, a local build included), not uv's first-index one.
    if "$bin/uv" pip install --python "$bin/python" --index-strategy unsafe-best-match ${own_build[@]+"${own_build[@]}"} \
            "$torch" -e "$project"; then
        exit 0
    fi
    echo "==> uv failed (above); pip installs instead"
fi
echo "==> [3/3] installing $torch, then cs336-lectures and its other dependencies, with pip ..."
"${pip[@]}" install --progress-bar on "$torch"
"${pip[@]}" install --progress-bar on -e "$project"
