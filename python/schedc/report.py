"""The compile report: what schedc decided per function and what IREE then allocated."""

from __future__ import annotations

import json

from .stream_ir import transient_allocations


def build_report(records: dict, stream_with: str | None, stream_without: str | None, meta: dict) -> dict:
    """Per function: each pass's record, and IREE's transient bytes with and without schedc."""
    functions: dict[str, dict] = {}
    for pass_name, per_function in records.items():
        for function, record in per_function.items():
            functions.setdefault(function, {})[pass_name] = record
    with_schedc = transient_allocations(stream_with) if stream_with else {}
    without = transient_allocations(stream_without) if stream_without else {}
    for function in sorted(set(with_schedc) | set(without)):
        entry = functions.setdefault(function, {})
        entry["iree_transient_bytes"] = {
            "without_schedc": sum(without.get(function, [])),
            "with_schedc": sum(with_schedc.get(function, [])),
            "allocations_without_schedc": without.get(function, []),
            "allocations_with_schedc": with_schedc.get(function, []),
        }
    return {**meta, "functions": functions}


def summary_lines(report: dict) -> list[str]:
    """A short text summary: one line per function that schedc or IREE touched."""
    lines = []
    for function, entry in report["functions"].items():
        parts = [f"@{function}:"]
        order = entry.get("memory-order")
        if order:
            optimum = order["optimum_bytes"]
            parts.append(
                f"{order['kernels']} kernels, order '{order['strategy']}', estimated peak "
                f"{order['program_peak_bytes']:,} B -> {order['peak_bytes']:,} B"
                + (f" (optimum {optimum:,} B)" if optimum is not None else " (optimum unknown)")
                + ";"
            )
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
            parts.append(
                f"arena {planned:,} B ({planned / load:.3f}x LOAD {load:,} B, '{methods}'; IREE's packing {packed:,} B);"
                if load else f"arena {planned:,} B;"
            )
        iree = entry.get("iree_transient_bytes")
        if iree:
            before, after = iree["without_schedc"], iree["with_schedc"]
            ratio = f" ({after / before:.3f}x)" if before else ""
            parts.append(f"IREE transient {before:,} B -> {after:,} B{ratio}")
        lines.append(" ".join(parts))
    return lines


def report_text(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=False) + "\n"


def write_report(path: str, report: dict) -> None:
    from .outputs import write_output

    write_output(path, report_text(report))
