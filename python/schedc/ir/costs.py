"""A roofline cost model for kernels: FLOPs and bytes from the IR, time from a target table.

    time(kernel) = launch overhead + max(FLOPs / peak FLOP/s, bytes moved / bandwidth)

FLOPs come from the dispatch's body: for every linalg op, the iteration count (its loop ranges,
from its indexing maps and operand shapes) times the arithmetic ops in its region; bytes moved
are the dispatch's tensor operands and results. The decision code reads only `KernelCost`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.dialects.sched import KERNEL_TIME_US

from schedc.ir.iree import dispatch_name, flow_op, is_dispatch, tensor_bytes


@dataclass(frozen=True)
class TargetPeaks:
    """Peak rates of one device; the sources say where each figure comes from."""

    name: str
    flops: dict  # element type -> FLOP/s the kernels can reach (dense)
    bandwidth: float  # bytes/s from device memory
    launch_s: float  # per-kernel launch and barrier overhead
    source: str


# Vendors' datasheet figures. IREE's sm_80 code does not reach the H200's f32 tensor-core
# rates (notes: f32 matmuls run on CUDA cores), so f32 uses the FP32 (non-tensor) peak.
PEAKS = {
    "cuda": TargetPeaks(
        "NVIDIA H200 SXM", {"f32": 67e12, "f16": 989e12, "bf16": 989e12, "i8": 1979e12}, 4.8e12, 5e-6,
        "NVIDIA H200 Tensor Core GPU datasheet (2024): FP32 67 TFLOPS, FP16/BF16 989 TFLOPS dense, 4.8 TB/s HBM3e",
    ),
    "rocm": TargetPeaks(
        "AMD Instinct MI300X", {"f32": 163.4e12, "f16": 1307e12, "bf16": 1307e12, "i8": 2615e12}, 5.3e12, 6e-6,
        "AMD Instinct MI300X data sheet: FP32 vector 163.4 TFLOPS, FP16/BF16 1307 TFLOPS dense, 5.3 TB/s HBM3",
    ),
    "vulkan": TargetPeaks(
        "NVIDIA RTX A6000 (Ampere)", {"f32": 38.7e12, "f16": 77.4e12, "bf16": 77.4e12, "i8": 154.8e12}, 768e9, 10e-6,
        "NVIDIA RTX A6000 datasheet: FP32 38.7 TFLOPS, 768 GB/s GDDR6",
    ),
    "llvm-cpu": TargetPeaks(
        "2-core x86-64 (AVX-512)", {"f32": 2 * 2.5e9 * 32, "f16": 2 * 2.5e9 * 32, "bf16": 2 * 2.5e9 * 64, "i8": 2 * 2.5e9 * 128}, 20e9, 2e-6,
        "2 cores x 2.5 GHz x 32 f32 FLOP/cycle (2 AVX-512 FMA units); ~20 GB/s DRAM per socket share",
    ),
}


@dataclass(frozen=True)
class KernelCost:
    flops: float
    bytes: float
    dtype: str = "f32"
    # The kernel's time measured on the chip (`schedc tune`, via the kernel database): it
    # replaces the roofline, which IREE's kernels can miss by 10-80x.
    measured_s: float | None = None

    def seconds(self, peaks: TargetPeaks) -> float:
        if self.measured_s is not None:
            return self.measured_s
        if not self.flops and not self.bytes:
            return 0.0  # views: no kernel runs
        rate = peaks.flops.get(self.dtype, peaks.flops["f32"])
        return peaks.launch_s + max(self.flops / rate, self.bytes / peaks.bandwidth)


def loop_ranges(op: ir.Operation) -> list[int] | None:
    """A linalg op's static loop ranges, from its indexing maps and operand shapes."""
    if "indexing_maps" not in op.attributes:
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if not maps:
        return None
    ranges: dict[int, int] = {}
    for operand, amap in zip(op.operands, maps):
        if not isinstance(operand.type, ir.ShapedType) or not operand.type.has_static_shape:
            continue
        for expr, size in zip(amap.results, operand.type.shape):
            if isinstance(expr, ir.AffineDimExpr):
                ranges.setdefault(expr.position, size)
    count = maps[0].n_dims
    if len(ranges) < count:
        return None
    return [ranges[d] for d in range(count)]


def _region_arith_ops(op: ir.Operation) -> int:
    count = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name.startswith(("arith.", "math.")):
                    count += 1
    return max(count, 1)


def body_flops(func: ir.Operation) -> tuple[float, str] | None:
    """FLOPs of an executable's function body, and the element type of its largest op."""
    total, dtype = 0.0, "f32"
    biggest = 0

    def visit(op):
        nonlocal total, dtype, biggest
        op = op.operation
        if op.name.startswith("linalg."):
            ranges = loop_ranges(op)
            if ranges is None and op.results and isinstance(op.results[0].type, ir.ShapedType) and op.results[0].type.has_static_shape:
                ranges = list(op.results[0].type.shape)  # fills and named ops without maps
            if ranges:
                iterations = 1
                for r in ranges:
                    iterations *= r
                total += iterations * (0 if op.name == "linalg.fill" else _region_arith_ops(op))
                if iterations > biggest and op.results and isinstance(op.results[0].type, ir.ShapedType):
                    biggest, dtype = iterations, str(op.results[0].type.element_type)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return total, dtype


def dispatch_cost(op: ir.Operation, bodies: dict) -> KernelCost:
    """The cost of a flow.dispatch: bytes of its tensor operands and results; FLOPs from its
    executable's body (`bodies`: `schedc.ir.iree.executable_bodies`), or from IREE's summary
    in its name when the body is not in the module."""
    moved = sum(tensor_bytes(v.type) or 0 for v in list(op.operands) + list(op.results) if isinstance(v.type, ir.RankedTensorType))
    entry = flow_op(op).entry
    if entry in bodies:
        flops, dtype = body_flops(bodies[entry])
        measured = KERNEL_TIME_US.get(bodies[entry])
        return KernelCost(flops, moved, dtype, None if measured is None else measured * 1e-6)
    named = dispatch_name(entry[-1])
    if named:
        iterations = 1
        for r in named.ranges:
            iterations *= r
        factor = 2 if named.kind in ("matmul_like", "matmul", "batch_matmul", "conv") else 1
        return KernelCost(factor * iterations, moved, named.dtype)
    return KernelCost(0.0, moved)


def node_cost(op: ir.Operation, bodies) -> KernelCost:
    """Any kernel-graph node: dispatches by their body; copies and fills by their bytes."""
    if is_dispatch(op):
        return dispatch_cost(op, bodies)
    if flow_op(op).views or not op.name.startswith("flow."):
        return KernelCost(0.0, 0.0)
    moved = sum(tensor_bytes(r.type) or 0 for r in op.results if isinstance(r.type, ir.RankedTensorType))
    return KernelCost(0.0, moved)
