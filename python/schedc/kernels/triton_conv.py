"""schedc's CUDA convolution kernel, written in Triton and compiled ahead of time to PTX.

IREE 3.13 emits sm_80 tensor-core code (mma.sync) for every NVIDIA GPU, and its implicit-GEMM
convolutions ran about 1.5x cuDNN's time on an H100 (bench/README.md, "Matmuls split over K").
Triton compiles the same implicit GEMM for the GPU it is given (wgmma on sm_90). `compile_conv`
compiles `conv2d` for one convolution's sizes and tiles (every size a compile-time
constant, as IREE's own dispatches are), and a dispatch runs the PTX through IREE's custom
dispatch path (a `hal.executable.source` whose object is the PTX: schedc.ir.triton_conv).

The kernel reads an NCHW image and an FCHW filter (f16 or bf16; f32, multiplied in TF32, where
triton-conv{tf32=true} asks), or with `NHWC` = 1 an NHWC image and an RSCF filter, whose steps of
channels are vector loads in one pipelined loop over the window and the channels
(triton-conv{layout=nhwc}), and writes an NCHW output in
f32 (torch-mlir's accumulator) or, where only a cast reads that, in the cast's type, reading the
padding as zeros: an implicit GEMM whose rows are the
output pixels of every image, whose columns are the output channels, over the filter's channels
for each window position. With `SPLIT` > 1 a workgroup takes one part of the channels and writes
f32 partial sums `[SPLIT, N, F, OH, OW]`, which the module sums after it.

Compiled PTX is cached under `schedc.kernels.cache_folder()`, named by a digest of this file,
Triton's version, the target and the constants, so the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from schedc.kernels import KernelUnavailable, cache_folder, write_cached

KERNEL = "conv2d"
TRITON_VERSION = "3.5.0"  # pyproject.toml's pin: the PTX a version emits is part of the output


@dataclass(frozen=True)
class CompiledConv:
    ptx: str
    name: str
    threads: int
    shared_bytes: int


class TritonMissing(KernelUnavailable):
    """Triton (the pinned version) is not installed: no convolution can take the kernel."""


def _triton():
    try:
        import triton
    except ImportError:
        raise TritonMissing(f"Triton is not installed (pip install triton=={TRITON_VERSION}): schedc's CUDA convolution kernel is compiled with it") from None
    if triton.__version__ != TRITON_VERSION:
        raise TritonMissing(f"Triton {triton.__version__} is installed; schedc's CUDA kernels are built with triton=={TRITON_VERSION}")
    return triton


# The kernel's source, a module of its own (Triton reads a kernel's source from its file): its
# epilogue's operands join the parameters (`{operands}`) and its arithmetic the end (`{epilogue}`),
# where `value` holds the f32 sums on the way to the store; a kernel that sums its parts itself
# takes its counters and partial sums too (`{serial_operands}`, `{serial}`: _SERIAL_SOURCE); and one
# whose result both a transpose to NHWC and other ops read writes it both ways (`{second_output}`).
_SOURCE = """
import triton
import triton.language as tl


@triton.jit
def _tf32(x):
    # An f32 operand rounded to TF32 (to nearest, ties away: cvt.rna.tf32.f32, as cuDNN and
    # cuBLAS round): the tensor cores read only its top 19 bits, so unrounded products were
    # truncated, and a whole f32 ResNet's error from f64 was 7-20x eager's TF32 error (H100).
    if x.dtype == tl.float32:
        bits = x.to(tl.uint32, bitcast=True)
        x = (((bits + 0x1000) >> 13) << 13).to(tl.float32, bitcast=True)
    return x


@triton.jit
def conv2d(x_ptr, w_ptr, {operands}{serial_operands}y_ptr, {second_output}
           N: tl.constexpr, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr, F: tl.constexpr,
           R: tl.constexpr, S: tl.constexpr, OH: tl.constexpr, OW: tl.constexpr,
           SH: tl.constexpr, SW: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
           DH: tl.constexpr, DW: tl.constexpr, SPLIT: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, NHWC: tl.constexpr = 0,
           OUT_NHWC: tl.constexpr = 0):
    # Workgroups in groups of GROUP row tiles, so neighbours share the filter's columns in L2.
    pid = tl.program_id(0)
    part = tl.program_id(1)
    num_m: tl.constexpr = (N * OH * OW + BM - 1) // BM
    num_n: tl.constexpr = (F + BN - 1) // BN
    in_group = GROUP * num_n
    first_m = (pid // in_group) * GROUP
    group_m = min(num_m - first_m, GROUP)
    pid_m = first_m + (pid % in_group) % group_m
    pid_n = (pid % in_group) // group_m
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    image = offs_m // (OH * OW)
    pixel = offs_m % (OH * OW)
    oh = pixel // OW
    ow = pixel % OW
    m_ok = offs_m < N * OH * OW
    n_ok = offs_n < F
    CP: tl.constexpr = (C + SPLIT - 1) // SPLIT  # channels a part
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    if NHWC:  # an NHWC image and an RSCF filter: a step's channels lie side by side (vector loads)
        STEPS: tl.constexpr = (CP + BK - 1) // BK  # steps a window position
        EVEN: tl.constexpr = CP % BK == 0 and SPLIT * CP == C  # every step's channels in range
        for t in range(0, R * S * STEPS):  # one loop over the window and the channels, pipelined
            rs = t // STEPS
            c0 = (t % STEPS) * BK
            ih = oh * SH - PH + (rs // S) * DH
            iw = ow * SW - PW + (rs % S) * DW
            inside = m_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            channel = part * CP + c0 + tl.arange(0, BK)
            a_at = x_ptr + (((image * H + ih) * W + iw) * C)[:, None] + channel[None, :]
            b_at = w_ptr + ((rs * C + channel) * F)[:, None] + offs_n[None, :]
            if EVEN:
                a = tl.load(a_at, mask=inside[:, None], other=0.0)
                if F % BN == 0:
                    b = tl.load(b_at)
                else:
                    b = tl.load(b_at, mask=n_ok[None, :], other=0.0)
            else:
                c_ok = (c0 + tl.arange(0, BK) < CP) & (channel < C)
                a = tl.load(a_at, mask=inside[:, None] & c_ok[None, :], other=0.0)
                b = tl.load(b_at, mask=c_ok[:, None] & n_ok[None, :], other=0.0)
            acc = tl.dot(_tf32(a), _tf32(b), acc, input_precision="tf32")
    else:  # NCHW and FCHW, as torch lays them out
        for r in tl.static_range(R):
            for s in tl.static_range(S):
                ih = oh * SH - PH + r * DH
                iw = ow * SW - PW + s * DW
                inside = m_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                base = image * (C * H * W) + ih * W + iw
                for c0 in range(0, CP, BK):
                    channel = part * CP + c0 + tl.arange(0, BK)
                    c_ok = (c0 + tl.arange(0, BK) < CP) & (channel < C)
                    a = tl.load(x_ptr + channel[None, :] * (H * W) + base[:, None], mask=inside[:, None] & c_ok[None, :], other=0.0)
                    b = tl.load(w_ptr + offs_n[None, :] * (C * R * S) + channel[:, None] * (R * S) + (r * S + s),
                                mask=c_ok[:, None] & n_ok[None, :], other=0.0)
                    acc = tl.dot(_tf32(a), _tf32(b), acc, input_precision="tf32")  # f32 images (tf32=true): TF32 products, as cuDNN by default
    out = part * (N * F * OH * OW) + image[:, None] * (F * OH * OW) + offs_n[None, :] * (OH * OW) + pixel[:, None]
    ok = m_ok[:, None] & n_ok[None, :]
{serial}
    value = acc
{epilogue}
    if OUT_NHWC:  # the output channels last (where only a transpose to NHWC reads it)
        tl.store(y_ptr + offs_m[:, None] * F + offs_n[None, :], value.to(y_ptr.dtype.element_ty), mask=ok)
    else:
        tl.store(y_ptr + out, value.to(y_ptr.dtype.element_ty), mask=ok)
{second_store}
"""


# The parts of a split kernel (SPLIT > 1) summed by the last of each tile's workgroups to finish,
# as CUTLASS's serial split-K does: each stores its f32 sums into the partial sums
# [SPLIT, N, F, OH, OW] (`p_ptr`) and, once every thread's stores are done, counts itself in at
# its tile's counter (`c_ptr`, zero when the dispatch starts) with an acquire-release atomic at
# GPU scope; the one that counts SPLIT - 1 reads every part back past L1 (`.cg`), in part order
# (the same sum whichever arrives last), and alone runs the epilogue and stores.
_SERIAL_SOURCE = """    tl.store(p_ptr + out, acc, mask=ok)
    tl.debug_barrier()
    arrived = tl.atomic_add(c_ptr + pid, 1, sem="acq_rel", scope="gpu")
    out = out - part * (N * F * OH * OW)
    ok = ok & (arrived == SPLIT - 1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for q in tl.static_range(SPLIT):
        acc += tl.load(p_ptr + q * (N * F * OH * OW) + out, mask=ok, other=0.0, cache_modifier=".cg")"""


_SECOND_STORE = "    tl.store(y2_ptr + offs_m[:, None] * F + offs_n[None, :], value.to(y2_ptr.dtype.element_ty), mask=ok)"


@dataclass(frozen=True)
class Epilogue:
    """Elementwise arithmetic the kernel runs on its sums before it stores them (the batch norm,
    bias, residual sum and activation that follow a convolution), as plain data.

    `operands`: what it reads besides the sums, each (kind, element type): "channel", a vector
    along the output channels, or "tensor", one value per output (NCHW, as the output). `body`:
    (result type, op, operand names...) in order, an op by MLIR's name (`arith.addf`,
    `arith.cmpf:ugt`, ...), an operand `acc` (the f32 sums), `o<i>` (operand i), `r<j>` (step j's
    result) or a float literal; the last step's result is stored."""

    operands: tuple[tuple[str, str], ...] = ()
    body: tuple[tuple[str, ...], ...] = ()


_TL_TYPES = {"f16": "tl.float16", "bf16": "tl.bfloat16", "f32": "tl.float32", "i1": "tl.int1"}
_BINARY = {"arith.addf": "({0} + {1})", "arith.subf": "({0} - {1})", "arith.mulf": "({0} * {1})", "arith.divf": "({0} / {1})",
           "arith.maximumf": "tl.maximum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)",
           "arith.minimumf": "tl.minimum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)",
           "arith.maxnumf": "tl.maximum({0}, {1})", "arith.minnumf": "tl.minimum({0}, {1})"}
_UNARY = {"arith.negf": "(-{0})", "math.sqrt": "tl.sqrt({0})", "math.rsqrt": "tl.rsqrt({0})", "math.exp": "tl.exp({0})",
          "math.erf": "tl.erf({0})", "math.absf": "tl.abs({0})"}
# cmpf's predicates: ordered ones are false where either side is NaN (as Python's comparisons),
# unordered ones true.
_ORDERED = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<="}
_UNORDERED = {"ueq": "==", "ugt": ">", "uge": ">=", "ult": "<", "ule": "<="}
# The ops an Epilogue's body may hold (schedc.ir.triton_conv reads them from linalg bodies).
EPILOGUE_OPS = frozenset({*_BINARY, *_UNARY, "arith.truncf", "arith.extf", "arith.select", "arith.cmpf:one", "arith.cmpf:une",
                          *(f"arith.cmpf:{p}" for p in (*_ORDERED, *_UNORDERED))})
# math ops Triton computes in f32 only
F32_ONLY_OPS = frozenset(_UNARY) - {"arith.negf", "math.absf"}


def epilogue_lines(epilogue: Epilogue) -> list[str]:
    """The kernel's Triton lines for `epilogue`: its operands loaded (a channel vector along the
    tile's columns, a tensor at the output's places), then its body, into `value`."""
    lines = []
    for i, (kind, _) in enumerate(epilogue.operands):
        at = f"e{i}_ptr + offs_n, mask=n_ok, other=0.0)[None, :]" if kind == "channel" else f"e{i}_ptr + out, mask=ok, other=0.0)"
        lines.append(f"o{i} = tl.load({at}")
    for j, (result_type, op, *operands) in enumerate(epilogue.body):
        if op in _BINARY:
            expression = _BINARY[op].format(*operands)
        elif op in _UNARY:
            expression = _UNARY[op].format(*operands)
        elif op in ("arith.truncf", "arith.extf"):
            expression = f"{operands[0]}.to({_TL_TYPES[result_type]})"
        elif op == "arith.select":
            expression = f"tl.where({operands[0]}, {operands[1]}, {operands[2]})"
        elif op.startswith("arith.cmpf:"):
            a, b = operands
            predicate = op.partition(":")[2]
            if predicate in _ORDERED:
                expression = f"({a} {_ORDERED[predicate]} {b})"
            elif predicate in _UNORDERED:
                expression = f"(({a} {_UNORDERED[predicate]} {b}) | ({a} != {a}) | ({b} != {b}))"
            elif predicate == "one":
                expression = f"(({a} < {b}) | ({a} > {b}))"
            else:  # une
                expression = f"({a} != {b})"
        else:
            raise ValueError(f"an epilogue op the kernel does not run: {op}")
        lines.append(f"r{j} = {expression}")
    if epilogue.body:
        lines.append(f"value = r{len(epilogue.body) - 1}")
    return lines


def kernel_source(epilogue: Epilogue | None = None, serial: bool = False, both_layouts: bool = False) -> str:
    """The kernel's module text, with `epilogue`'s operands and arithmetic, where `serial` its
    parts summed in it (_SERIAL_SOURCE), and where `both_layouts` a second output, the first's
    values channels last."""
    epilogue = epilogue or Epilogue()
    operands = "".join(f"e{i}_ptr, " for i in range(len(epilogue.operands)))
    body = "".join(f"    {line}\n" for line in epilogue_lines(epilogue))
    return _SOURCE.format(operands=operands, epilogue=body.rstrip("\n") or "    pass", serial_operands="c_ptr, p_ptr, " if serial else "",
                          serial=_SERIAL_SOURCE if serial else "    pass", second_output="y2_ptr, " if both_layouts else "",
                          second_store=_SECOND_STORE if both_layouts else "")


def _kernel(epilogue: Epilogue | None = None, serial: bool = False, both_layouts: bool = False):
    """Triton and the kernel (`conv2d`, with `epilogue`, summing its parts where `serial`,
    writing a second output channels last where `both_layouts`), loaded from its source's file
    in the cache (written once, named by its digest)."""
    triton = _triton()
    import importlib.util

    text = kernel_source(epilogue, serial, both_layouts)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = cache_folder() / f"{KERNEL}-source-{digest}.py"
    if not path.exists() or path.read_text() != text:
        write_cached(path, text)
    spec = importlib.util.spec_from_file_location(f"schedc_triton_{KERNEL}_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return triton, module.conv2d


_TYPES = {"f16": "*fp16", "bf16": "*bf16", "f32": "*fp32"}


def compile_conv(constants: dict[str, int], dtype: str, out_dtype: str, warps: int, stages: int, arch: int = 90,
                 max_shared_bytes: int = 48 * 1024, epilogue: Epilogue | None = None, serial: bool = False,
                 both_layouts: bool = False) -> CompiledConv:
    """The PTX of `conv2d` with `constants` (its compile-time sizes and tiles, by name:
    schedc.decisions.triton_conv.kernel_constants) for `dtype` images and filters and a
    `out_dtype` output, with `epilogue` before the store, on sm_`arch`, from the cache or
    Triton; KernelUnavailable where Triton cannot compile it or it needs more than
    `max_shared_bytes` of shared memory. Its parameters are the image, the filter, the
    epilogue's operands, where `serial` (its parts summed in it: _SERIAL_SOURCE) its counters (i32,
    one a tile) and partial sums, and the output (and where `both_layouts` the same NHWC), in
    that order (the dispatch's bindings)."""
    epilogue = epilogue or Epilogue()
    key = json.dumps({"source": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(), "triton": TRITON_VERSION, "arch": arch,
                      "constants": constants, "types": [dtype, out_dtype], "warps": warps, "stages": stages,
                      "epilogue": [epilogue.operands, epilogue.body], "serial": serial, "both_layouts": both_layouts}, sort_keys=True)
    path = cache_folder() / f"{KERNEL}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"
    if path.exists():
        cached = json.loads(path.read_text())
        return CompiledConv(cached["ptx"], cached["name"], cached["threads"], cached["shared_bytes"])
    triton, kernel = _kernel(epilogue, serial, both_layouts)
    from triton.backends.compiler import GPUTarget

    pointers = {"x_ptr": _TYPES[dtype], "w_ptr": _TYPES[dtype]} | {f"e{i}_ptr": _TYPES[t] for i, (_, t) in enumerate(epilogue.operands)}
    pointers |= {"c_ptr": "*i32", "p_ptr": "*fp32"} if serial else {}
    pointers["y_ptr"] = _TYPES[out_dtype]
    pointers |= {"y2_ptr": _TYPES[out_dtype]} if both_layouts else {}
    signature = pointers | {k: "constexpr" for k in constants}
    aligned = [["tt.divisibility", 16]]
    source = triton.compiler.ASTSource(fn=kernel, signature=signature, constexprs=constants, attrs={(i,): aligned for i in range(len(pointers))})
    what = f"{KERNEL} {constants} {dtype}->{out_dtype}" + (f" with {len(epilogue.body)} epilogue ops" if epilogue.body else "")
    try:
        compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": warps, "num_stages": stages})
    except Exception as e:  # Triton's own errors (a tile it cannot lower): this convolution stays IREE's
        raise KernelUnavailable(f"Triton could not compile {what}: {str(e).strip().splitlines()[-1][:300]}") from None
    if compiled.metadata.shared > max_shared_bytes:
        raise KernelUnavailable(f"{what} takes {compiled.metadata.shared} bytes of shared memory (at most {max_shared_bytes})")
    result = CompiledConv(_without_scratch(compiled.asm["ptx"], compiled.metadata.name, len(pointers)), compiled.metadata.name, 32 * warps,
                          int(compiled.metadata.shared))
    write_cached(path, json.dumps({"ptx": result.ptx, "name": result.name, "threads": result.threads, "shared_bytes": result.shared_bytes}))
    return result


def ptx_path(kernel: CompiledConv) -> Path:
    """A file holding `kernel`'s PTX, named by its digest (IREE 3.13 links an object from a
    path only), written once and atomically."""
    path = cache_folder() / f"{KERNEL}-{hashlib.sha256(kernel.ptx.encode()).hexdigest()[:16]}.ptx"
    if not path.exists():
        write_cached(path, kernel.ptx)
    return path


def _without_scratch(ptx: str, name: str, bindings: int = 3) -> str:
    """The PTX with the entry's trailing scratch pointers dropped. Triton 3.5 appends a global
    and a profiling scratch pointer to every kernel's parameters; IREE passes a dispatch's
    `bindings` and nothing else, and this kernel uses neither (its scratch sizes are 0)."""
    entry = re.search(rf"\.entry {re.escape(name)}\((.*?)\)", ptx, re.S)
    params = [p.strip() for p in entry.group(1).split(",")]
    if len(params) != bindings + 2 or any(p.split()[-1] in ptx[entry.end():] for p in params[bindings:]):
        raise KernelUnavailable(f"unexpected parameters in Triton's PTX for {name}: {params}")
    return ptx[:entry.start(1)] + "\n\t" + ",\n\t".join(params[:bindings]) + "\n" + ptx[entry.end(1):]
