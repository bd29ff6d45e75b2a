"""cs336-lectures: executable lectures and the CS336 content they teach.

The public surface of the runtime is small:

- ``text``, ``image``, ``link``, ``plot``: put a rendering on the current line of a lecture;
- ``Reference``: an external reference (paper, blog post) to pass to ``link``;
- ``load_trace``: read a trace written by ``cs336-lectures trace``.

Content lives in submodules (``cs336_lectures.tokenization``, ``.accounting``, ...).
"""

from cs336_lectures.primitives import Reference, image, link, plot, text
from cs336_lectures.trace_format import Trace, load_trace

__all__ = ["Reference", "Trace", "image", "link", "load_trace", "plot", "text"]
