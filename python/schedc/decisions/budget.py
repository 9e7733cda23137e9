"""How schedc's searches stop: a budget of work, and a wall-clock deadline only as a safety net.

A compiler's output must be a function of its input and options, so every search (the exact
and beam searches of memory-order, the local and exact searches of arena-plan) stops after a
fixed amount of work: states created, orders tried, placements explored. The result is then
the same on an idle machine and on a busy one.

The deadline exists so that a pathological input cannot hang a build. It is checked often
enough to be honoured within a few percent; when it fires, the search keeps the best result it
has, `fired` is set, and the pass says so in a warning and in its report record, since the
output may then differ from one run to the next.
"""

from __future__ import annotations

import time


class SearchStopped(Exception):
    """Raised inside a search when its work budget or its deadline runs out."""


class Budget:
    """A work budget (units a search charges as it goes) under a wall-clock deadline."""

    def __init__(self, work: int, deadline: "Deadline | None" = None):
        self.work = work
        self.spent = 0
        self.deadline = deadline

    def charge(self, units: int = 1) -> None:
        """Spends `units`; raises SearchStopped past the budget or the deadline."""
        self.spent += units
        if self.spent > self.work:
            raise SearchStopped("work")
        if self.deadline is not None and self.deadline.passed():
            raise SearchStopped("deadline")


class Deadline:
    """A wall-clock limit in seconds from its creation; `fired` once it has been seen passed."""

    def __init__(self, seconds: float, clock=time.monotonic):
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds
        self.fired = False

    def passed(self) -> bool:
        if not self.fired and self._clock() > self._end:
            self.fired = True
        return self.fired
