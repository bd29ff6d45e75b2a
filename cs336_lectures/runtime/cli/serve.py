"""`cs336-lectures serve`: its options, and the command that starts the local server
(server/http_server.py), prints where to open it and stops it cleanly on Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import webbrowser
from pathlib import Path

from cs336_lectures.runtime.publish.site import DEFAULT_TRACES, VIEWER_DIR, default_traces_dir
from cs336_lectures.runtime.server.http_server import LectureServer
from cs336_lectures.runtime.tracing import DEFAULT_MAX_STEPS
from cs336_lectures.runtime.terminal_text import print_visible, visible

MAX_TIMEOUT_SECONDS = 1_000_000
DEFAULT_TIMEOUT_SECONDS = 300.0  # an edit that waits for ever ends as a failed re-trace


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures serve` (cli/main.py adds them to its subcommand)."""
    parser.add_argument("lectures", nargs="*", metavar="LECTURE.py",
                        help="lectures to trace when stale, watch, re-trace on change and allow editing")
    parser.add_argument("--traces", metavar="DIR",
                        help=f"folder of traces to serve and write (default: {DEFAULT_TRACES}, under the working "
                             "directory when the lectures are inside it, else beside them)")
    parser.add_argument("--backups", metavar="DIR",
                        help="folder for the last versions a browser save replaced (default: backups beside --traces, "
                             "var/backups)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: 127.0.0.1; anything else exposes a server that runs code)")
    parser.add_argument("--port", type=int, default=8336, help="port (default: 8336; 0 picks a free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    # The same step limit as `trace`: a re-trace stops where a plain trace of the file would.
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
                        help=f"step limit passed to the tracer on every re-trace (default: {DEFAULT_MAX_STEPS:,})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, metavar="SECONDS",
                        help=f"time limit passed to the tracer on every re-trace (default: {DEFAULT_TIMEOUT_SECONDS:g})")
    parser.add_argument("--no-verify", dest="verify", action="store_false",
                        help="do not check each resumed run with a whole run in the background (for long lectures)")


def _say(message: str) -> None:
    """One line to the terminal in a single write, so lines from re-trace threads never interleave.

    A re-trace's message can quote the lecture's exception, so its control characters are made visible."""
    sys.stdout.write(f"{visible(message)}\n")
    sys.stdout.flush()


def _stop(signum, frame) -> None:
    """SIGTERM stops the server the way Ctrl-C does: running tracers are killed, streams closed."""
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    """`cs336-lectures serve`: serve until Ctrl-C or SIGTERM; returns the exit status."""
    for flag, value in (("--max-steps", args.max_steps), ("--timeout", args.timeout)):
        if value is not None and not value > 0:
            print_visible(f"cs336-lectures: error: {flag} must be positive, not {value}")
            return 2
    if args.timeout is not None and not args.timeout <= MAX_TIMEOUT_SECONDS:
        print_visible(f"cs336-lectures: error: --timeout must be at most {MAX_TIMEOUT_SECONDS:,} seconds, "
                      f"not {args.timeout:g}")
        return 2
    missing = [path for path in args.lectures if not Path(path).is_file()]
    if missing:
        print_visible(f"cs336-lectures: error: no such lecture file: {', '.join(missing)}")
        return 2
    if not (VIEWER_DIR / "index.html").is_file():
        print_visible(f"cs336-lectures: error: the viewer is missing ({VIEWER_DIR}/index.html)")
        return 2
    if args.traces is None:
        folders = {default_traces_dir(Path(path)) for path in args.lectures} or {DEFAULT_TRACES}
        if len(folders) > 1:
            print_visible("cs336-lectures: error: the lectures are in different folders; "
                          "name one folder for their traces with --traces")
            return 2
        args.traces = str(folders.pop())
    from cs336_lectures.runtime.course.importer import refuse_to_replace_course_trace

    for path in args.lectures:  # a clone of the Stanford course keeps its published traces in var/traces
        refusal = refuse_to_replace_course_trace(Path(args.traces) / f"{Path(path).stem}.json", "--traces")
        if refusal:
            print_visible(f"cs336-lectures: error: {refusal}")
            return 2
    try:
        server = LectureServer([Path(path) for path in args.lectures], Path(args.traces), host=args.host,
                               port=args.port, max_steps=args.max_steps, timeout=args.timeout,
                               log=_say, verify=args.verify,
                               backups_dir=Path(args.backups) if args.backups else None)
    except ValueError as error:
        print_visible(f"cs336-lectures: error: {error}")
        return 2
    except OSError as error:
        print_visible(f"cs336-lectures: error: cannot listen on {args.host}:{args.port}: {error.strerror or error}")
        return 1
    try:
        # The one line a newcomer needs, set apart so it is not lost among the others.
        _say(f"cs336-lectures: serving {server.traces_dir}\n\n    Open {server.url}\n")
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            _say(f"cs336-lectures: warning: listening on {args.host}; anyone who can reach it and has the token can run code")
        for lecture in server.lectures.values():
            _say(f"watching {lecture.given} (trace {lecture.name})")
        _say("press Ctrl-C to stop")
        signal.signal(signal.SIGTERM, _stop)
        server.begin()
        if not args.no_browser:
            webbrowser.open(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        _say("\nstopping")
    finally:
        # A second Ctrl-C (or a signal to the whole process group) must not cut the cleanup short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        server.close()
    return 0
