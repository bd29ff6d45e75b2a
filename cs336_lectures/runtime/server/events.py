"""The server's events: each re-trace's progress and outcome, fanned out to every open
/api/events stream (Server-Sent Events); a viewer that arrives late gets the latest of each trace."""

from __future__ import annotations

import queue
import threading


class EventHub:
    """Fans re-trace events out to every open /api/events stream; remembers the last per trace."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[queue.Queue] = set()
        self.latest: dict[str, dict] = {}

    def publish(self, event: dict) -> None:
        with self._lock:
            previous = self.latest.get(event["trace"])
            if event["state"] == "verified" and previous is not None:
                # The run's outcome stands (a viewer arriving later still learns that it failed); only
                # its check is new.
                self.latest[event["trace"]] = {**previous, "verification": event["verification"]}
            else:
                self.latest[event["trace"]] = event
            for listener in self._listeners:
                listener.put(event)

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
