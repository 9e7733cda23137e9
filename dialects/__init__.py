"""The `sched` vocabulary: attributes schedc's passes write on IR (see sched.md)."""

from .sched import ALL, ARENA_OFFSET, POSITION, STREAM, STRATEGY, WAVE, SchedAttr

__all__ = ["ALL", "ARENA_OFFSET", "POSITION", "STREAM", "STRATEGY", "WAVE", "SchedAttr"]
