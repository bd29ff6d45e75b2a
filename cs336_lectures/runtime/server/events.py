"""The server's events: each re-trace's progress and outcome, fanned out to every open
/api/events stream (Server-Sent Events); a viewer that arrives late gets the latest of each trace.
A lecture file that became another version is told too, but not kept for late viewers."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from cs336_lectures.runtime.server.source_files import version_of


class EventHub:
    """Fans re-trace events out to every open /api/events stream; remembers the last per trace."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[queue.Queue] = set()
        self.latest: dict[str, dict] = {}

    def publish(self, event: dict, remember: bool = True) -> None:
        """Send `event` to every stream; a remembered one is also replayed to streams opened later."""
        with self._lock:
            previous = self.latest.get(event["trace"])
            if not remember:
                pass
            elif event["state"] == "verified" and previous is not None:
                # The run's outcome stands (a viewer arriving later still learns that it failed); only
                # its check is new.
                self.latest[event["trace"]] = {**previous, "verification": event["verification"]}
            else:
                self.latest[event["trace"]] = event
            for listener in self._listeners:
                listener.put(event)

    def say_source_changed(self, trace: str, path: Path) -> None:
        """Tell open editors at once that a lecture file is another version now (saved by another
        editor), so that one holding unsaved changes says so before its save is refused."""
        try:
            version = version_of(path.read_bytes())
        except OSError:
            version = None
        self.publish({"trace": trace, "state": "source", "version": version}, remember=False)

    def subscribe(self) -> tuple[queue.Queue, list[dict]]:
        """A new listener queue, plus the latest event of each trace (for a viewer just arriving)."""
        listener: queue.Queue = queue.Queue()
        with self._lock:
            self._listeners.add(listener)
            return listener, list(self.latest.values())

    def unsubscribe(self, listener: queue.Queue) -> None:
        with self._lock:
            self._listeners.discard(listener)

    def close(self) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.put(None)
