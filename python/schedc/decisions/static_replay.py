"""static-replay's plan, as plain data: the static buffers a replayed function binds, and the
recorded submissions that bind them.

`passes/static_replay.py` reads a function's HAL-phase IR into a `ReplayPlan` (through
`schedc.ir.hal`) and rewrites the function from it; the names of everything the rewrite adds
(static buffers, recordings, the globals that hold them) come from here, so the reading, the
rewrite and the report agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class StaticBuffer:
    """A buffer that lives as long as the module: `source` is `input N` or `alloca N`.
    `transient`: an alloca the call neither returns nor keeps fill bytes in, whose bytes mean
    nothing once the call ends. `host`: allocated in host memory that the device reads and
    writes (`in_host_memory`), where the host writes an input or reads a result with no copy."""

    name: str  # the util.global's symbol
    bytes: int
    source: str
    transient: bool = False
    host: bool = False


@dataclass(frozen=True)
class Binding:
    """One binding-table slot of a submission: a part of a static or constant buffer."""

    buffer: str  # a StaticBuffer's name, or a constant !hal.buffer global
    offset: int
    length: int


@dataclass(frozen=True)
class Fill:
    """A fill of a static buffer's bytes with a constant pattern."""

    buffer: str
    offset: int
    length: int
    pattern: str  # the pattern constant's value, as `0 : i8`


@dataclass(frozen=True)
class Submission:
    """One `hal.device.queue.execute.indirect` and the memoized recording it submits."""

    recorder: str  # the util.func that records the command buffer
    bindings: tuple[Binding, ...]
    inputs: tuple[int, ...]  # the call's inputs first bound here (all are copied in before the first)
    once: tuple[tuple[int, Fill], ...] = ()  # (position in the recording, fill) run once instead


@dataclass(frozen=True)
class ReplayPlan:
    function: str
    device: str  # the !hal.device global
    buffers: tuple[StaticBuffer, ...]
    submissions: tuple[Submission, ...]

    @property
    def fills_once(self) -> list[Fill]:
        """The fills run once when the module loads (each distinct one once)."""
        return list(dict.fromkeys(fill for s in self.submissions for _, fill in s.once))

    @property
    def static_bytes(self) -> int:
        return sum(b.bytes for b in self.buffers)

    @property
    def copied_inputs(self) -> list[tuple[int, StaticBuffer]]:
        """The call's inputs that are copied in (each once, in the order of first use), with
        their static buffers."""
        statics = {b.source: b for b in self.buffers}
        return [(i, statics[f"input {i}"]) for submission in self.submissions for i in submission.inputs]

    def recording(self, number: int) -> tuple[str, str]:
        """Submission `number`'s direct recording: the function that records it and the global
        that holds the recorded command buffer."""
        return f"__{self.function}_replay_record_{number}", f"__{self.function}_replay_commands_{number}"

    @property
    def kept_recording(self) -> str:
        """The global holding the first submission's recording with the copies of the input
        buffers last kept in front (see passes/static_replay.py's `_copy_in`)."""
        return f"__{self.function}_replay_kept"

    def kept_source(self, number: int) -> str:
        return f"{self.kept_recording}_source_{number}"

    def last_source(self, number: int) -> str:
        return f"__{self.function}_replay_last_source_{number}"


# A generation module's functions (schedc.runtime.abi.generation_functions), as the HAL phase
# names them (the synchronous export, or its `$async` twin).
GENERATION_FUNCTION = re.compile(r"(prefill_\d+|decode)(_x\d+)?(\$async)?")
# The most bytes of an input or a result kept in host memory: a generation step's token ids and
# positions (8 bytes a sequence), not its attention mask over the cache, its logits or a model's
# activations.
HOST_BYTES = 1024


def in_host_memory(function: str, nbytes: int, generation: bool) -> bool:
    """Whether a replayed function's static input or result buffer lives in pinned host memory
    that the device reads and writes.

    A generation step takes a token id and a position per sequence from the host and returns the
    next token id, which the host reads at once to feed the next step. In device memory each is
    a copy per step: the inputs' inside the replayed graph, the result's a queue copy and a wait
    after it (on CUDA in graph mode a one-shot graph of its own). In host memory the runtime
    writes the inputs and reads the result where they are, and the kernels load and store those
    few bytes across the bus. Only a generation module's own functions, whose caller
    (runtime.generation) passes and reads them on the host; a model's inputs and results stay on
    the device, where torch passes and reads them."""
    return generation and GENERATION_FUNCTION.fullmatch(function) is not None and 0 < nbytes <= HOST_BYTES


def static_name(function: str, kind: str, number: int) -> str:
    """The global of the static buffer that replaces input or alloca `number` of `function`."""
    return f"__{function}_replay_{kind}_{number}"


def persistent_fill_marks(marks: list[int]) -> set[tuple[int, int, int, int]]:
    """arena-plan's `sched.persistent_fills` list as its (execution region, arena bytes, offset,
    length) fours."""
    return {(marks[i], marks[i + 1], marks[i + 2], marks[i + 3]) for i in range(0, len(marks) - 3, 4)}


POOL = "__schedc_replay_pool"
# Where a function's transients start in the pool: a multiple of this (IREE aligns its own
# arenas' slices to 64 bytes or more).
POOL_ALIGNMENT = 256


@dataclass(frozen=True)
class SharedPool:
    """One device buffer that every replayed function's transients share. One call runs at a
    time (a call's results are read before the next call, which overwrites them), so functions
    need not hold their transients apart: the pool is the largest function's transients, not
    their sum (one graph per sequence bucket and a decode step, batch buckets)."""

    bytes: int
    offsets: tuple[tuple[str, int], ...]  # (static buffer, its offset in the pool)
    name: str = POOL

    @property
    def by_buffer(self) -> dict[str, int]:
        return dict(self.offsets)


def _aligned(n: int) -> int:
    return -(-n // POOL_ALIGNMENT) * POOL_ALIGNMENT


def shared_pool(plans: list[ReplayPlan]) -> SharedPool | None:
    """Each function's transients laid out one after another from the pool's start (within a
    call they may be live together); None unless two functions have transients (nothing to
    share)."""
    offsets: list[tuple[str, int]] = []
    size, sharing = 0, 0
    for plan in plans:
        at = 0
        transients = [b for b in plan.buffers if b.transient]
        for buffer in transients:
            offsets.append((buffer.name, at))
            at = _aligned(at + buffer.bytes)
        size = max(size, at)
        sharing += bool(transients)
    return SharedPool(size, tuple(offsets)) if sharing > 1 else None


def pooled_bytes(plans: list[ReplayPlan], pool: SharedPool | None) -> dict[str, int]:
    """The module's static bytes with the pool, and each function's own summed (unshared)."""
    own = sum(plan.static_bytes for plan in plans)
    if pool is None:
        return {"static_bytes": own, "static_bytes_unshared": own, "pool_bytes": 0}
    pooled = pool.by_buffer
    rest = sum(b.bytes for plan in plans for b in plan.buffers if b.name not in pooled)
    return {"static_bytes": rest + pool.bytes, "static_bytes_unshared": own, "pool_bytes": pool.bytes}
