"""One deadline for a whole decision: every request, retry and wait fits inside it."""

from __future__ import annotations

import time


class Deadline:
    """A point on the monotonic clock, `seconds` from now."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.at
