"""The `sched` vocabulary: attributes schedc's passes write on IR (see sched.md)."""

from .sched import (
    ARENA_LOAD,
    ARENA_METHOD,
    ARENA_OFFSETS,
    ARENA_SIZE,
    POSITION,
    STRATEGY,
    STREAM,
    WAVE,
    WAVES,
    SchedAttr,
)

__all__ = ["ARENA_LOAD", "ARENA_METHOD", "ARENA_OFFSETS", "ARENA_SIZE", "POSITION", "STRATEGY", "STREAM", "WAVE", "WAVES", "SchedAttr"]
