"""The report's pictures as plain SVG text, from the JSON report's plain data.

Four charts per function (see `schedc.report.html` for the page around them):
- `memory_timeline`: live transient bytes while each kernel runs, IREE's order and schedc's,
  as step lines, with LOAD and the arena sizes as horizontal lines;
- `arena_map`: each transient slice of one execution region as a rectangle (arena offset
  against lifetime); unused bytes under the arena's top are tinted, so gaps show at a glance;
- `wave_gantt`: kernels on streams over estimated time, each wave shaded;
- `kernel_graph`: the dispatch DAG in layers (longest path from the inputs), one row a layer,
  nodes sized by the bytes they write and coloured by wave (or by position in schedc's order);
  a small graph names every kernel, a large one is an overview that names the largest.

How they read: every byte figure of a page is in one `Unit` (KiB or MiB, as the model's size
asks), axes tick at round values of it, and labels never overlap: a line's label sits in the
margin beside the plot (`spread_labels` keeps them apart), never on the line. The SVGs scale
down to the page's width; nothing scrolls sideways.

No script: hover text is SVG `<title>`, which every browser shows as a tooltip. Every chart is
an `<svg>` with a `data-chart` attribute naming it, for tests and tools. Sizes stay small for
500 kernels: one path per line series, one element per kernel or slice.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import escape

IREE_COLOUR = "#d9822b"  # IREE alone: orange
SCHEDC_COLOUR = "#2b6cd9"  # schedc: blue
LOAD_COLOUR = "#c00"
GAP_COLOUR = "#fbe3e3"  # unused arena bytes
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf")
FONT_PX = 11
LABEL_GAP = FONT_PX + 3  # the least distance between two labels' baselines
CHAR_PX = 6.4  # a generous width of one character at FONT_PX (sans-serif), for layout


@dataclass(frozen=True)
class Unit:
    """The one byte unit of a page."""

    name: str
    scale: int

    def of(self, size: float) -> float:
        return size / self.scale

    def text(self, size: float) -> str:
        value = self.of(size)
        digits = 0 if self.scale == 1 or abs(value) >= 100 or value == int(value) else 1
        return f"{value:,.{digits}f} {self.name}"


def unit_for(largest: float) -> Unit:
    """MiB for a model whose largest figure is 4 MiB or more, KiB from 4 KiB, else B."""
    for name, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if largest >= 4 * scale:
            return Unit(name, scale)
    return Unit("B", 1)


def nice_ticks(maximum: float, count: int = 5) -> list[float]:
    """Round tick values from 0 up to `maximum` (1, 2 or 5 times a power of ten apart)."""
    if maximum <= 0:
        return [0.0]
    raw = maximum / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [round(i * step, 10) for i in range(int(maximum / step + 1e-9) + 1)]


def spread_labels(wanted: list[float], top: float, bottom: float, gap: float = LABEL_GAP) -> list[float]:
    """Baselines as near to `wanted` as they can be, each at least `gap` from the next and all
    within [top, bottom] (where there is room): labels stacked instead of overlapping."""
    if not wanted:
        return []
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [0.0] * len(wanted)
    previous = -math.inf
    for i in order:
        placed[i] = max(wanted[i], previous + gap, top)
        previous = placed[i]
    overflow = placed[order[-1]] - bottom
    if overflow > 0:  # pushed past the bottom: move the stack up as far as it must and can go
        previous = math.inf
        for i in reversed(order):
            placed[i] = min(placed[i] - overflow, previous - gap) if previous < math.inf else placed[i] - overflow
            previous = placed[i]
    return placed


def text_width(text: str) -> float:
    return CHAR_PX * len(text)


def _svg(chart: str, width: float, height: float, body: list[str], label: str) -> str:
    return (
        f'<svg data-chart="{chart}" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}" font-family="sans-serif" font-size="{FONT_PX}">'
        + "".join(body)
        + "</svg>"
    )


def _title(text: str) -> str:
    return f"<title>{escape(text)}</title>"


def _text(x: float, y: float, text: str, anchor: str = "start", fill: str = "#222", extra: str = "") -> str:
    return f'<text data-label="" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}"{extra}>{escape(text)}</text>'


def _byte_axis(body: list[str], left: float, top: float, plot_h: float, plot_w: float, maximum: float, unit: Unit) -> None:
    """Round ticks of `unit` and grid lines on the left of a plot whose y grows downwards from
    `top`; the unit's name heads the axis."""
    for tick in nice_ticks(unit.of(maximum)):
        y = top + plot_h - plot_h * tick * unit.scale / maximum
        body.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        body.append(_text(left - 4, y + 4, f"{tick:,g}", "end", "#555"))
    body.append(_text(left - 4, top - 8, unit.name, "end", "#555"))


@dataclass(frozen=True)
class Line:
    """A horizontal line across a plot: a size, its label and its colour."""

    label: str
    size: int
    colour: str
    dash: str = "6 4"


def _lines(body: list[str], lines: list[Line], left: float, plot_w: float, y_of, top: float, bottom: float, unit: Unit) -> None:
    """Each line across the plot, its label in the margin to the right, at the line's height
    where it can be, stacked with the others where they would touch (a leader joins a moved
    label to its line)."""
    ys = [y_of(line.size) for line in lines]
    placed = spread_labels([y + 4 for y in ys], top + 4, bottom)
    right = left + plot_w
    for line, y, label_y in zip(lines, ys, placed):
        body.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{right:.1f}" y2="{y:.1f}" stroke="{line.colour}" stroke-width="1.5" '
                    f'stroke-dasharray="{line.dash}">{_title(f"{line.label}: {line.size:,} B")}</line>')
        body.append(f'<path d="M{right:.1f},{y:.1f}L{right + 6:.1f},{label_y - 4:.1f}" stroke="{line.colour}" fill="none"/>')
        body.append(_text(right + 8, label_y, f"{line.label} {unit.text(line.size)}", fill=line.colour))


def label_margin(lines: list[Line], unit: Unit) -> float:
    return 14 + max((text_width(f"{line.label} {unit.text(line.size)}") for line in lines), default=0)


def memory_timeline(timeline: dict, lines: list[Line], unit: Unit, width: int = 1100, height: int = 320) -> str:
    """`timeline`: {"iree": {"kernels": [...], "live_bytes": [...]}, "schedc": {...}} as
    memory-order records it; `lines`: drawn across the chart, labelled in the right margin."""
    left, top, bottom = 64, 44, 36
    right = label_margin(lines, unit) + 6
    plot_w, plot_h = width - left - right, height - top - bottom
    same = timeline["schedc"]["live_bytes"] == timeline["iree"]["live_bytes"]
    # schedc's order first and wider, so IREE's (dashed, on top) never hides it, equal or not.
    schedc_name = "schedc's order (the same as IREE's)" if same else "schedc's order"
    series = [(schedc_name, timeline["schedc"], SCHEDC_COLOUR, "", 3.5), ("IREE's order", timeline["iree"], IREE_COLOUR, "5 3", 1.5)]
    steps = max(len(s["live_bytes"]) for _, s, _, _, _ in series) or 1
    maximum = max([max(s["live_bytes"], default=0) for _, s, _, _, _ in series] + [line.size for line in lines] + [1]) * 1.08
    body: list[str] = []
    _byte_axis(body, left, top, plot_h, plot_w, maximum, unit)

    def x(i: float) -> float:
        return left + plot_w * i / steps

    def y(size: float) -> float:
        return top + plot_h - plot_h * size / maximum

    for name, data, colour, dash, stroke in series:
        path = [f"M{x(0):.1f},{y(0):.1f}"]
        for i, size in enumerate(data["live_bytes"]):
            path.append(f"V{y(size):.1f}H{x(i + 1):.1f}")
        path.append(f"V{y(0):.1f}")
        peak = max(data["live_bytes"], default=0)
        body.append(f'<path data-series="{escape(name)}" d="{"".join(path)}" fill="{colour}" fill-opacity="0.10" stroke="{colour}" '
                    f'stroke-width="{stroke}" stroke-dasharray="{dash}">{_title(f"{name}: peak {peak:,} B")}</path>')
    _lines(body, lines, left, plot_w, y, top, top + plot_h, unit)
    iree, schedc = timeline["iree"], timeline["schedc"]
    for i in range(steps):  # one hover strip per kernel step
        parts = [f"kernel {i}"]
        if i < len(iree["kernels"]):
            parts.append(f"IREE's order: {iree['kernels'][i]}, {iree['live_bytes'][i]:,} B live")
        if i < len(schedc["kernels"]):
            parts.append(f"schedc's order: {schedc['kernels'][i]}, {schedc['live_bytes'][i]:,} B live")
        body.append(f'<rect x="{x(i):.1f}" y="{top}" width="{plot_w / steps:.2f}" height="{plot_h}" fill="transparent">{_title(chr(10).join(parts))}</rect>')
    for tick in nice_ticks(steps, 10):
        body.append(_text(x(tick), height - bottom + 14, f"{tick:.0f}", "middle", "#555"))
    body.append(_text(left + plot_w / 2, height - 6, "kernels, in the order each runs them", "middle"))
    legend_x = left
    for name, _, colour, dash, stroke in reversed(series):
        body.append(f'<line x1="{legend_x}" y1="13" x2="{legend_x + 22}" y2="13" stroke="{colour}" stroke-width="{stroke}" stroke-dasharray="{dash}"/>')
        body.append(_text(legend_x + 28, 17, name))
        legend_x += 28 + text_width(name) + 20
    return _svg("memory-timeline", width, height, body, "live transient bytes per kernel")


def arena_map(title: str, lifetimes: list, offsets: list, arena_bytes: int, load_bytes: int, maximum: int,
              colour: str, unit: Unit, width: int = 384, height: int = 340) -> str:
    """One execution region's slices ([start, end, bytes] with `offsets`) as rectangles, on a
    byte scale up to `maximum` shared with the maps beside it."""
    lines = [Line("arena", arena_bytes, "#333", ""), Line("LOAD", load_bytes, LOAD_COLOUR)]
    left, top, bottom = 52, 44, 36
    right = label_margin(lines, unit) + 4
    plot_w, plot_h = width - left - right, height - top - bottom
    steps = max((end + 1 for _, end, _ in lifetimes), default=1)
    maximum = max(maximum, 1) * 1.05
    body: list[str] = [_text(4, 14, title, extra=' font-weight="bold"')]
    _byte_axis(body, left, top, plot_h, plot_w, maximum, unit)

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
    _lines(body, lines, left, plot_w, y, top, top + plot_h, unit)
    body.append(_text(left + plot_w / 2, height - 6, "lifetime (steps of the region)", "middle"))
    return _svg("arena-map", width, height, body, title)


def wave_gantt(schedule: dict, width: int = 1100) -> str:
    """stream-schedule's estimated timeline: `timeline_us` {"stream N": [[kernel, start, end, wave]]},
    scaled to `width` (a long schedule is an overview; hover names each kernel)."""
    rows = list(schedule["timeline_us"].items())
    left, right, top, bottom, row_h = 64, 20, 14, 36, 22
    slots = [slot for _, stream in rows for slot in stream]
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
        body.append(_text(left - 6, y + row_h / 2 + 4, name, "end"))
        for label, start, end, wave in stream:
            colour = PALETTE[wave % len(PALETTE)] if wave >= 0 else "#999"
            body.append(f'<rect data-role="kernel" x="{x(start):.2f}" y="{y + 3}" width="{max(x(end) - x(start), 0.8):.2f}" height="{row_h - 6}" fill="{colour}">'
                        f'{_title(f"{label}: {start:.2f} - {end:.2f} us, wave {wave}, {name}")}</rect>')
    for tick in nice_ticks(span, 10):
        body.append(_text(x(tick), height - bottom + 14, f"{tick:g}", "middle", "#555"))
    body.append(_text(left + plot_w / 2, height - 6, "estimated time (us; roofline cost model)", "middle"))
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


_DISPATCH = re.compile(r"dispatch_(\d+)_(.+)")
SHORT_LABEL_CHARS = 30


def short_label(node: dict) -> str:
    """What a kernel graph's node is called beside it: `#4 conv 32x32x16x3x3x16 f32` for
    dispatch 4, the op for the rest (`splat`, `reshape`)."""
    match = _DISPATCH.search(node["label"])
    if node["op"] == "flow.dispatch" and match:
        text = f"#{match[1]} {match[2].replace('_', ' ')}"
    else:
        text = node["op"].removeprefix("flow.tensor.").removeprefix("flow.")
    return text if len(text) <= SHORT_LABEL_CHARS else text[: SHORT_LABEL_CHARS - 1] + "…"


LABELLED_GRAPH_KERNELS = 80  # up to this many kernels every one is named; above, an overview


def kernel_graph(graph: dict, width: int = 1100, configs: dict[str, str] | None = None) -> str:
    """The kernel DAG, one row a layer, top to bottom; `graph` as
    `schedc.decisions.kernel_graph.kernel_graph_record` makes it; `configs` (dispatch -> kernel
    config label) adds each dispatch's config to its hover text. Up to LABELLED_GRAPH_KERNELS
    kernels each is named beside its node; a larger graph is an overview scaled to `width`
    that names its largest kernels where a name has room."""
    nodes, edges = graph["nodes"], graph["edges"]
    layers = graph_layers(len(nodes), edges)
    count = max(layers, default=-1) + 1
    rows: list[list[int]] = [[] for _ in range(count)]
    for n, layer in enumerate(layers):
        rows[layer].append(n)
    labelled = len(nodes) <= LABELLED_GRAPH_KERNELS
    names = [short_label(node) for node in nodes]
    margin, row_h = 12, (34 if labelled else 16)
    biggest = max((node["bytes"] for node in nodes), default=0) or 1
    max_radius = 9 if labelled else 5
    radius = [2.5 + (max_radius - 2.5) * math.sqrt(node["bytes"] / biggest) for node in nodes]
    place: list[tuple[float, float]] = [(0.0, 0.0)] * len(nodes)
    cell = lambda n: 2 * max_radius + 8 + (text_width(names[n]) if labelled else 0)  # noqa: E731
    widest = max((sum(cell(n) for n in row) for row in rows), default=0)
    if labelled:  # each row's cells side by side; the whole graph wide enough for its widest row
        width = max(width, int(2 * margin + widest))
    for r, row in enumerate(rows):
        y = margin + max_radius + 4 + r * row_h
        if labelled:
            x = margin + (width - 2 * margin - sum(cell(n) for n in row)) / 2
            for n in row:
                place[n] = (x + max_radius, y)
                x += cell(n)
        else:
            step = (width - 2 * margin) / max(len(row), 1)
            for k, n in enumerate(row):
                place[n] = (margin + step * (k + 0.5), y)
    height = 2 * margin + 2 * max_radius + 8 + row_h * max(count - 1, 0) + 14
    has_waves = any("wave" in node for node in nodes)
    body: list[str] = []
    for a, b in edges:
        (x1, y1), (x2, y2) = place[a], place[b]
        middle = (y1 + y2) / 2
        body.append(f'<path d="M{x1:.1f},{y1:.1f}C{x1:.1f},{middle:.1f} {x2:.1f},{middle:.1f} {x2:.1f},{y2:.1f}" fill="none" stroke="#9aa" stroke-opacity="0.6"/>')
    for n, node in enumerate(nodes):
        x, y = place[n]
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
        body.append(f'<circle data-role="kernel" cx="{x:.1f}" cy="{y:.1f}" r="{radius[n]:.1f}" fill="{colour}" stroke="#333" stroke-width="0.5">{_title(chr(10).join(lines))}</circle>')
    taken: list[tuple[float, float, float, float]] = []
    for n in sorted(range(len(nodes)), key=lambda n: -nodes[n]["bytes"]):
        x, y = place[n]
        box = (x + max_radius + 3, y - FONT_PX + 4, x + max_radius + 3 + text_width(names[n]), y + 4)
        if not labelled and (box[2] > width - 2 or any(_overlap(box, other) for other in taken) or len(taken) >= 24):
            continue  # an overview names its largest kernels only where a name has room
        taken.append(box)
        body.append(_text(box[0], y + 4, names[n], fill="#333"))
    return _svg("kernel-graph", width, height, body, "kernel graph")


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
