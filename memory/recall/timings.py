"""Where one recall's time went, for the API's ``Server-Timing`` header and the benchmarks.

Example::

    timings = Timings()
    with timings.measure("embed"):
        vectors = embed(...)
    timings.milliseconds  # {"embed": 9.4}
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator


@dataclasses.dataclass
class Timings:
    milliseconds: dict[str, float] = dataclasses.field(default_factory=dict)

    @contextlib.contextmanager
    def measure(self, name: str) -> Iterator[None]:
        """Add the block's wall-clock time to ``name`` (a phase measured twice counts both)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self.milliseconds[name] = self.milliseconds.get(name, 0.0) + elapsed
