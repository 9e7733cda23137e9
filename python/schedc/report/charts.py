"""The report's pictures as plain SVG text, from the JSON report's plain data.

Four charts per function (see `schedc.report.html` for the page around them):
- `memory_timeline`: live transient bytes while each kernel runs, IREE's order and schedc's,
  as step lines, with LOAD and the arena sizes as horizontal lines;
- `arena_map`: each transient slice of one execution region as a rectangle (arena offset
  against lifetime); unused bytes under the arena's top are tinted, so gaps show at a glance;
- `wave_gantt`: kernels on streams over estimated time, each wave shaded;
- `kernel_graph`: the dispatch DAG in layers (longest path from the inputs), nodes sized by
  the bytes they write and coloured by wave (or by position in schedc's order).

No script: hover text is SVG `<title>`, which every browser shows as a tooltip. Every chart is
an `<svg>` with a `data-chart` attribute naming it, for tests and tools. Sizes stay small for
500 kernels: one path per line series, one element per kernel or slice.
"""

from __future__ import annotations

import math
from html import escape

IREE_COLOUR = "#d9822b"  # IREE alone: orange
SCHEDC_COLOUR = "#2b6cd9"  # schedc: blue
GAP_COLOUR = "#fbe3e3"  # unused arena bytes
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf")


def format_bytes(size: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(size) >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} B"


def nice_ticks(maximum: float, count: int = 5) -> list[float]:
    """Round tick values from 0 up to `maximum` (1, 2 or 5 times a power of ten apart)."""
    if maximum <= 0:
        return [0.0]
    raw = maximum / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(maximum / step) + 1)]


def _svg(chart: str, width: float, height: float, body: list[str], label: str) -> str:
    return (
        f'<svg data-chart="{chart}" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}" font-family="sans-serif" font-size="11">'
        + "".join(body)
        + "</svg>"
    )


def _title(text: str) -> str:
    return f"<title>{escape(text)}</title>"


def _y_axis(body: list[str], left: float, top: float, plot_h: float, plot_w: float, maximum: float) -> None:
    """Byte ticks and grid lines on the left of a plot whose y grows downwards from `top`."""
    for tick in nice_ticks(maximum):
        y = top + plot_h - plot_h * tick / maximum
        body.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        body.append(f'<text x="{left - 4:.1f}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{format_bytes(tick)}</text>')


def _h_line(body, left, width, y, colour, text, dash="6 4", slot=0) -> None:
    """A horizontal line across a plot, labelled at its right end (`slot` moves the label left,
    so lines at about the same height keep readable labels)."""
    body.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + width:.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="{dash}"/>')
    body.append(f'<text x="{left + width - 4 - slot * 190:.1f}" y="{y - 4:.1f}" text-anchor="end" fill="{colour}">{escape(text)}</text>')


def memory_timeline(timeline: dict, lines: list[tuple[str, int, str]], width: int = 1100, height: int = 320) -> str:
    """`timeline`: {"iree": {"kernels": [...], "live_bytes": [...]}, "schedc": {...}} as
    memory-order records it; `lines`: (label, bytes, colour) drawn across the chart."""
    left, right, top, bottom = 80, 20, 28, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    # schedc's order first, so IREE's (dashed) stays visible where the two are the same.
    series = [("schedc's order", timeline["schedc"], SCHEDC_COLOUR, ""), ("IREE's order", timeline["iree"], IREE_COLOUR, "5 3")]
    steps = max(len(s["live_bytes"]) for _, s, _, _ in series) or 1
    maximum = max([max(s["live_bytes"], default=0) for _, s, _, _ in series] + [size for _, size, _ in lines] + [1]) * 1.08
    body: list[str] = []
    _y_axis(body, left, top, plot_h, plot_w, maximum)

    def x(i: float) -> float:
        return left + plot_w * i / steps

    def y(size: float) -> float:
        return top + plot_h - plot_h * size / maximum

    for name, data, colour, dash in series:
        path = [f"M{x(0):.1f},{y(0):.1f}"]
        for i, size in enumerate(data["live_bytes"]):
            path.append(f"V{y(size):.1f}H{x(i + 1):.1f}")
        path.append(f"V{y(0):.1f}")
        peak = max(data["live_bytes"], default=0)
        body.append(f'<path data-series="{escape(name)}" d="{"".join(path)}" fill="{colour}" fill-opacity="0.12" stroke="{colour}" stroke-width="1.5" stroke-dasharray="{dash}">'
                    f'{_title(f"{name}: peak {peak:,} B")}</path>')
    for slot, (label, size, colour) in enumerate(lines):
        _h_line(body, left, plot_w, y(size), colour, f"{label} {format_bytes(size)}", slot=slot)
    iree, schedc = timeline["iree"], timeline["schedc"]
    for i in range(steps):  # one hover strip per kernel step
        parts = [f"kernel {i}"]
        if i < len(iree["kernels"]):
            parts.append(f"IREE's order: {iree['kernels'][i]}, {iree['live_bytes'][i]:,} B live")
        if i < len(schedc["kernels"]):
            parts.append(f"schedc's order: {schedc['kernels'][i]}, {schedc['live_bytes'][i]:,} B live")
        body.append(f'<rect x="{x(i):.1f}" y="{top}" width="{plot_w / steps:.2f}" height="{plot_h}" fill="transparent">{_title(chr(10).join(parts))}</rect>')
    for tick in nice_ticks(steps, 10):
        body.append(f'<text x="{x(tick):.1f}" y="{height - bottom + 14}" text-anchor="middle" fill="#555">{tick:.0f}</text>')
    body.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">kernels, in the order each runs them</text>')
    legend_x = left + 8
    for name, _, colour, _ in reversed(series):
        body.append(f'<rect x="{legend_x}" y="8" width="12" height="10" fill="{colour}"/><text x="{legend_x + 16}" y="17">{escape(name)}</text>')
        legend_x += 130
    return _svg("memory-timeline", width, height, body, "live transient bytes per kernel")


def arena_map(title: str, lifetimes: list, offsets: list, arena_bytes: int, load_bytes: int, maximum: int,
              colour: str, width: int = 540, height: int = 360) -> str:
    """One execution region's slices ([start, end, bytes] with `offsets`) as rectangles, on a
    byte scale up to `maximum` shared with the map beside it."""
    left, right, top, bottom = 80, 12, 24, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    steps = max((end + 1 for _, end, _ in lifetimes), default=1)
    maximum = max(maximum, 1) * 1.05
    body: list[str] = [f'<text x="{left}" y="14" font-weight="bold">{escape(title)}</text>']
    _y_axis(body, left, top, plot_h, plot_w, maximum)

    def y(size: float) -> float:
        return top + plot_h - plot_h * size / maximum

    body.append(f'<rect data-role="unused" x="{left}" y="{y(arena_bytes):.1f}" width="{plot_w}" height="{y(0) - y(arena_bytes):.1f}" fill="{GAP_COLOUR}">'
                f'{_title("arena bytes no slice holds at that time (gaps)")}</rect>')
    for i, ((start, end, size), offset) in enumerate(zip(lifetimes, offsets)):
        x0 = left + plot_w * start / steps
        w = plot_w * (end + 1 - start) / steps
        y0, y1 = y(offset + size), y(offset)
        body.append(f'<rect data-role="slice" x="{x0:.1f}" y="{y0:.1f}" width="{w:.2f}" height="{max(y1 - y0, 0.5):.2f}" fill="{colour}" fill-opacity="0.75" stroke="#fff" stroke-width="0.5">'
                    f'{_title(f"slice {i}: {size:,} B at offset {offset:,}, alive [{start}, {end}]")}</rect>')
    _h_line(body, left, plot_w, y(arena_bytes), "#333", f"arena {format_bytes(arena_bytes)}", dash="")
    _h_line(body, left, plot_w, y(load_bytes), "#c00", f"LOAD {format_bytes(load_bytes)}", slot=1)
    body.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">lifetime (execution steps of the region)</text>')
    return _svg("arena-map", width, height, body, title)


def wave_gantt(schedule: dict, width: int = 1100) -> str:
    """stream-schedule's estimated timeline: `timeline_us` {"stream N": [[kernel, start, end, wave]]}."""
    rows = list(schedule["timeline_us"].items())
    left, right, top, bottom, row_h = 80, 20, 24, 36, 22
    slots = [slot for _, stream in rows for slot in stream]
    longest = max((len(stream) for _, stream in rows), default=0)
    width = max(width, min(left + right + 4 * longest, 20000))  # at least 4 px a kernel
    plot_w, height = width - left - right, top + bottom + row_h * max(len(rows), 1)
    span = max((slot[2] for slot in slots), default=0) or 1.0

    def x(us: float) -> float:
        return left + plot_w * us / span

    body: list[str] = []
    waves: dict[int, list[float]] = {}
    for _, start, end, wave in slots:
        first, last = waves.get(wave, [start, end])
        waves[wave] = [min(first, start), max(last, end)]
    for k, (wave, (start, end)) in enumerate(sorted(waves.items())):
        if k % 2:
            body.append(f'<rect data-role="wave" x="{x(start):.1f}" y="{top}" width="{max(x(end) - x(start), 0.5):.2f}" height="{row_h * len(rows)}" fill="#eef0f4">'
                        f'{_title(f"wave {wave}: {start:.1f} - {end:.1f} us")}</rect>')
    for r, (name, stream) in enumerate(rows):
        y = top + r * row_h
        body.append(f'<text x="{left - 6}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end">{escape(name)}</text>')
        for label, start, end, wave in stream:
            colour = PALETTE[wave % len(PALETTE)] if wave >= 0 else "#999"
            body.append(f'<rect data-role="kernel" x="{x(start):.2f}" y="{y + 3}" width="{max(x(end) - x(start), 0.8):.2f}" height="{row_h - 6}" fill="{colour}">'
                        f'{_title(f"{label}: {start:.2f} - {end:.2f} us, wave {wave}, {name}")}</rect>')
    for tick in nice_ticks(span, 10):
        body.append(f'<text x="{x(tick):.1f}" y="{height - bottom + 14}" text-anchor="middle" fill="#555">{tick:g}</text>')
    body.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">estimated time (us; roofline cost model)</text>')
    return _svg("wave-gantt", width, height, body, "kernels on streams over estimated time")


def graph_layers(count: int, edges: list) -> list[int]:
    """Each node's layer: the longest path to it from a node without predecessors; a node
    without predecessors sits just before its earliest successor, so inputs and fills stay
    near their users instead of piling up in the first layer."""
    preds: list[list[int]] = [[] for _ in range(count)]
    succs: list[list[int]] = [[] for _ in range(count)]
    for a, b in edges:
        preds[b].append(a)
        succs[a].append(b)
    waiting = [len(p) for p in preds]
    ready = [n for n in range(count) if not waiting[n]]
    layer = [0] * count
    order = []
    while ready:
        n = ready.pop()
        order.append(n)
        for s in succs[n]:
            layer[s] = max(layer[s], layer[n] + 1)
            waiting[s] -= 1
            if not waiting[s]:
                ready.append(s)
    for n in range(count):
        if not preds[n] and succs[n]:
            layer[n] = max(0, min(layer[s] for s in succs[n]) - 1)
    return layer


def config_of(label: str, configs: dict[str, str]) -> str | None:
    """A kernel's config among `configs` (by dispatch entry point): its own, or that of the
    entry point its label extends."""
    if label in configs:
        return configs[label]
    return next((c for d, c in configs.items() if label.startswith(d + "_")), None)


def kernel_graph(graph: dict, width: int = 1100, configs: dict[str, str] | None = None) -> str:
    """The kernel DAG; `graph` as `schedc.report.build.kernel_graph_record` makes it; `configs`
    (dispatch -> kernel config label) adds each dispatch's config to its hover text."""
    nodes, edges = graph["nodes"], graph["edges"]
    layers = graph_layers(len(nodes), edges)
    column_w, row_h, margin = 56, 30, 24
    rows: dict[int, int] = {}
    place = []
    for n in range(len(nodes)):
        row = rows.get(layers[n], 0)
        rows[layers[n]] = row + 1
        place.append((margin + 10 + layers[n] * column_w, margin + 10 + row * row_h))
    width = max(width, margin * 2 + 20 + column_w * (max(layers, default=0) + 1))
    height = margin * 2 + 20 + row_h * max(rows.values(), default=1)
    biggest = max((node["bytes"] for node in nodes), default=0) or 1
    has_waves = any("wave" in node for node in nodes)
    body: list[str] = []
    for a, b in edges:
        (x1, y1), (x2, y2) = place[a], place[b]
        middle = (x1 + x2) / 2
        body.append(f'<path d="M{x1},{y1}C{middle},{y1} {middle},{y2} {x2},{y2}" fill="none" stroke="#9aa" stroke-opacity="0.6"/>')
    for n, node in enumerate(nodes):
        x, y = place[n]
        radius = 3 + 11 * math.sqrt(node["bytes"] / biggest)
        if has_waves:
            wave = node.get("wave", -1)
            colour = PALETTE[wave % len(PALETTE)] if wave >= 0 else "#ddd"
        else:  # position in schedc's order, from light to dark
            shade = int(200 - 160 * n / max(len(nodes) - 1, 1))
            colour = f"rgb({shade // 3},{shade // 2 + 40},{min(255, shade + 55)})"
        lines = [node["label"], f"{node['op']}, writes {node['bytes']:,} B"]
        lines += [f"result: {t}" for t in node["results"]] + [f"operand: {t}" for t in node["operands"]]
        lines += [f"{key}: {node[key]}" for key in ("wave", "stream", "estimated_us") if key in node]
        config = config_of(node["label"], configs or {})
        if config:
            lines.append(f"kernel config: {config}")
        lines.append(f"position {n} in schedc's order")
        body.append(f'<circle data-role="kernel" cx="{x}" cy="{y}" r="{radius:.1f}" fill="{colour}" stroke="#333" stroke-width="0.5">{_title(chr(10).join(lines))}</circle>')
    return _svg("kernel-graph", width, height, body, "kernel graph")
