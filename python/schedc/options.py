"""The one options model: everything a compile can be asked, as one frozen dataclass.

Every other shape of the options is derived from `CompileOptions`'s fields and their metadata:

    the `schedc` command's flags      `add_compile_arguments` (tools/schedc.py's compile parser)
    `schedc.compile`'s keywords       one per field (test/python/test_options.py checks them)
    the pass context                  `schedc.passes.base.PassContext.from_options`: the fields
                                      marked with a `context` attribute
    the torch.compile backend         `schedc.torch.dynamo.BackendOptions`: the fields marked
                                      `backend`, beside the backend's own options

A new option is one field here, declared with `option(...)`, which makes it say where it goes;
test_options.py fails when one of the four shapes has an option the others lack.

Targets, execution modes, what to emit and the phases passes run in are enums whose members are
their command-line spelling (`TargetName.CUDA == "cuda"`).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from enum import Enum

from schedc.errors import CompileError
from schedc.targets import Target, resolve_target


class Choice(str, Enum):
    """A str enum whose members are, and print as, their command-line spelling."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(member.value for member in cls)

    @classmethod
    def parse(cls, value, what: str):
        """The member spelled `value`; anything else is an error that lists the valid ones."""
        try:
            return cls(value)
        except ValueError:
            raise CompileError(f"unknown {what} '{value}'; valid: {', '.join(cls.names())}") from None


class TargetName(Choice):
    LLVM_CPU = "llvm-cpu"
    CUDA = "cuda"
    ROCM = "rocm"
    VULKAN = "vulkan"


class Execution(Choice):
    """How a compiled module runs its calls: IREE's per-call submission, or command buffers
    recorded once over static buffers and replayed (static-replay; CUDA graphs on cuda/hip)."""

    STREAMS = "streams"
    GRAPHS = "graphs"


class Emit(Choice):
    """What a compile writes: the IR at the end of one of IREE's phases, each dispatch's code
    for the target (a folder), or the module."""

    FLOW = "flow"
    STREAM = "stream"
    CONFIGURATIONS = "configurations"
    HAL = "hal"
    EXECUTABLES = "executables"
    VMFB = "vmfb"


class Phase(Choice):
    """The points where schedc stops IREE's compiler to run passes (schedc.compiler.phases)."""

    INPUT = "input"
    PREPROCESSING = "preprocessing"
    FLOW = "flow"
    STREAM_ASYNC = "stream-async"
    STREAM = "stream"
    CONFIGURATIONS = "configurations"
    HAL = "hal"


def option(default, help: str, *, flag: str | None, backend: bool, context: str | None = None, cli: dict | None = None):
    """A field of CompileOptions that says where it goes:

    flag     its `schedc` flag (None: not on the command line); a `--no-...` flag turns off a
             default of True
    backend  whether torch.compile(backend="schedc", options={...}) takes it
    context  the PassContext attribute it sets, or None when passes never read it
    cli      further argparse keywords (choices, metavar, action)"""
    metadata = {"help": help, "flag": flag, "backend": backend, "context": context, "cli": cli or {}}
    if isinstance(default, (list, tuple)):
        return field(default_factory=lambda: tuple(default), metadata=metadata)
    return field(default=default, metadata=metadata)


_CHIPS = {"cuda_arch": "cuda", "rocm_arch": "rocm", "vulkan_target": "vulkan", "cpu": "llvm-cpu"}


@dataclass(frozen=True)
class CompileOptions:
    """Everything a compile can be asked: each field is a keyword of `schedc.compile` and,
    where it has a flag, an option of `schedc`."""

    target: TargetName = option(TargetName.LLVM_CPU, "llvm-cpu (default, the host CPU), cuda, rocm or vulkan",
                                flag="--target", backend=True, context="target")
    passes: str | None = option(None, "schedc's pass pipeline, e.g. print-kernel-graph (default: schedc's pipeline)",
                                flag="--passes", backend=True)
    schedc_passes: bool = option(True, "IREE alone, for comparison", flag="--no-schedc-passes", backend=False)
    emit: Emit = option(Emit.VMFB, "write this phase's IR, each dispatch's code (LLVM IR, PTX, HSACO, SPIR-V) into a folder, or the module",
                        flag="--emit", backend=False, cli={"choices": Emit.names()})
    dump_phases: str | None = option(None, "write every file of the compile into DIR, numbered in the order they are made",
                                     flag="--dump-phases", backend=False, cli={"metavar": "DIR"})
    cuda_arch: str | None = option(None, "CUDA target (default sm_80)", flag="--cuda-arch", backend=True, context="arch")
    rocm_arch: str | None = option(None, "ROCm target (default gfx942)", flag="--rocm-arch", backend=True, context="arch")
    vulkan_target: str | None = option(None, "Vulkan target (default ampere)", flag="--vulkan-target", backend=True, context="arch")
    cpu: str | None = option(None, "CPU to generate code for (default host)", flag="--cpu", backend=True, context="arch")
    # The report's path (JSON, or one HTML page for a .html path): what schedc decided, and
    # IREE's transient bytes with and without it (this also runs IREE's stream phase alone).
    report: str | None = option(None, "write what schedc decided and IREE's transient bytes with and without it: JSON, or an HTML page for a .html path",
                                flag="--report", backend=False, cli={"metavar": "PATH"})
    summary: bool = option(False, "print a short summary of the report", flag="--summary", backend=False)
    timing: bool = option(False, "print the wall time of each step of the compile and each schedc pass", flag="--timing", backend=False)
    verify_plan: bool = option(False, "check every plan passes make, e.g. no shared bytes between live slices",
                               flag="--verify-plan", backend=False, context="verify")
    execution: Execution = option(Execution.STREAMS, "streams: IREE's per-call submission; graphs: command buffers recorded once over "
                                  "static buffers and replayed (CUDA graphs on cuda/hip)",
                                  flag="--execution", backend=True, context="execution", cli={"choices": Execution.names()})
    # One static copy of each function of dynamic batch per bucket (schedc.compiler.buckets).
    batch_buckets: tuple[int, ...] = option((), "one static copy of the model per batch size (needs an input of dynamic batch: "
                                            "schedc import --dynamic-batch); a call runs the smallest bucket that holds its batch",
                                            flag="--batch-buckets", backend=False, cli={"metavar": "1,2,4,8"})
    # GPU kernel configs (kernel-config) for targets that take them; False: IREE's own configs.
    tuning: bool = option(True, "keep IREE's own code-generation choices: no kernel-config (cuda, rocm), no cpu-config (llvm-cpu)", flag="--no-tuning", backend=True)
    kernel_db: str | None = option(None, "cuda/rocm: kernel configs from this database instead of the built-in one",
                                   flag="--kernel-db", backend=True, context="kernel_database", cli={"metavar": "DB.json"})
    # f32 convolutions in schedc's Triton kernel (triton-conv), their products in TF32, as torch's
    # cuDNN convolutions are by default (torch.backends.cudnn.allow_tf32).
    tf32: bool = option(False, "cuda: f32 convolutions with TF32 products (operands rounded to nearest, f32 sums), "
                        "as torch's cuDNN convolutions by default", flag="--tf32", backend=True, context="tf32")
    iree_flags: tuple[str, ...] = option((), "an extra flag for iree-compile (repeatable)", flag="--iree-flag", backend=True,
                                         cli={"action": "append", "metavar": "FLAG"})

    def __post_init__(self):
        self._check_types()
        # An unknown target or chip is an error where the options are made, listing the valid ones.
        resolved = resolve_target(None if self.target is None else str(self.target), cuda_arch=self.cuda_arch,
                                  rocm_arch=self.rocm_arch, vulkan_target=self.vulkan_target, cpu=self.cpu)
        object.__setattr__(self, "target", TargetName(resolved.name))
        object.__setattr__(self, "emit", Emit.parse(self.emit, "--emit"))
        object.__setattr__(self, "execution", Execution.parse(self.execution, "execution"))
        flags = self.iree_flags
        object.__setattr__(self, "iree_flags", (flags,) if isinstance(flags, str) else tuple(flags))  # one flag, not characters
        object.__setattr__(self, "batch_buckets", tuple(self.batch_buckets))
        self._check_applies()

    def _check_types(self) -> None:
        """A keyword of the wrong type is one clear error, not a failure deep in the compile."""
        if self.report is not None and not isinstance(self.report, (str, bool)):  # True: a report in memory (compile_with_options)
            raise CompileError(f"report takes a path, not {type(self.report).__name__} ({self.report!r})")
        for name in ("target", "passes", "dump_phases", "cuda_arch", "rocm_arch", "vulkan_target", "cpu", "kernel_db"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise CompileError(f"{name} takes a string, not {type(value).__name__} ({value!r})")
        flags = self.iree_flags
        if not isinstance(flags, str) and not (isinstance(flags, (list, tuple)) and all(isinstance(f, str) for f in flags)):
            raise CompileError(f"iree_flags takes a list of flags such as ['--iree-opt-level=O3'], not {flags!r}")
        buckets = self.batch_buckets
        if isinstance(buckets, (str, bytes)) or not isinstance(buckets, (list, tuple)) or not all(
                isinstance(b, int) and not isinstance(b, bool) for b in buckets):
            raise CompileError(f"batch_buckets takes integers such as (1, 2, 4, 8), not {buckets!r}")

    def _check_applies(self) -> None:
        """Options that would do nothing for this compile are errors, not silently ignored."""
        for chip, target in _CHIPS.items():
            if getattr(self, chip) is not None and self.target != target:
                raise CompileError(f"--{chip.replace('_', '-')} applies to --target={target}, not --target={self.target}")
        if self.tf32 and self.target != "cuda":
            raise CompileError(f"--tf32 applies to --target=cuda, not --target={self.target}")
        if self.tf32 and not (self.tuning and self.schedc_passes):
            raise CompileError("--tf32 takes f32 convolutions into schedc's kernel: drop --no-tuning and --no-schedc-passes")
        if not self.schedc_passes and self.passes is not None:
            raise CompileError("--no-schedc-passes runs no schedc pass: drop --passes, or drop --no-schedc-passes")

    @classmethod
    def for_target(cls, target: Target, **options) -> "CompileOptions":
        """The options of a compile for a resolved target (its name and chip)."""
        chip = next(k for k, v in _CHIPS.items() if v == target.name)
        return cls(target=target.name, **{chip: target.arch}, **options)

    @functools.cached_property
    def resolved_target(self) -> Target:
        """The device kind and the chip code is generated for."""
        return resolve_target(self.target.value, cuda_arch=self.cuda_arch, rocm_arch=self.rocm_arch,
                              vulkan_target=self.vulkan_target, cpu=self.cpu)

    @property
    def wants_report(self) -> bool:
        return bool(self.report or self.summary)


def compile_fields() -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(CompileOptions)


def add_compile_arguments(parser) -> None:
    """The `schedc` command's compile flags, one per field that has a flag (`dest` is the
    field's name, so the parsed namespace is `schedc.compile`'s keywords)."""
    for f in compile_fields():
        meta = f.metadata
        if meta["flag"] is None:
            continue
        kwargs = {"dest": f.name, "help": meta["help"], **meta["cli"]}
        if f.type in ("bool", bool):
            kwargs["action"] = "store_false" if meta["flag"].startswith("--no-") else "store_true"
        else:
            kwargs["default"] = [] if kwargs.get("action") == "append" else plain_default(f)
        parser.add_argument(meta["flag"], **kwargs)


def plain_default(f: dataclasses.Field):
    """A field's default as the command line and the backend's options spell it (an enum as
    its string)."""
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    return default.value if isinstance(default, Choice) else default


def backend_fields() -> tuple[dataclasses.Field, ...]:
    """The fields the torch.compile backend takes as its options."""
    return tuple(f for f in compile_fields() if f.metadata["backend"])
