"""The compile report: what schedc decided per function and what IREE then allocated."""

from __future__ import annotations

import json

from schedc.decisions.arena_plan import Slice, iree_layout
from schedc.ir.iree import Pack, user_function_name

IREE_ALIGNMENT = 64  # IREE 3.13's buffer offset alignment, as arena-plan assumes


def iree_arenas(packs: list[Pack]) -> dict[str, list[dict]]:
    """Per function, IREE's own transient slices (its order: the packs of IREE's stream phase
    stopped after schedule-allocation, without schedc; `schedc.ir.iree.packs`) and where its
    layout-slices puts them (`schedc.decisions.arena_plan.iree_layout`). Dynamic sizes count as 0."""
    result: dict[str, list[dict]] = {}
    for pack in packs:
        if pack.function == "util.initializer" or not pack.slices or not pack.allocas:
            continue  # constants, not the transient arena
        lifetimes = [[start, end, size or 0] for start, end, size in pack.slices]
        plan = iree_layout([Slice(*s) for s in lifetimes], IREE_ALIGNMENT)
        result.setdefault(pack.function, []).append({
            "lifetimes": lifetimes,
            "offsets": list(plan.offsets),
            "bytes": plan.size,
            "load_bytes": pack.load,
        })
    return result


# Passes whose record is the module's, not per function.
MODULE_WIDE = ("kernel-config", "cpu-config", "mma-operands", "split-k", "reduction-config", "static-replay-pool", "input")


def build_report(records: dict, with_schedc: dict, without: dict, meta: dict, arenas_without: dict | None = None) -> dict:
    """Per function: each pass's record, IREE's transient bytes with and without schedc
    (`with_schedc`, `without`: each function's transient allocations, as
    `schedc.ir.iree.transient_allocations` reads them; None where a size is not a constant),
    and IREE's own arenas without schedc (`arenas_without`, as `iree_arenas` makes them)."""
    functions: dict[str, dict] = {}
    kernels = records.get("kernel-config", {}).get("module")  # module-wide, not per function
    cpu_plan = records.get("cpu-config", {}).get("module")
    mma = records.get("mma-operands", {}).get("module")
    split_k = records.get("split-k", {}).get("module")
    rows = records.get("reduction-config", {}).get("module")
    pool = records.get("static-replay-pool", {}).get("module")
    triton = dict(records.get("triton-conv", {}))
    triton_unavailable = triton.pop("unavailable", None)  # the module's: why no convolution could take the kernel
    for pass_name, per_function in records.items():
        if pass_name in MODULE_WIDE:
            continue
        if pass_name == "triton-conv":
            per_function = triton
        for function, record in per_function.items():
            functions.setdefault(function, {})[pass_name] = record
    for function in sorted(set(with_schedc) | set(without)):
        entry = functions.setdefault(function, {})
        after, before = with_schedc.get(function, []), without.get(function, [])
        entry["iree_transient_bytes"] = {
            "without_schedc": sum(size or 0 for size in before),
            "with_schedc": sum(size or 0 for size in after),
            "allocations_without_schedc": before,
            "allocations_with_schedc": after,
        }
        dynamic = sum(size is None for size in before + after)
        if dynamic:
            entry["iree_transient_bytes"]["dynamic_allocations"] = dynamic  # not in the sums
    for function, arenas in (arenas_without or {}).items():
        functions.setdefault(function, {})["iree_arenas"] = arenas
    named: dict[str, dict] = {}  # by the names the user wrote (IREE's `f$async` is `f`)
    for function, entry in functions.items():
        named.setdefault(user_function_name(function), {}).update(entry)
    report = {**meta, "functions": named}
    if kernels is not None:
        report["kernels"] = kernels
    if cpu_plan is not None:
        report["cpu_plan"] = cpu_plan
    if mma is not None:
        report["mma_operands"] = mma
    if split_k is not None:
        report["split_k"] = split_k
    if rows is not None:
        report["reduction_config"] = rows
    if pool is not None:
        report["static_replay"] = pool
    if triton_unavailable is not None:
        report["triton_conv_unavailable"] = triton_unavailable
    return report


def triton_conv_line(record: dict) -> str:
    """A function's convolutions in schedc's Triton kernel, those left to IREE and why."""
    taken, left, declined = record.get("convolutions", []), record.get("left_to_iree", []), record.get("declined", [])
    fused, summing = sum("epilogue" in entry for entry in taken), sum(bool(entry.get("parts_summed_in_kernel")) for entry in taken)
    inside = "".join(f", {n} {what}" for n, what in ((fused, "running the elementwise ops after them"), (summing, "summing their parts")) if n)
    line = f"triton-conv: {len(taken)} convolution{'s' if len(taken) != 1 else ''} in schedc's Triton kernel (sm_{record.get('arch')}{inside})"
    reasons = _counts(entry["left_to_iree"].split(" (")[0].split(":")[0] for entry in left)
    if left:
        line += ", " + ", ".join(f"{n} left to IREE's ({reason})" for reason, n in sorted(reasons.items()))
    if declined:
        line += f", {len(declined)} declined ({declined[0]}{' ...' if len(declined) > 1 else ''})"
    return line


def _declined_note(split: dict) -> str:
    """', N declined (the first's op: reason, estimates)' for split-concat's declined splits."""
    declined = split.get("declined", [])
    if not declined:
        return ""
    first = declined[0]
    times = f", {first['kept_us']:,} us kept against {first['split_us']:,} split" if first.get("kept_us") is not None else ""
    return f", {len(declined)} declined ({first['op']}: {first['reason']}{times}{' ...' if len(declined) > 1 else ''})"


def summary_lines(report: dict) -> list[str]:
    """A short text summary: one line per function that schedc or IREE touched."""
    lines = []
    for function, entry in report["functions"].items():
        parts = [f"@{function}:"]
        split = entry.get("split-concat")
        if split:
            parts.append(f"split-concat: {split['reductions_split']} reductions read their concatenation's pieces{_declined_note(split)};")
        shared = entry.get("shared-concat")
        if shared:
            parts.append(f"shared-concat: {shared['concatenations']} concatenations in {len(shared['chains'])} shared buffers "
                         f"({shared['copied_bytes_saved']:,} B of copies gone);")
        order = entry.get("memory-order")
        if order:
            optimum = order["optimum_bytes"]
            parts.append(
                f"{order['kernels']} kernel{'s' if order['kernels'] != 1 else ''}, order '{order['strategy']}', estimated peak "
                f"{order['program_peak_bytes']:,} B -> {order['peak_bytes']:,} B"
                + (f" (optimum {optimum:,} B)" if optimum is not None else _bound_note(order))
                + ";"
            )
        remat = entry.get("remat")
        if remat:
            parts.append(remat_line(remat) + ";")
        conv = entry.get("triton-conv")
        if conv:
            parts.append(triton_conv_line(conv) + ";")
        strided = entry.get("strided-slices")
        if strided:
            n = strided["strided_reads_sliced"]
            parts.append(f"strided-slices: {n} strided read{'s' if n != 1 else ''} of a contraction through a strided slice;")
        expanded = entry.get("expanded-slices")
        if expanded:
            n = expanded["slices_after_reshapes"]
            parts.append(f"expanded-slices: {n} slice{'s' if n != 1 else ''} taken after the reshape that splits {'them' if n != 1 else 'it'};")
        plan = entry.get("stream-schedule")
        if plan:
            wide = [w for w in plan["waves"] if w > 1]
            parts.append(
                f"stream-schedule '{plan['mode']}' on {plan['streams']} streams: {len(wide)} concurrent waves "
                f"(widest {max(wide, default=1)}), estimated {plan['estimated_makespan_us']:.1f} us, "
                f"peak {plan['estimated_peak_bytes']:,} B;"
            )
        arenas = entry.get("arena-plan")
        if arenas:
            load = sum(a["load_bytes"] for a in arenas)
            planned = sum(a["schedc_bytes"] for a in arenas)
            packed = sum(a["iree_bytes"] for a in arenas)
            methods = "+".join(sorted({a["method"] for a in arenas}))
            pinned = sum(a.get("persistent_fills", 0) for a in arenas)
            pinning = f", {pinned} fills run once in {sum(a.get('pinned_bytes', 0) for a in arenas):,} B pinned" if pinned else ""
            parts.append(
                f"arena {planned:,} B ({planned / load:.3f}x LOAD {load:,} B, '{methods}'; IREE's packing {packed:,} B{pinning});"
                if load else f"arena {planned:,} B;"
            )
        iree = entry.get("iree_transient_bytes")
        if iree:
            before, after = iree["without_schedc"], iree["with_schedc"]
            ratio = f" ({after / before:.3f}x)" if before else ""
            parts.append(f"IREE transient {before:,} B -> {after:,} B{ratio}")
        lines.append(" ".join(parts).removesuffix(";"))  # a separator, not an ending
    swapped = (report.get("mma_operands") or {}).get("swapped")
    if swapped:
        plural = len(swapped) != 1
        lines.append(f"mma-operands: {len(swapped)} f16/bf16 contraction{'s' if plural else ''} given {'their' if plural else 'its'} inputs in "
                     "the order IREE's tensor-core code computes correctly")
    if report.get("triton_conv_unavailable"):
        lines.append(f"triton-conv: every convolution stays IREE's: {report['triton_conv_unavailable']}")
    split = (report.get("split_k") or {}).get("split")
    for over in ("input channels", "window rows"):
        those = [s for s in split or () if s.get("over", "input channels") == over]
        if those:
            parts = ", ".join(f"{n} in {p}" for p, n in sorted(_counts(s["parts"] for s in those).items()))
            plural = len(those) != 1
            lines.append(f"split-k: {len(those)} convolution{'s' if plural else ''} split over {'their' if plural else 'its'} {over} ({parts} parts)")
    configured = (report.get("reduction_config") or {}).get("configured")
    if configured:
        plural = len(configured) != 1
        lines.append(f"reduction-config: {len(configured)} row reduction{'s' if plural else ''} given a subgroup per row "
                     f"({', '.join(sorted({c['config'] for c in configured}))})")
    if report.get("input_flags"):  # f64 kept, or an f16 generation module's fusion on cuda (targets.input_flags)
        lines.append(f"IREE flags the input asks for: {' '.join(report['input_flags'])}")
    replay = report.get("static_replay")
    if replay:
        lines.append(replay_line(replay))
    kernels = report.get("kernels")
    if kernels:
        lines.extend(kernel_lines(kernels))
    if report.get("cpu_plan"):
        lines.extend(cpu_plan_lines(report["cpu_plan"]))
    return lines


def _counts(values) -> dict:
    counts: dict = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def replay_line(replay: dict) -> str:
    """static-replay's static buffers, and the transients' shared pool."""
    line = f"static-replay: {replay['static_bytes']:,} B of static buffers"
    shared = {f: n for f, n in replay["functions"].items() if n}
    if not replay["pool_bytes"]:
        return line
    each = ", ".join(f"@{user_function_name(f)} {n:,}" for f, n in shared.items())
    return (f"{line} ({replay['static_bytes_unshared']:,} B with each function's own); the transients of {len(shared)} "
            f"functions ({each} B) share one pool of {replay['pool_bytes']:,} B")


def remat_flops_share(remat: dict) -> float:
    """The FLOPs remat added to a function, over the function's FLOPs."""
    return remat["extra_flops"] / remat["function_flops"] if remat.get("function_flops") else 0.0


def remat_line(remat: dict) -> str:
    """What remat did to one function, in a line."""
    share = remat_flops_share(remat)
    reached = "" if remat["feasible"] else ", not reachable"
    split = ", IREE's multi-use fusions split" if remat.get("split_fusions") else ""
    return (
        f"remat{split}: {remat['copies']} copies ({remat['kernels_recomputed']} kernels, +{share:.1%} FLOPs, "
        f"+{remat['extra_seconds'] * 1e6:.1f} us estimated): peak {remat['peak_bytes_before']:,} B -> "
        f"{remat['peak_bytes_after']:,} B (budget {remat['budget_bytes']:,} B{reached})"
    )


def kernel_lines(kernels: dict) -> list[str]:
    """One line for the kernel configs, then one per dispatch: signature, source, time."""
    sources = {}
    for kernel in kernels["kernels"]:
        sources[kernel["source"]] = sources.get(kernel["source"], 0) + 1
    counts = ", ".join(f"{n} from {source}" for source, n in sorted(sources.items()))
    lines = [f"kernel configs ({kernels['target']} {kernels['arch']}, database {kernels['database'] or 'none'}): {counts}"]
    for kernel in kernels["kernels"]:
        time = f"{kernel['time_us']:.2f} us measured" if kernel["time_us"] is not None else "not measured"
        lines.append(f"  {kernel['dispatch']}: {kernel['signature']}, {kernel['source']}: {kernel['config']}; {time}")
    return lines


def cpu_plan_lines(plan: dict) -> list[str]:
    """One line for cpu-config's plan, then one per convolution or matmul it read."""
    layouts: dict[str, int] = {}
    for op in plan["ops"]:
        layouts[op["layout"]] = layouts.get(op["layout"], 0) + 1
    estimates = ", ".join(f"{mode} {us:,.0f} us" for mode, us in plan["estimates_us"].items())
    counts = ", ".join(f"{n} {layout}" for layout, n in sorted(layouts.items()))
    tiled = sum(bool(op.get("data_tiling")) for op in plan["ops"])
    counts += f"; data tiling on {tiled} of {len(plan['ops'])}" if tiled else ""
    lines = [f"cpu-config (database {plan['database'] or 'none'}): mode {plan['mode']}; {counts or 'no convolutions or matmuls'}"
             + (f"; estimated {estimates}" if plan["ops"] else "")]
    if plan.get("kernels_unavailable"):
        lines.append(f"  schedc's kernels (gemm) not used: {plan['kernels_unavailable']}")
    elif "gemm" in layouts and plan.get("kernel_isa"):
        lines.append(f"  schedc's kernels (gemm) in {'AVX-512' if plan['kernel_isa'] == 'avx512' else 'AVX2'}")
    for op in plan["ops"]:
        time = f"{op['time_us']:,.1f} us ({op['source']})" if op["time_us"] is not None else op["source"]
        lines.append(f"  {op['op']}: {op['layout']}{', data-tiled' if op.get('data_tiling') else ''}, {time}")
    return lines


def report_text(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=False) + "\n"


def _bound_note(order: dict) -> str:
    """Where the exact search did not finish: the proven lower bound and the gap to it."""
    bound = order.get("lower_bound_bytes")
    if not bound:
        return " (optimum unknown)"
    return f" (optimum unknown: at least {bound:,} B, a gap of at most {order['peak_bytes'] / bound - 1:.1%})"
