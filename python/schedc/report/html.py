"""The compile report as one self-contained HTML page (no script, no network).

    schedc model.mlir --report=report.html
    schedc report report.json -o report.html

Per function that schedc scheduled: a short table (the module's transient bytes and the
estimated peak, for IREE alone, with schedc, their lower bound and the saving), a few sentences
that say where the bytes went, the full table of figures folded below it (each row's
`data-key` names the figure; a byte cell's `data-value` holds it exactly as the JSON report
has it), then the charts of `schedc.report.charts`. Every byte figure of the page is in one
unit, chosen by the model's size. The terms the page uses are defined once, at its end, and
linked where they first appear. The JSON report is embedded as
`<script type="application/json" id="schedc-report">` for tools.
"""

from __future__ import annotations

import json
from html import escape

from schedc.report.build import remat_flops_share
from schedc.report.charts import (
    IREE_COLOUR,
    LOAD_COLOUR,
    SCHEDC_COLOUR,
    Line,
    Unit,
    arena_map,
    kernel_graph,
    memory_timeline,
    unit_for,
    wave_gantt,
)

_STYLE = """
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1180px; line-height: 1.4; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 36px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin-bottom: 4px; } p.note { color: #555; margin: 4px 0 8px; }
table.summary { border-collapse: collapse; } table.summary td, table.summary th { padding: 3px 10px;
  border-bottom: 1px solid #eee; text-align: left; } table.summary td { text-align: right;
  font-variant-numeric: tabular-nums; }
table.headline th[scope=col] { text-align: right; } table.headline td.saving { font-weight: bold; }
details { margin: 8px 0; } summary { cursor: pointer; color: #444; }
svg { max-width: 100%; height: auto; display: block; } .pair { display: flex; gap: 12px; flex-wrap: wrap; }
.pair svg { flex: 1 1 300px; max-width: 384px; }
a.term { color: inherit; text-decoration: underline dotted; }
dl.glossary dt { font-weight: bold; margin-top: 6px; } dl.glossary dd { margin-left: 18px; }
.iree { color: @IREE@; } .schedc { color: @SCHEDC@; }
""".replace("@IREE@", IREE_COLOUR).replace("@SCHEDC@", SCHEDC_COLOUR)


# The words the page uses that a reader may not know, each defined once in the page's glossary.
GLOSSARY: dict[str, tuple[str, str]] = {
    "kernel": ("kernel", "one step of the function's graph: a dispatch (compiled code for the GPU or CPU) or one of "
                         "IREE's tensor ops (a fill, a copy, a view)."),
    "transient": ("transient", "a tensor that lives only during a call: written by one kernel and read by later ones, "
                               "neither an input, a result nor a weight."),
    "peak": ("peak", "the most transient bytes alive at once while the kernels run in a given order: the least memory that "
                     "order can run in. schedc estimates it from the kernel graph."),
    "lower-bound": ("lower bound", "the lowest peak any order of these kernels can have (memory-order's exact optimum, where "
                                   "its search finished). No order and no packing allocates less, without recomputation."),
    "region": ("execution region", "a stretch of the function that IREE submits as one command buffer; each has its own arena."),
    "slice": ("slice", "one transient's bytes in an arena, alive from the kernel that writes it to the last that reads it."),
    "arena": ("arena", "the one buffer of an execution region that holds its transients, each slice at an offset. Its size "
                       "is what the module allocates."),
    "load": ("LOAD", "the most slice bytes alive at once in an execution region, from the slices' lifetimes: no packing of "
                     "those slices can be smaller than it."),
    "layout-slices": ("layout-slices", "IREE's own packing of a region's slices into its arena (its stream pass "
                                       "layout-slices), used where schedc's arena-plan does not run."),
    "memory-order": ("memory-order", "schedc's pass that reorders the kernels for the lowest estimated peak."),
    "arena-plan": ("arena-plan", "schedc's pass that places every slice of a region itself, as close to LOAD as it can."),
    "remat": ("remat", "schedc's pass that recomputes a tensor just before a late reader instead of keeping it alive, to "
                       "bring the peak under a budget."),
    "stream-schedule": ("stream-schedule", "schedc's pass that decides which kernels run concurrently, within a memory budget."),
    "wave": ("wave", "kernels that run at the same time, on different streams; all their tensors are alive together."),
    "stream": ("stream", "a queue of kernels that run one after another; kernels on different streams may run concurrently."),
    "fill": ("fill", "a kernel that writes a constant, such as the zeroed border of a padded convolution input."),
}


class Terms:
    """Links each term to its definition where the page first uses it, and remembers which
    terms the page used (the glossary defines those)."""

    def __init__(self):
        self.used: list[str] = []

    def __call__(self, key: str, text: str | None = None) -> str:
        word = text or GLOSSARY[key][0]
        if key in self.used:
            return escape(word)
        self.used.append(key)
        return f'<a class="term" href="#term-{key}">{escape(word)}</a>'

    def glossary(self) -> str:
        rows = "".join(f'<dt id="term-{key}">{escape(GLOSSARY[key][0])}</dt><dd>{escape(GLOSSARY[key][1])}</dd>'
                       for key in GLOSSARY if key in self.used)
        return f'<h2 id="terms">Terms</h2><dl class="glossary">{rows}</dl>' if rows else ""


def _byte_figures(entry: dict) -> list[int]:
    return [v for _, label, v in summary_rows(entry) if isinstance(v, int) and _is_bytes(label)]


def page_unit(report: dict) -> Unit:
    """The page's one byte unit, for the largest byte figure of any function."""
    largest = max((f for entry in report.get("functions", {}).values() for f in _byte_figures(entry)), default=0)
    return unit_for(largest)


BYTES = " [bytes]"  # summary_rows' labels of byte figures end in this (the page shows its unit instead)


def _is_bytes(label: str) -> bool:
    return label.endswith(BYTES)


def summary_rows(entry: dict) -> list[tuple[str, str, object]]:
    """(data-key, label, value) for one function's full table, straight from the report; a
    byte figure's label ends in BYTES."""
    rows: list[tuple[str, str, object]] = []
    split = entry.get("split-concat")
    if split:
        rows.append(("split_concat.reductions_split", "reductions over a concatenation split (split-concat)", split["reductions_split"]))
        for i, declined in enumerate(split.get("declined", [])):
            times = f"; the module's estimate {declined['kept_us']:,} us kept, {declined['split_us']:,} us split" if declined.get("kept_us") is not None else ""
            rows.append((f"split_concat.declined.{i}", f"split declined: {declined['op']} in {declined['pieces']} pieces", f"{declined['reason']}{times}"))
    shared = entry.get("shared-concat")
    if shared:
        rows.append(("shared_concat.concatenations", "concatenations sharing one buffer per chain (shared-concat)",
                     f"{shared['concatenations']} in {len(shared['chains'])} chains"))
        rows.append(("shared_concat.copied_bytes_saved", "copies into concatenations gone" + BYTES, shared["copied_bytes_saved"]))
    order = entry.get("memory-order")
    if order:
        rows += [
            ("kernels", "kernels", order["kernels"]),
            ("strategy", "memory-order strategy", order["strategy"]),
            ("program_peak_bytes", "estimated peak, IREE's order" + BYTES, order["program_peak_bytes"]),
            ("peak_bytes", "estimated peak, schedc's order" + BYTES, order["peak_bytes"]),
            ("optimum_bytes", "exact optimum" + BYTES, order["optimum_bytes"] if order["optimum_bytes"] is not None else "unknown"),
        ]
        if order["optimum_bytes"] is None and order.get("lower_bound_bytes"):
            rows.append(("lower_bound_bytes", "proven lower bound on any order's peak" + BYTES, order["lower_bound_bytes"]))
    alone = entry.get("iree_arenas")
    if alone:
        rows += [
            ("iree_alone_load_bytes", "IREE alone: LOAD" + BYTES, sum(a["load_bytes"] for a in alone)),
            ("iree_alone_arena_bytes", "IREE alone: its packing" + BYTES, sum(a["bytes"] for a in alone)),
        ]
    arenas = entry.get("arena-plan")
    if arenas:
        rows += [
            ("load_bytes", "schedc's order: LOAD" + BYTES, sum(a["load_bytes"] for a in arenas)),
            ("iree_bytes", "schedc's order, IREE's packing" + BYTES, sum(a["iree_bytes"] for a in arenas)),
            ("schedc_bytes", "schedc's arena" + BYTES, sum(a["schedc_bytes"] for a in arenas)),
            ("method", "arena method", "+".join(sorted({a["method"] for a in arenas}))),
        ]
    remat = entry.get("remat")
    if remat:
        share = remat_flops_share(remat)
        rows += [
            ("remat.budget_bytes", "remat budget" + BYTES, remat["budget_bytes"]),
            ("remat.peak_bytes_before", "estimated peak before remat" + BYTES, remat["peak_bytes_before"]),
            ("remat.peak_bytes_after", "estimated peak after remat" + BYTES, remat["peak_bytes_after"]),
            ("remat.bytes_saved", "bytes saved by remat" + BYTES, remat["peak_bytes_before"] - remat["peak_bytes_after"]),
            ("remat.kernels_recomputed", "kernels recomputed", remat["kernels_recomputed"]),
            ("remat.extra_flops_share", "extra FLOPs", f"{share:.1%}"),
            ("remat.split_fusions", "IREE's multi-use fusions split", "yes" if remat.get("split_fusions") else "no"),
            ("remat.extra_seconds", "estimated extra time (us)", round(remat["extra_seconds"] * 1e6, 1)),
        ]
    conv = entry.get("triton-conv")
    if conv:
        rows += [
            ("triton_conv.convolutions", "convolutions in schedc's Triton kernel (triton-conv)", len(conv["convolutions"])),
            ("triton_conv.left_to_iree", "convolutions the rule left to IREE's kernels", len(conv.get("left_to_iree", []))),
        ]
    plan = entry.get("stream-schedule")
    if plan:
        rows += [
            ("mode", "stream-schedule mode", plan["mode"]),
            ("streams", "streams", plan["streams"]),
            ("concurrent_waves", "concurrent waves", sum(1 for w in plan["waves"] if w > 1)),
            ("estimated_makespan_us", "estimated time (us)", plan["estimated_makespan_us"]),
            ("estimated_peak_bytes", "estimated peak with waves" + BYTES, plan["estimated_peak_bytes"]),
        ]
    iree = entry.get("iree_transient_bytes")
    if iree:
        rows += [
            ("without_schedc", "module's transient bytes, IREE alone" + BYTES, iree["without_schedc"]),
            ("with_schedc", "module's transient bytes, with schedc" + BYTES, iree["with_schedc"]),
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


def _byte_cell(value, unit: Unit, css: str = "") -> str:
    """A byte figure in the page's unit; its exact bytes in `data-value` and on hover."""
    klass = f' class="{css}"' if css else ""
    if not isinstance(value, int):
        return f"<td{klass}>{escape(str(value))}</td>"
    return f'<td{klass} data-value="{value}" title="{value:,} B">{escape(unit.text(value))}</td>'


def _full_table(entry: dict, unit: Unit) -> str:
    rows = []
    for key, label, value in summary_rows(entry):
        if _is_bytes(label):
            rows.append(f'<tr data-key="{escape(key)}"><th>{escape(label.removesuffix(BYTES))}</th>{_byte_cell(value, unit)}</tr>')
        else:
            rows.append(f'<tr data-key="{escape(key)}"><th>{escape(label)}</th><td data-value="{escape(str(value))}">{_cell(value)}</td></tr>')
    return (f'<details><summary>All figures ({len(rows)})</summary><table class="summary full">{"".join(rows)}</table></details>')


def lower_bound(entry: dict) -> int | None:
    """The least peak any order of the function's kernels has (memory-order's optimum, where
    its search finished); None where it is unknown, or where remat changed the kernels."""
    order = entry.get("memory-order")
    if not order or entry.get("remat") or order.get("optimum_bytes") is None:
        return None
    return order["optimum_bytes"]


def headline_rows(entry: dict) -> list[tuple[str, int, int, int | None]]:
    """The short table: (key, IREE alone, with schedc, lower bound) per row, in bytes: the
    module's transient allocation ("transient") and the estimated peak ("peak")."""
    rows = []
    bound = lower_bound(entry)
    iree = entry.get("iree_transient_bytes")
    if iree and iree["without_schedc"]:
        rows.append(("transient", iree["without_schedc"], iree["with_schedc"], bound))
    order = entry.get("memory-order")
    if order:
        remat, plan = entry.get("remat"), entry.get("stream-schedule")
        after = remat["peak_bytes_after"] if remat else order["peak_bytes"]
        if plan and any(w > 1 for w in plan["waves"]):  # concurrent waves keep more alive
            after = plan["estimated_peak_bytes"]
        rows.append(("peak", order["program_peak_bytes"], after, bound))
    return rows


def _saving(before: int, after: int) -> str:
    if not before:
        return ""
    return f"{1 - after / before:.0%} less ({after / before:.3f}x)" if after < before else ("none" if after == before else f"{after / before - 1:.0%} more")


def _headline(entry: dict, unit: Unit, terms: Terms) -> str:
    rows = headline_rows(entry)
    if not rows:
        return ""
    body = []
    for key, alone, schedc, bound in rows:
        label = f"{terms('transient')} bytes the module allocates" if key == "transient" else f"estimated {terms('peak')} of live tensors"
        bound_cell = _byte_cell(bound, unit) if bound is not None else '<td title="not proven: the exact search did not finish, or remat changed the kernels">—</td>'
        body.append(f'<tr data-key="headline.{key}"><th>{label}</th>{_byte_cell(alone, unit)}{_byte_cell(schedc, unit)}'
                    f'{bound_cell}<td class="saving">{escape(_saving(alone, schedc))}</td></tr>')
    head = (f'<tr><th></th><th scope="col" class="iree">IREE alone</th><th scope="col" class="schedc">with schedc</th>'
            f'<th scope="col">{terms("lower-bound")}</th><th scope="col">saving</th></tr>')
    return f'<table class="summary headline">{head}{"".join(body)}</table>'


def _story(entry: dict, unit: Unit, terms: Terms) -> str:
    """Where the bytes went, in words, from the numbers the charts show."""
    sentences = []
    alone, arenas, order = entry.get("iree_arenas"), entry.get("arena-plan"), entry.get("memory-order")
    plan = entry.get("stream-schedule")
    concurrent = sum(1 for w in plan["waves"] if w > 1) if plan else 0
    if alone:
        load, packed = max(a["load_bytes"] for a in alone), max(a["bytes"] for a in alone)
        gaps = f", {packed / load - 1:.0%} above {terms('load')}: the tinted gaps in its map" if load and packed > load else ""
        sentences.append(f'<span class="iree">IREE alone</span> runs the {terms("kernel", "kernels")} in program order, where at most '
                         f"{unit.text(load)} are alive at once ({terms('load')}); its {terms('layout-slices')} packs them into "
                         f"{unit.text(packed)}{gaps}.")
        if order and load > order["program_peak_bytes"]:
            sentences.append(f"That LOAD is above the {unit.text(order['program_peak_bytes'])} the same order needs one kernel at a "
                             f"time (the timeline's orange line): IREE also runs independent kernels together in concurrent "
                             f"{terms('wave', 'waves')}, and a wave keeps all its tensors alive.")
    if order and order["peak_bytes"] < order["program_peak_bytes"]:
        sentences.append(f"<span class=\"schedc\">schedc</span>'s {terms('memory-order')} runs them in its '{escape(order['strategy'])}' "
                         f"order, which lowers the estimated {terms('peak')} from {unit.text(order['program_peak_bytes'])} to "
                         f"{unit.text(order['peak_bytes'])} (the blue line under the orange one).")
    elif order:
        sentences.append(f"{terms('memory-order')} found no order with a lower estimated {terms('peak')} than program order's "
                         f"{unit.text(order['program_peak_bytes'])}, so it keeps it (the blue and orange lines are one).")
    if concurrent:
        sentences.append(f"{terms('stream-schedule')} then runs {concurrent} concurrent {terms('wave', 'waves')} on "
                         f"{plan['streams']} {terms('stream', 'streams')} (its estimated peak with waves: "
                         f"{unit.text(plan['estimated_peak_bytes'])}), trading memory for time.")
    elif order and order.get("serialize"):
        sentences.append("memory-order asks IREE to run the kernels one at a time, in its order.")
    elif order and order.get("waves_load_bytes") is not None:
        sentences.append(f"IREE's concurrent {terms('wave', 'waves')} of these kernels need no more bytes at once "
                         f"({unit.text(order['waves_load_bytes'])}) than the order one at a time, so they stay: "
                         "no barrier between every two kernels.")
    remat = entry.get("remat")
    if remat and remat["copies"]:
        reached = "within" if remat["feasible"] else "short of"
        sentences.append(f"{terms('remat')} recomputes {remat['copies']} tensors just before their late readers "
                         f"({remat['kernels_recomputed']} kernels run again, about {remat['extra_seconds'] * 1e6:.0f} us): the "
                         f"estimated peak falls from {unit.text(remat['peak_bytes_before'])} to {unit.text(remat['peak_bytes_after'])}, "
                         f"{reached} its budget of {unit.text(remat['budget_bytes'])}.")
    if arenas:
        load, planned = max(a["load_bytes"] for a in arenas), max(a["schedc_bytes"] for a in arenas)
        sentences.append(f"{terms('arena-plan')} packs that order's {terms('slice', 'slices')} into an {terms('arena')} of "
                         f"{unit.text(planned)} for a LOAD of {unit.text(load)} (IREE's packing of the same slices: "
                         f"{unit.text(max(a['iree_bytes'] for a in arenas))}).")
        pinned = sum(a.get("persistent_fills", 0) for a in arenas)
        if pinned:
            sentences.append(f"Of it, {unit.text(sum(a.get('pinned_bytes', 0) for a in arenas))} hold padded buffers pinned so that "
                             f"their {pinned} {terms('fill', 'fills')} run once, when the module loads, instead of on every call "
                             "(persistent-fills).")
    iree = entry.get("iree_transient_bytes")
    if iree and iree["without_schedc"] and iree["with_schedc"] == iree["without_schedc"]:
        sentences.append(f"The module allocates {unit.text(iree['with_schedc'])} of {terms('transient', 'transients')}, as IREE alone does.")
    elif iree and iree["without_schedc"]:
        sentences.append(f"The module allocates {unit.text(iree['with_schedc'])} of {terms('transient', 'transients')} instead of "
                         f"{unit.text(iree['without_schedc'])} ({iree['with_schedc'] / iree['without_schedc']:.3f}x).")
    return f'<p class="story">{" ".join(sentences)}</p>' if sentences else ""


def _arena_maps(entry: dict, unit: Unit) -> str:
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
            maps.append(arena_map(f"IREE alone: {unit.text(left['bytes'])}", left["lifetimes"], left["offsets"],
                                  left["bytes"], left["load_bytes"], maximum, IREE_COLOUR, unit))
        if right and "lifetimes" in right:
            maps.append(arena_map(f"schedc's order, IREE's packing: {unit.text(right['iree_bytes'])}", right["lifetimes"],
                                  right["iree_offsets"], right["iree_bytes"], right["load_bytes"], maximum, IREE_COLOUR, unit))
            maps.append(arena_map(f"schedc's plan ({right['method']}): {unit.text(right['schedc_bytes'])}", right["lifetimes"],
                                  right["schedc_offsets"], right["schedc_bytes"], right["load_bytes"], maximum, SCHEDC_COLOUR, unit))
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
    if plan.get("kernels_unavailable"):
        note += f' schedc\'s kernels (gemm) not used: {escape(plan["kernels_unavailable"])}.'
    return _choice_table("CPU code generation", note, ["op", "layout", "source", "time (us)"], rows)


def _timeline_lines(entry: dict) -> list[Line]:
    lines = []
    alone, arenas = entry.get("iree_arenas"), entry.get("arena-plan")
    if alone:
        lines.append(Line("IREE alone's arena", max(a["bytes"] for a in alone), IREE_COLOUR))
        lines.append(Line("IREE alone's LOAD", max(a["load_bytes"] for a in alone), "#a0522d"))
    if arenas:
        lines.append(Line("LOAD", max(a["load_bytes"] for a in arenas), LOAD_COLOUR))
        lines.append(Line("schedc's arena", max(a["schedc_bytes"] for a in arenas), SCHEDC_COLOUR))
    if entry.get("stream-schedule"):
        lines.append(Line("peak with waves", entry["stream-schedule"]["estimated_peak_bytes"], "#6a3d9a"))
    return lines


def _function_section(name: str, entry: dict, unit: Unit, terms: Terms, configs: dict[str, str] | None = None) -> str:
    parts = [f'<section data-function="{escape(name)}"><h2>@{escape(name)}</h2>', _headline(entry, unit, terms),
             _story(entry, unit, terms), _full_table(entry, unit)]
    order = entry.get("memory-order")
    parts.append("<h3>Memory timeline</h3>")
    if order and "timeline" in order:
        parts.append(f'<p class="note">{terms("transient", "Transient")} bytes alive while each kernel runs (schedc\'s model of '
                     f"IREE's allocation), in IREE's order and in schedc's; the lines are the largest "
                     f"{terms('region')}'s LOAD and arenas.</p>")
        parts.append(memory_timeline(order["timeline"], _timeline_lines(entry), unit))
    else:
        parts.append('<p class="note">memory-order did not run: no timeline.</p>')
    remat = entry.get("remat")
    if remat and remat["recomputed"]:
        rows = "".join(f'<tr><td>{escape(r["label"])}</td>{_byte_cell(r["bytes"], unit)}</tr>' for r in remat["recomputed"])
        parts.append(f'<h3>Recomputed tensors</h3><table class="summary"><tr><th>made by</th><th>size</th></tr>{rows}</table>')
    parts.append("<h3>Arena maps</h3>")
    parts.append(f'<p class="note">Each {terms("slice")} of an execution region as a rectangle: arena offset (up) against '
                 "lifetime (across). Tinted: bytes of the arena no slice holds at that time. From left to right: what IREE does "
                 "alone, what IREE's packing makes of schedc's order, and schedc's plan for it; all on one byte scale.</p>")
    parts.append(_arena_maps(entry, unit))
    parts.append("<h3>Wave Gantt</h3>")
    plan = entry.get("stream-schedule")
    if plan:
        parts.append(f'<p class="note">stream-schedule\'s kernels on {plan["streams"]} {terms("stream", "streams")} over '
                     f'estimated time (roofline model for {escape(plan["target"])}); shaded bands are alternate '
                     f'{terms("wave", "waves")}, colours the waves.</p>')
        parts.append(wave_gantt(plan))
    else:
        parts.append('<p class="note">stream-schedule did not run, so IREE runs the kernels one at a time in schedc\'s order; '
                     'add it to the pipeline (--passes="memory-order,stream-schedule,arena-plan") to see waves.</p>')
    parts.append("<h3>Kernel graph</h3>")
    graph = (plan or {}).get("graph") or (order or {}).get("graph")
    if graph:
        how = "coloured by wave" if plan and plan.get("graph") else "coloured by position in schedc's order (light: early)"
        parts.append(f'<p class="note">Kernels in layers from the inputs down (a kernel below the ones it reads), sized by the '
                     f"bytes they write, {how}; #N is dispatch N. Hover a kernel for its dispatch and tensors.</p>")
        parts.append(kernel_graph(graph, configs=configs))
    else:
        parts.append('<p class="note">No kernel graph: neither memory-order nor stream-schedule ran.</p>')
    parts.append("</section>")
    return "".join(parts)


def render_html(report: dict) -> str:
    """The whole page for a JSON report (as `schedc.report.build_report` makes it)."""
    functions = report.get("functions", {})
    # The module's initializer (what runs once at load: the constant work cpu-config leaves
    # there) gets a row of its own below, not a section with the model's charts.
    scheduled = {n: e for n, e in functions.items() if n != "util.initializer"
                 and any(k in e for k in ("memory-order", "remat", "arena-plan", "stream-schedule"))}
    others = {n: e for n, e in functions.items() if n not in scheduled}
    unit = page_unit(report)
    terms = Terms()
    header = (f"<h1>schedc report</h1><p>target <b>{escape(str(report.get('target', '?')))}</b>"
              f" ({escape(str(report.get('arch', '')))}), pipeline <code>{escape(str(report.get('pipeline', '')) or '(IREE alone)')}</code>;"
              f' sizes in {unit.name} (hover a figure for its bytes); <a href="#terms">terms</a> at the end.</p>')
    configs = kernel_configs(report)
    sections = [_function_section(name, entry, unit, terms, configs) for name, entry in scheduled.items()]
    if others:
        rows = "".join(f'<tr data-function="{escape(n)}"><th>@{escape(n)}</th>{_byte_cell(e.get("iree_transient_bytes", {}).get("without_schedc", 0), unit)}'
                       f'{_byte_cell(e.get("iree_transient_bytes", {}).get("with_schedc", 0), unit)}</tr>' for n, e in others.items())
        sections.append(f'<h2>Other functions</h2><table class="summary"><tr><th></th><th>{terms("transient", "transient")} bytes, IREE alone</th>'
                        f'<th>with schedc</th></tr>{rows}</table>')
    if not sections:
        sections.append('<p class="note">The report holds no function.</p>')
    sections.append(_kernel_config_section(report))
    sections.append(_cpu_plan_section(report))
    sections.append(terms.glossary())
    data = json.dumps(report, separators=(",", ":")).replace("<", "\\u003c")  # nothing in it can end the script
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
            f"<title>schedc report</title><style>{_STYLE}</style></head><body>{header}{''.join(sections)}"
            f'<script type="application/json" id="schedc-report">{data}</script></body></html>\n')
