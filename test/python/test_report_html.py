"""The HTML report from plain report data (no IREE): each chart is there, the table holds the
report's numbers, the page stays small for 500 kernels; the report records the pictures need."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser

import pytest

from schedc.errors import SchedcError
from schedc.decisions.kernel_graph import Buffer, KernelGraph, Node
from schedc.report.html import render_html, summary_rows
from schedc.decisions.kernel_graph import kernel_graph_record, live_timeline
from schedc.report import read_report
from schedc.report.charts import graph_layers, nice_ticks


class Page(HTMLParser):
    """The charts (`<svg data-chart>`), the table cells (`<tr data-key>`: a cell's exact
    `data-value` where it has one, else its text), hover titles, the glossary's terms
    (`<dt id="term-...">`), the links to them, and the page's text outside the glossary."""

    def __init__(self, text: str):
        super().__init__()
        self.charts: list[str] = []
        self.cells: dict[str, str] = {}
        self.titles = 0
        self.defined: list[str] = []
        self.links: list[str] = []
        self.text = ""
        self._key = None
        self._in_td = False
        self._skip = 0  # inside the glossary, a <title> or the embedded JSON
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg":
            self.charts.append(attrs.get("data-chart"))
        elif tag == "tr" and "data-key" in attrs:
            self._key = attrs["data-key"]
        elif tag == "td" and self._key:
            if "data-value" in attrs:
                self.cells[self._key] = attrs["data-value"]
                self._key = None
            else:
                self._in_td = True
        elif tag == "title":
            self.titles += 1
        elif tag == "dt" and attrs.get("id", "").startswith("term-"):
            self.defined.append(attrs["id"].removeprefix("term-"))
        elif tag == "a" and attrs.get("class") == "term":
            self.links.append(attrs["href"].removeprefix("#term-"))
        if tag in ("dl", "title", "script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_td, self._key = False, None
        if tag in ("dl", "title", "script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if self._in_td:
            self.cells[self._key] = self.cells.get(self._key, "") + data
        if not self._skip:
            self.text += data + " "


def chain_graph(sizes: list[int]) -> KernelGraph:
    """k0 -> k1 -> ... each kernel writing a transient of `sizes[i]` bytes, the last a result."""
    nodes, buffers, edges = [], [], set()
    for i, size in enumerate(sizes):
        kind = "result" if i == len(sizes) - 1 else "transient"
        buffers.append(Buffer(i, size, f"tensor<{size // 4}xf32>", kind))
        nodes.append(Node(i, "flow.dispatch", f"k{i}", True, (i,), (i - 1,) if i else ()))
        if i:
            edges.add((i - 1, i))
    return KernelGraph("chain", tuple(nodes), tuple(buffers), frozenset(edges))


def synthetic_report(kernels: int, seed: int = 0) -> dict:
    """A report of the shape the passes write, for `kernels` kernels (random sizes and edges)."""
    rng = random.Random(seed)
    live = [rng.randrange(1, 1 << 24) for _ in range(kernels)]
    labels = [f"forward_dispatch_{i}_conv_2d_nchw_fchw_1x64x56x56x64x3x3_f32" for i in range(kernels)]
    slices = []
    for _ in range(2 * kernels):
        start = rng.randrange(kernels)
        slices.append([start, min(kernels - 1, start + rng.randrange(1, 12)), rng.choice([4096, 65536, 1 << 20])])
    offsets = [rng.randrange(0, 1 << 24, 64) for _ in slices]
    nodes = [{"label": labels[i], "op": "flow.dispatch", "bytes": rng.randrange(1 << 20), "results": ["tensor<1x64x56x56xf32>"],
              "operands": ["tensor<1x64x56x56xf32>"] * 2, "wave": i // 3, "stream": i % 3, "estimated_us": 1.5} for i in range(kernels)]
    edges = sorted({(rng.randrange(max(0, i - 8), i), i) for i in range(1, kernels)} | {(i - 1, i) for i in range(1, kernels)})
    timeline = {f"stream {s}": [[labels[i], i * 2.0, i * 2.0 + 1.5, i // 3] for i in range(s, kernels, 3)] for s in range(3)}
    arena = {"region": 0, "slices": len(slices), "load_bytes": 1 << 24, "iree_bytes": 1 << 25, "schedc_bytes": (1 << 24) + 4096,
             "method": "size", "method_bytes": {}, "exact_finished": None, "plan_seconds": 0.01,
             "lifetimes": slices, "iree_offsets": offsets, "schedc_offsets": offsets}
    return {"target": "cuda", "arch": "sm_80", "pipeline": "memory-order,stream-schedule,arena-plan", "functions": {"forward": {
        "memory-order": {"kernels": kernels, "strategy": "greedy", "program_peak_bytes": max(live) * 2, "peak_bytes": max(live),
                         "optimum_bytes": None, "strategy_peaks": {}, "serialize": True, "pass_seconds": 0.5,
                         "timeline": {"iree": {"kernels": labels, "live_bytes": [2 * b for b in live]},
                                      "schedc": {"kernels": labels, "live_bytes": live}},
                         "graph": {"nodes": nodes, "edges": [list(e) for e in edges]}},
        "stream-schedule": {"mode": "balanced", "streams": 3, "target": "cuda", "estimated_makespan_us": kernels * 2.0,
                            "estimated_peak_bytes": max(live), "waves": [3] * (kernels // 3), "timeline_us": timeline,
                            "pass_seconds": 0.2, "graph": {"nodes": nodes, "edges": [list(e) for e in edges]}},
        "arena-plan": [arena],
        "iree_arenas": [{"lifetimes": slices, "offsets": offsets, "bytes": 1 << 25, "load_bytes": 1 << 24}],
        "iree_transient_bytes": {"without_schedc": 1 << 25, "with_schedc": (1 << 24) + 4096,
                                 "allocations_without_schedc": [1 << 25], "allocations_with_schedc": [(1 << 24) + 4096]},
    }}}


def test_every_chart_and_the_table_numbers():
    report = synthetic_report(30)
    page = Page(render_html(report))
    assert page.charts == ["memory-timeline", "arena-map", "arena-map", "arena-map", "wave-gantt", "kernel-graph"]
    entry = report["functions"]["forward"]
    assert page.cells["peak_bytes"] == str(entry["memory-order"]["peak_bytes"])
    assert page.cells["program_peak_bytes"] == str(entry["memory-order"]["program_peak_bytes"])
    assert page.cells["schedc_bytes"] == str(entry["arena-plan"][0]["schedc_bytes"])
    assert page.cells["without_schedc"] == str(1 << 25)
    assert page.cells["optimum_bytes"] == "unknown"
    assert page.cells["concurrent_waves"] == "10"
    # The short table: the module's transients and the peak, IREE alone against schedc.
    assert page.cells["headline.transient"] == str(1 << 25) and page.cells["headline.peak"] == str(entry["memory-order"]["program_peak_bytes"])
    # Hover text: one per kernel in the timeline, graph and Gantt, one per slice in each map.
    assert page.titles >= 3 * 30 + 3 * 60


def test_500_kernels_stay_under_5_mb_and_make_an_overview():
    text = render_html(synthetic_report(500))
    assert len(text.encode()) < 5 * 1024 * 1024
    graph = text[text.index('<svg data-chart="kernel-graph"'):]
    graph = graph[: graph.index("</svg>")]
    assert re.search(r'width="1100"', graph)  # the page's width: an overview, nothing to scroll
    assert graph.count("<circle") == 500
    assert 0 < graph.count("<text") <= 24  # only the largest kernels are named, where a name has room


def test_a_small_graph_names_every_kernel():
    text = render_html(synthetic_report(12))
    graph = text[text.index('<svg data-chart="kernel-graph"'):]
    graph = graph[: graph.index("</svg>")]
    assert graph.count("<text") == 12 and ">#7 conv 2d nchw fchw 1x64x56x…</text>" in graph  # long names cut short


def test_one_unit_a_page_and_round_ticks():
    from schedc.report.charts import unit_for

    assert [unit_for(b).name for b in (1000, 4096, 1 << 20, 4 << 20)] == ["B", "KiB", "KiB", "MiB"]
    page = Page(render_html(synthetic_report(30)))  # 32 MiB at most
    sizes = re.findall(r"\d[\d,.]* (B|KiB|MiB|GiB)\b", page.text)
    assert sizes and set(sizes) == {"MiB"}
    ticks = re.findall(r'text-anchor="end" fill="#555">([\d,.]+)</text>', render_html(synthetic_report(30)))
    assert ticks and all(float(t.replace(",", "")) % 5 == 0 for t in ticks)


def test_labels_are_spread_apart():
    from schedc.report.charts import LABEL_GAP, spread_labels

    placed = spread_labels([100, 101, 102, 300], top=0, bottom=400)
    assert placed[3] == 300 and all(b - a >= LABEL_GAP for a, b in zip(sorted(placed), sorted(placed)[1:]))
    assert spread_labels([395, 396, 397], top=0, bottom=400)[2] <= 400  # pushed up, not off the plot


def test_every_term_the_page_uses_is_defined():
    from schedc.report.html import GLOSSARY

    for kernels in (3, 30):
        page = Page(render_html(synthetic_report(kernels)))
        assert set(page.links) <= set(page.defined) and set(page.defined) <= set(page.links)
        words = {key: GLOSSARY[key][0] for key in GLOSSARY}
        used = {key for key, word in words.items() if re.search(rf"\b{re.escape(word)}s?\b", page.text, re.IGNORECASE)}
        assert used <= set(page.defined), used - set(page.defined)
        assert {"load", "layout-slices", "arena", "lower-bound"} <= set(page.defined)


def test_both_orders_drawn_when_they_are_equal():
    report = synthetic_report(10)
    timeline = report["functions"]["forward"]["memory-order"]["timeline"]
    timeline["iree"]["live_bytes"] = list(timeline["schedc"]["live_bytes"])
    text = render_html(report)
    schedc = re.search(r'<path data-series="schedc\'s order \(the same as IREE\'s\)"[^>]*stroke-width="([\d.]+)"', text.replace("&#x27;", "'"))
    iree = re.search(r'<path data-series="IREE\'s order"[^>]*stroke-width="([\d.]+)" stroke-dasharray="5 3"', text.replace("&#x27;", "'"))
    assert schedc and iree and float(schedc[1]) > float(iree[1])  # the wider line under the dashed one


def test_missing_passes_say_so_instead_of_drawing():
    report = synthetic_report(10)
    entry = report["functions"]["forward"]
    del entry["stream-schedule"], entry["arena-plan"]
    text = render_html(report)
    assert Page(text).charts == ["memory-timeline", "arena-map", "kernel-graph"]
    assert "stream-schedule did not run" in text and "arena-plan did not run" in text
    assert "coloured by position in schedc's order" in text


def test_text_from_the_ir_is_escaped():
    report = synthetic_report(3)
    report["functions"]["forward"]["memory-order"]["timeline"]["iree"]["kernels"][0] = "<script>alert(1)</script>"
    text = render_html(report)
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_summary_rows_come_from_the_report():
    entry = synthetic_report(6)["functions"]["forward"]
    rows = {key: value for key, _, value in summary_rows(entry)}
    assert rows["kernels"] == 6
    assert rows["load_bytes"] == 1 << 24
    assert rows["iree_alone_arena_bytes"] == 1 << 25
    assert rows["mode"] == "balanced"
    entry["triton-conv"] = {"arch": 80, "convolutions": [{"op": "a"}, {"op": "b"}], "left_to_iree": [{"op": "c", "left_to_iree": "a 1x1"}]}
    rows = {key: value for key, _, value in summary_rows(entry)}
    assert rows["triton_conv.convolutions"] == 2 and rows["triton_conv.left_to_iree"] == 1


def test_the_summary_names_the_iree_flags_the_input_asked_for():
    from schedc.report.build import summary_lines
    from schedc.targets import GENERATION_FUSION

    report = {"functions": {}, "input_flags": list(GENERATION_FUSION)}
    assert summary_lines(report) == [f"IREE flags the input asks for: {' '.join(GENERATION_FUSION)}"]
    assert summary_lines({"functions": {}, "input_flags": []}) == []


def test_live_timeline_peak_is_the_graph_peak():
    graph = chain_graph([4096, 1024, 8192, 64])
    timeline = live_timeline(graph, graph.program_order())
    assert timeline["kernels"] == ["k0", "k1", "k2", "k3"]
    assert timeline["live_bytes"] == [4096, 5120, 9216, 8192]  # k3's result is not transient
    assert max(timeline["live_bytes"]) == graph.peak_bytes()


def test_kernel_graph_record_lists_kernels_in_the_order_given():
    graph = chain_graph([4096, 1024, 64])
    record = kernel_graph_record(graph, [0, 1, 2], {1: {"wave": 7}})
    assert [n["label"] for n in record["nodes"]] == ["k0", "k1", "k2"]
    assert record["nodes"][0]["bytes"] == 4096 and record["nodes"][0]["results"] == ["tensor<1024xf32>"]
    assert record["nodes"][1]["wave"] == 7 and record["nodes"][1]["operands"] == ["tensor<1024xf32>"]
    assert record["edges"] == [[0, 1], [1, 2]]


def test_graph_layers_put_inputs_next_to_their_first_user():
    # 0 -> 1 -> 2 -> 3, and 4 (a fill) feeds only 3: it sits one layer before 3, not in layer 0.
    assert graph_layers(5, [(0, 1), (1, 2), (2, 3), (4, 3)]) == [0, 1, 2, 3, 2]


def test_nice_ticks():
    assert nice_ticks(1000) == [0, 200, 400, 600, 800, 1000]
    assert nice_ticks(7, 10) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert nice_ticks(0) == [0.0]


def test_read_report_errors(tmp_path):
    with pytest.raises(SchedcError, match="no such file"):
        read_report(str(tmp_path / "missing.json"))
    broken = tmp_path / "broken.json"
    broken.write_text('{"functions": [\n  1,,\n]}\n')
    with pytest.raises(SchedcError, match=r"broken.json:2:5: not valid JSON"):
        read_report(str(broken))
    other = tmp_path / "other.json"
    other.write_text('{"name": "not a report"}')
    with pytest.raises(SchedcError, match="not a schedc report"):
        read_report(str(other))


def test_kernel_configs_on_the_graph_hover_and_in_a_table():
    report = synthetic_report(3)
    report["kernels"] = {"target": "cuda", "arch": "sm_80", "database": None, "kernels": [
        {"dispatch": "forward_dispatch_1_conv_2d_nchw_fchw_1x64x56x56x64x3x3_f32", "signature": "conv 1x64x56x56",
         "key": "k", "source": "heuristic", "config": "tile 64x64x16 <b>", "time_us": None}]}
    text = render_html(report)
    assert "kernel config: tile 64x64x16 &lt;b&gt; (heuristic)" in text  # the hover of dispatch 1 only
    assert text.count("kernel config:") == 1
    assert '<tr data-dispatch="forward_dispatch_1_conv_2d_nchw_fchw_1x64x56x56x64x3x3_f32">' in text
    assert "<h2>Kernel configs</h2>" in text and "not measured" in text


def test_cpu_plan_in_a_table_and_the_summary():
    from schedc.report.build import summary_lines

    report = synthetic_report(3)
    report["cpu_plan"] = {"database": "cpu.json", "mode": "data-tiling", "iree_flags": ["--iree-opt-data-tiling"],
                          "estimates_us": {"plain": 900.0, "data-tiling": 700.0}, "ops": [
        {"op": "conv 1x64x58x58 -> 64 k3x3 <b>", "kind": "conv", "work": 1, "layout": "im2col", "source": "nearest", "time_us": 650.5},
        {"op": "matmul 1x1x10x32 f32", "kind": "matmul", "work": 1, "layout": "nchw", "source": "none", "time_us": None}]}
    text = render_html(report)
    assert "<h2>CPU code generation</h2>" in text and "cpu-config chose mode data-tiling" in text
    assert "k3x3 &lt;b&gt;" in text and "not estimated" in text
    lines = summary_lines(report)
    assert "cpu-config (database cpu.json): mode data-tiling; 1 im2col, 1 nchw; estimated plain 900 us, data-tiling 700 us" in lines
    assert "  conv 1x64x58x58 -> 64 k3x3 <b>: im2col, 650.5 us (nearest)" in lines
