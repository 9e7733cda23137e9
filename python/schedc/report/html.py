"""The compile report as one self-contained HTML page (no script, no network).

    schedc model.mlir --report=report.html
    schedc report report.json -o report.html

Per function that schedc scheduled: the summary figures as a table (each row's `data-key`
names the figure, its cell holds the number as the JSON report has it), a few sentences that
say where the bytes went, then the charts of `schedc.report.charts`. The JSON report is
embedded as `<script type="application/json" id="schedc-report">` for tools.
"""

from __future__ import annotations

import json
from html import escape

from schedc.report.build import remat_flops_share
from schedc.report.charts import (
    IREE_COLOUR,
    SCHEDC_COLOUR,
    arena_map,
    format_bytes,
    kernel_graph,
    memory_timeline,
    wave_gantt,
)

_STYLE = """
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1180px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 36px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin-bottom: 4px; } p.note { color: #555; margin: 4px 0 8px; }
table.summary { border-collapse: collapse; } table.summary td, table.summary th { padding: 3px 10px;
  border-bottom: 1px solid #eee; text-align: left; } table.summary td { text-align: right;
  font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; } .pair { display: flex; gap: 12px; flex-wrap: wrap; }
.iree { color: %s; } .schedc { color: %s; }
""" % (IREE_COLOUR, SCHEDC_COLOUR)


_MAP_WIDTH = 384  # three arena maps side by side in the page's width


def summary_rows(entry: dict) -> list[tuple[str, str, object]]:
    """(data-key, label, value) for one function's summary table, straight from the report."""
    rows: list[tuple[str, str, object]] = []
    split = entry.get("split-concat")
    if split:
        rows.append(("split_concat.reductions_split", "reductions over a concatenation split (split-concat)", split["reductions_split"]))
    order = entry.get("memory-order")
    if order:
        rows += [
            ("kernels", "kernels", order["kernels"]),
            ("strategy", "memory-order strategy", order["strategy"]),
            ("program_peak_bytes", "estimated peak, IREE's order (B)", order["program_peak_bytes"]),
            ("peak_bytes", "estimated peak, schedc's order (B)", order["peak_bytes"]),
            ("optimum_bytes", "exact optimum (B)", order["optimum_bytes"] if order["optimum_bytes"] is not None else "unknown"),
        ]
    alone = entry.get("iree_arenas")
    if alone:
        rows += [
            ("iree_alone_load_bytes", "IREE alone: LOAD (B)", sum(a["load_bytes"] for a in alone)),
            ("iree_alone_arena_bytes", "IREE alone: its packing (B)", sum(a["bytes"] for a in alone)),
        ]
    arenas = entry.get("arena-plan")
    if arenas:
        rows += [
            ("load_bytes", "schedc's order: LOAD (B)", sum(a["load_bytes"] for a in arenas)),
            ("iree_bytes", "schedc's order, IREE's packing (B)", sum(a["iree_bytes"] for a in arenas)),
            ("schedc_bytes", "schedc's arena (B)", sum(a["schedc_bytes"] for a in arenas)),
            ("method", "arena method", "+".join(sorted({a["method"] for a in arenas}))),
        ]
    remat = entry.get("remat")
    if remat:
        share = remat_flops_share(remat)
        rows += [
            ("remat.budget_bytes", "remat budget (B)", remat["budget_bytes"]),
            ("remat.peak_bytes_before", "estimated peak before remat (B)", remat["peak_bytes_before"]),
            ("remat.peak_bytes_after", "estimated peak after remat (B)", remat["peak_bytes_after"]),
            ("remat.bytes_saved", "bytes saved by remat (B)", remat["peak_bytes_before"] - remat["peak_bytes_after"]),
            ("remat.kernels_recomputed", "kernels recomputed", remat["kernels_recomputed"]),
            ("remat.extra_flops_share", "extra FLOPs", f"{share:.1%}"),
            ("remat.split_fusions", "IREE's multi-use fusions split", "yes" if remat.get("split_fusions") else "no"),
            ("remat.extra_seconds", "estimated extra time (us)", round(remat["extra_seconds"] * 1e6, 1)),
        ]
    plan = entry.get("stream-schedule")
    if plan:
        rows += [
            ("mode", "stream-schedule mode", plan["mode"]),
            ("streams", "streams", plan["streams"]),
            ("concurrent_waves", "concurrent waves", sum(1 for w in plan["waves"] if w > 1)),
            ("estimated_makespan_us", "estimated time (us)", plan["estimated_makespan_us"]),
            ("estimated_peak_bytes", "estimated peak with waves (B)", plan["estimated_peak_bytes"]),
        ]
    iree = entry.get("iree_transient_bytes")
    if iree:
        rows += [
            ("without_schedc", "module's transient bytes, IREE alone", iree["without_schedc"]),
            ("with_schedc", "module's transient bytes, with schedc", iree["with_schedc"]),
        ]
    for name, key in (("memory-order", "pass_seconds"), ("remat", "pass_seconds"), ("stream-schedule", "pass_seconds")):
        if entry.get(name):
            rows.append((f"{name}.{key}", f"{name} pass time (s)", entry[name][key]))
    if arenas:
        rows.append(("arena-plan.plan_seconds", "arena-plan time (s)", round(sum(a["plan_seconds"] for a in arenas), 4)))
    return rows


def _cell(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return escape(str(value))
    return f"{value:,}" if isinstance(value, int) else f"{value:,.4g}"


def _table(entry: dict) -> str:
    rows = "".join(f'<tr data-key="{escape(key)}"><th>{escape(label)}</th><td>{_cell(value)}</td></tr>' for key, label, value in summary_rows(entry))
    return f'<table class="summary">{rows}</table>'


def _story(entry: dict) -> str:
    """Where the bytes went, in words, from the numbers the charts show."""
    sentences = []
    alone, arenas, order = entry.get("iree_arenas"), entry.get("arena-plan"), entry.get("memory-order")
    if alone:
        load, packed = max(a["load_bytes"] for a in alone), max(a["bytes"] for a in alone)
        gaps = f", {packed / load - 1:.0%} above LOAD: the tinted gaps in its map" if load and packed > load else ""
        sentences.append(f'<span class="iree">IREE alone</span> runs the kernels in program order, where at most '
                         f"{format_bytes(load)} are alive at once (LOAD); its layout-slices packs them into {format_bytes(packed)}{gaps}.")
        if order and load > order["program_peak_bytes"]:
            serial = " memory-order asks IREE to run the kernels one at a time." if order.get("serialize") else ""
            sentences.append(f"That LOAD is above the {format_bytes(order['program_peak_bytes'])} the same order needs one kernel at a time "
                             "(the timeline's orange line): IREE also runs independent kernels together in concurrent waves, and a wave keeps "
                             f"all its tensors alive.{serial}")
    if order and order["peak_bytes"] < order["program_peak_bytes"]:
        sentences.append(f"<span class=\"schedc\">schedc</span>'s memory-order runs them in its '{escape(order['strategy'])}' order, "
                         f"which lowers the estimated peak from {format_bytes(order['program_peak_bytes'])} to {format_bytes(order['peak_bytes'])} "
                         "(the blue line under the orange one).")
    remat = entry.get("remat")
    if remat and remat["copies"]:
        reached = "within" if remat["feasible"] else "short of"
        sentences.append(f"remat recomputes {remat['copies']} tensors just before their late readers ({remat['kernels_recomputed']} kernels "
                         f"run again, about {remat['extra_seconds'] * 1e6:.0f} us): the estimated peak falls from "
                         f"{format_bytes(remat['peak_bytes_before'])} to {format_bytes(remat['peak_bytes_after'])}, {reached} its budget "
                         f"of {format_bytes(remat['budget_bytes'])}.")
    if arenas:
        load, planned = max(a["load_bytes"] for a in arenas), max(a["schedc_bytes"] for a in arenas)
        sentences.append(f"arena-plan packs that order's slices into {format_bytes(planned)} for a LOAD of {format_bytes(load)} "
                         f"(IREE's packing of the same slices: {format_bytes(max(a['iree_bytes'] for a in arenas))}).")
        pinned = sum(a.get("persistent_fills", 0) for a in arenas)
        if pinned:
            sentences.append(f"Of it, {format_bytes(sum(a.get('pinned_bytes', 0) for a in arenas))} hold padded buffers pinned so that "
                             f"their {pinned} fills run once, when the module loads, instead of on every call (persistent-fills).")
    iree = entry.get("iree_transient_bytes")
    if iree and iree["without_schedc"]:
        sentences.append(f"The module allocates {format_bytes(iree['with_schedc'])} of transients instead of "
                         f"{format_bytes(iree['without_schedc'])} ({iree['with_schedc'] / iree['without_schedc']:.3f}x).")
    return f'<p class="story">{" ".join(sentences)}</p>' if sentences else ""


def _arena_maps(entry: dict) -> str:
    alone, arenas = entry.get("iree_arenas") or [], entry.get("arena-plan") or []
    if not alone and not arenas:
        return '<p class="note">No transient arena: arena-plan did not run and IREE packed no slices.</p>'
    pairs = []
    for region in range(max(len(alone), len(arenas))):
        left = alone[region] if region < len(alone) else None
        right = arenas[region] if region < len(arenas) else None
        maximum = max([left["bytes"] if left else 0, right["schedc_bytes"] if right else 0, right["iree_bytes"] if right else 0])
        maps = []
        # Three maps split the saving in two: the order (IREE alone -> schedc's order, both
        # packed by IREE), then the packing (IREE's -> schedc's, same slices).
        if left:
            maps.append(arena_map(f"IREE alone: its order, its packing ({left['bytes']:,} B)", left["lifetimes"], left["offsets"],
                                  left["bytes"], left["load_bytes"], maximum, IREE_COLOUR, width=_MAP_WIDTH))
        if right and "lifetimes" in right:
            maps.append(arena_map(f"schedc's order, IREE's packing ({right['iree_bytes']:,} B)", right["lifetimes"],
                                  right["iree_offsets"], right["iree_bytes"], right["load_bytes"], maximum, IREE_COLOUR, width=_MAP_WIDTH))
            maps.append(arena_map(f"schedc's order, schedc's plan ({right['schedc_bytes']:,} B, {right['method']})", right["lifetimes"],
                                  right["schedc_offsets"], right["schedc_bytes"], right["load_bytes"], maximum, SCHEDC_COLOUR, width=_MAP_WIDTH))
        elif not right:
            maps.append('<p class="note">arena-plan did not run: IREE packs this region itself.</p>')
        pairs.append(f'<div class="pair">{"".join(maps)}</div>')
    return "".join(pairs)


def kernel_configs(report: dict) -> dict[str, str]:
    """Each dispatch's kernel config (kernel-config's `report["kernels"]`), by entry point."""
    kernels = (report.get("kernels") or {}).get("kernels", [])
    return {k["dispatch"]: f"{k['config']} ({k['source']})" for k in kernels}


def _choice_table(title: str, note: str, headers: list[str], rows: list[tuple[str, list[str], str]]) -> str:
    """A section of one row per dispatch or op: (its name, its cells (escaped), the row's
    attributes)."""
    body = "".join(f'<tr{attributes}><th>{escape(name)}</th>{"".join(f"<td>{c}</td>" for c in cells)}</tr>' for name, cells, attributes in rows)
    head = "".join(f"<th>{h}</th>" for h in headers)
    return f'<h2>{title}</h2><p class="note">{note}</p><table class="summary kernels"><tr>{head}</tr>{body}</table>'


def _time_cell(time_us, missing: str) -> str:
    return _cell(time_us) if time_us is not None else missing


def _kernel_config_section(report: dict) -> str:
    kernels = report.get("kernels")
    if not kernels or not kernels.get("kernels"):
        return ""
    rows = [(k["dispatch"], [escape(k["signature"]), escape(k["source"]), escape(k["config"]), _time_cell(k["time_us"], "not measured")],
             f' data-dispatch="{escape(k["dispatch"])}"') for k in kernels["kernels"]]
    note = (f'kernel-config for {escape(str(kernels.get("target", "")))} {escape(str(kernels.get("arch", "")))}, '
            f'database {escape(str(kernels.get("database") or "none"))}.')
    return _choice_table("Kernel configs", note, ["dispatch", "signature", "source", "config", "time (us)"], rows)


def _cpu_plan_section(report: dict) -> str:
    plan = report.get("cpu_plan")
    if not plan or not plan.get("ops"):
        return ""
    rows = [(op["op"], [escape(op["layout"]), escape(op["source"]), _time_cell(op["time_us"], "not estimated")], "") for op in plan["ops"]]
    estimates = ", ".join(f"{escape(mode)} {us:,.0f} us" for mode, us in plan["estimates_us"].items())
    note = (f'cpu-config chose mode {escape(plan["mode"])} (estimated {estimates}; flags '
            f'{escape(" ".join(plan["iree_flags"]) or "none")}), database {escape(str(plan.get("database") or "none"))}.')
    return _choice_table("CPU code generation", note, ["op", "layout", "source", "time (us)"], rows)


def _function_section(name: str, entry: dict, configs: dict[str, str] | None = None) -> str:
    parts = [f'<section data-function="{escape(name)}"><h2>@{escape(name)}</h2>', _table(entry), _story(entry)]
    order = entry.get("memory-order")
    parts.append("<h3>Memory timeline</h3>")
    if order and "timeline" in order:
        lines = []
        alone, arenas = entry.get("iree_arenas"), entry.get("arena-plan")
        if alone:
            lines.append(("IREE alone's arena", max(a["bytes"] for a in alone), IREE_COLOUR))
            lines.append(("IREE alone's LOAD", max(a["load_bytes"] for a in alone), "#a0522d"))
        if arenas:
            lines.append(("LOAD", max(a["load_bytes"] for a in arenas), "#c00"))
            lines.append(("schedc's arena", max(a["schedc_bytes"] for a in arenas), SCHEDC_COLOUR))
        if entry.get("stream-schedule"):
            lines.append(("stream-schedule's peak (waves)", entry["stream-schedule"]["estimated_peak_bytes"], "#6a3d9a"))
        parts.append('<p class="note">Transient bytes alive while each kernel runs (schedc\'s model of IREE\'s allocation), '
                     "in IREE's order and in schedc's; the lines are the largest region's LOAD and arenas.</p>")
        parts.append(f'<div class="scroll">{memory_timeline(order["timeline"], lines)}</div>')
    else:
        parts.append('<p class="note">memory-order did not run: no timeline.</p>')
    remat = entry.get("remat")
    if remat and remat["recomputed"]:
        rows = "".join(f'<tr><td>{escape(r["label"])}</td><td>{_cell(r["bytes"])}</td></tr>' for r in remat["recomputed"])
        parts.append(f'<h3>Recomputed tensors</h3><table class="summary"><tr><th>made by</th><th>bytes</th></tr>{rows}</table>')
    parts.append("<h3>Arena maps</h3>")
    parts.append('<p class="note">Each transient slice of an execution region as a rectangle: arena offset (up) against '
                 "lifetime (across). Tinted: bytes of the arena no slice holds at that time. From left to right: what IREE does "
                 "alone, what IREE's packing makes of schedc's order, and schedc's plan for it; all on one byte scale.</p>")
    parts.append(_arena_maps(entry))
    parts.append("<h3>Wave Gantt</h3>")
    plan = entry.get("stream-schedule")
    if plan:
        parts.append(f'<p class="note">stream-schedule\'s kernels on {plan["streams"]} streams over estimated time '
                     f'(roofline model for {escape(plan["target"])}); shaded bands are alternate waves, colours the waves.</p>')
        parts.append(f'<div class="scroll">{wave_gantt(plan)}</div>')
    else:
        parts.append('<p class="note">stream-schedule did not run, so IREE runs the kernels one at a time in schedc\'s order; '
                     'add it to the pipeline (--passes="memory-order,stream-schedule,arena-plan") to see waves.</p>')
    parts.append("<h3>Kernel graph</h3>")
    graph = (plan or {}).get("graph") or (order or {}).get("graph")
    if graph:
        how = "coloured by wave" if plan and plan.get("graph") else "coloured by position in schedc's order (light: early)"
        parts.append(f'<p class="note">Kernels in layers (longest path from the inputs), sized by the bytes they write, {how}; '
                     "hover a kernel for its dispatch and tensors.</p>")
        parts.append(f'<div class="scroll">{kernel_graph(graph, configs=configs)}</div>')
    else:
        parts.append('<p class="note">No kernel graph: neither memory-order nor stream-schedule ran.</p>')
    parts.append("</section>")
    return "".join(parts)


def render_html(report: dict) -> str:
    """The whole page for a JSON report (as `schedc.report.build_report` makes it)."""
    functions = report.get("functions", {})
    scheduled = {n: e for n, e in functions.items() if any(k in e for k in ("memory-order", "remat", "arena-plan", "stream-schedule"))}
    others = {n: e for n, e in functions.items() if n not in scheduled}
    header = (f"<h1>schedc report</h1><p>target <b>{escape(str(report.get('target', '?')))}</b>"
              f" ({escape(str(report.get('arch', '')))}), pipeline <code>{escape(str(report.get('pipeline', '')) or '(IREE alone)')}</code></p>")
    configs = kernel_configs(report)
    sections = [_function_section(name, entry, configs) for name, entry in scheduled.items()]
    if others:
        rows = "".join(f'<tr data-function="{escape(n)}"><th>@{escape(n)}</th><td>{_cell(e.get("iree_transient_bytes", {}).get("without_schedc", 0))}</td>'
                       f'<td>{_cell(e.get("iree_transient_bytes", {}).get("with_schedc", 0))}</td></tr>' for n, e in others.items())
        sections.append(f'<h2>Other functions</h2><table class="summary"><tr><th></th><th>transient B, IREE alone</th><th>with schedc</th></tr>{rows}</table>')
    if not sections:
        sections.append('<p class="note">The report holds no function.</p>')
    sections.append(_kernel_config_section(report))
    sections.append(_cpu_plan_section(report))
    data = json.dumps(report, separators=(",", ":")).replace("<", "\\u003c")  # nothing in it can end the script
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>schedc report</title>"
            f"<style>{_STYLE}</style></head><body>{header}{''.join(sections)}"
            f'<script type="application/json" id="schedc-report">{data}</script></body></html>\n')
