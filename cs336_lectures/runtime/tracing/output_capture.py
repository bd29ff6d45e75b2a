"""Where a traced lecture's prints go: sys.stdout and sys.stderr (and their byte buffers) that
put text on the current step of the trace instead of the terminal."""

from __future__ import annotations

import codecs
import io
from typing import Protocol


class OutputSink(Protocol):
    """What takes the text (the tracer: engine.Tracer.add_output puts it on the current step)."""

    def add_output(self, key: str, text: str) -> None: ...


class StepWriter(io.TextIOBase):
    """sys.stdout / sys.stderr during a trace: text goes to the current step, nowhere else."""

    def __init__(self, tracer: OutputSink, key: str, original):
        self._tracer = tracer
        self._key = key
        self._encoding = getattr(original, "encoding", None) or "utf-8"
        self.buffer = StepBytes(self)

    @property
    def encoding(self) -> str:
        return self._encoding

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._tracer.add_output(self._key, text)
        return len(text)


class StepBytes(io.BufferedIOBase):
    """sys.stdout.buffer during a trace: bytes are decoded (UTF-8, incrementally) onto the text stream."""

    def __init__(self, text: StepWriter):
        self._text = text
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:
        self._text.write(self._decoder.decode(bytes(data)))
        return len(data)
