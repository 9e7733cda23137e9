"""The HTML report of a bench model (densenet, compiled for the host CPU with stream-schedule so
that every chart has data), opened in a real browser: headless Chromium from the system's
packages. The rendered DOM holds each chart and the JSON report's numbers in its table, and a
screenshot shows the charts (not a blank page). Skipped where no Chromium is installed:
`./dev test` installs it with apt-get where it can.

The page's layout as Chromium lays it out, at a wide and a narrow window, for densenet, the
demo's model, a model whose two orders are equal and a 500-kernel overview: no two labels of a
chart overlap, every label lies inside its chart, nothing scrolls sideways, and where the
orders are equal both lines show. The screenshots are the test's output, in
build/test-output/report/ (NAME-WIDTH.png).

The report's own data is checked too: IREE's arenas as schedc reads and lays them out are the
module's real allocations, and the timelines peak where memory-order says."""

from __future__ import annotations

import html
import importlib.util
import json
import shutil
import subprocess

import numpy as np
import pytest

import schedc
from conftest import ROOT
from schedc.decisions.arena_plan import Slice, verify
from schedc.options import CompileOptions
from schedc.compiler.driver import compile_with_options
from schedc.report.html import render_html
from schedc.targets import resolve_target
from test_report_html import Page, synthetic_report

_spec = importlib.util.spec_from_file_location("bench_models", ROOT / "bench" / "models.py")
bench_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_models)

CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium; ./dev test does it where apt-get can)")
FUNCTION = "forward"


@pytest.fixture(scope="session")
def report():
    model, args = bench_models.SUITE["densenet"]()
    mlir = schedc.import_torch(model, *args)
    options = CompileOptions.for_target(resolve_target("llvm-cpu"), passes="memory-order,stream-schedule,arena-plan", emit="stream", report=True)
    return compile_with_options(mlir, options).report


def chromium(*args, tmp_path) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


def test_report_data_matches_what_iree_allocates(report):
    entry = report["functions"][FUNCTION]
    iree = entry["iree_transient_bytes"]
    # schedc's reading of IREE's own slices and its layout-slices, byte for byte IREE's allocation.
    assert [a["bytes"] for a in entry["iree_arenas"]] == iree["allocations_without_schedc"]
    order = entry["memory-order"]
    assert max(order["timeline"]["iree"]["live_bytes"]) == order["program_peak_bytes"]
    assert max(order["timeline"]["schedc"]["live_bytes"]) == order["peak_bytes"]
    assert len(order["timeline"]["schedc"]["kernels"]) == order["kernels"]
    for arena in entry["arena-plan"]:
        slices = [Slice(*s) for s in arena["lifetimes"]]
        assert verify(slices, arena["schedc_offsets"], 64, arena["schedc_bytes"]) == []
        assert verify(slices, arena["iree_offsets"], 64, arena["iree_bytes"]) == []
    graph = entry["stream-schedule"]["graph"]
    assert all(0 <= a < len(graph["nodes"]) and 0 <= b < len(graph["nodes"]) for a, b in graph["edges"])


@needs_chromium
def test_chromium_renders_every_chart_with_the_reports_numbers(report, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(report))
    dumped = chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = Page(dumped.stdout)
    assert dom.charts == ["memory-timeline", "arena-map", "arena-map", "arena-map", "wave-gantt", "kernel-graph"]
    entry = report["functions"][FUNCTION]
    order, plan, arenas = entry["memory-order"], entry["stream-schedule"], entry["arena-plan"]
    expected = {
        "kernels": order["kernels"],
        "program_peak_bytes": order["program_peak_bytes"],
        "peak_bytes": order["peak_bytes"],
        "iree_alone_arena_bytes": sum(a["bytes"] for a in entry["iree_arenas"]),
        "load_bytes": sum(a["load_bytes"] for a in arenas),
        "iree_bytes": sum(a["iree_bytes"] for a in arenas),
        "schedc_bytes": sum(a["schedc_bytes"] for a in arenas),
        "streams": plan["streams"],
        "estimated_peak_bytes": plan["estimated_peak_bytes"],
        "without_schedc": entry["iree_transient_bytes"]["without_schedc"],
        "with_schedc": entry["iree_transient_bytes"]["with_schedc"],
    }
    shown = {key: int(dom.cells[key].replace(",", "")) for key in expected}
    assert shown == expected
    assert dom.cells["strategy"] == order["strategy"]


@needs_chromium
def test_chromium_screenshot_shows_the_charts(report, tmp_path):
    from PIL import Image

    page, shot = tmp_path / "report.html", tmp_path / "report.png"
    page.write_text(render_html(report))
    result = chromium(f"--screenshot={shot}", "--window-size=1240,3000", page.as_uri(), tmp_path=tmp_path)
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1240, 3000)
    r, g, b = (np.asarray(image).astype(int)[..., channel] for channel in range(3))
    drawn = np.mean((r < 255) | (g < 255) | (b < 255))
    orange = np.mean((r > 180) & (r - b > 80) & (r > g))  # IREE's slices
    blue = np.mean((b > 180) & (b - r > 80))  # schedc's slices
    assert drawn > 0.05, drawn
    assert orange > 0.002 and blue > 0.002, (orange, blue)


WIDTHS = (1280, 760)
SHOTS = ROOT / "build" / "test-output" / "report"
# Run in the page, after it is laid out: every chart's box and each of its labels' boxes.
MEASURE = """<script>
const charts = [...document.querySelectorAll('svg[data-chart]')].map(svg => {
  const box = r => [r.left, r.top, r.right, r.bottom];
  return {chart: svg.dataset.chart, box: box(svg.getBoundingClientRect()),
          labels: [...svg.querySelectorAll('text')].map(t => [t.textContent, ...box(t.getBoundingClientRect())]),
          lines: [...svg.querySelectorAll('line[stroke-dasharray]')].map(l => box(l.getBoundingClientRect()))};
});
const pre = document.createElement('pre');
pre.id = 'layout';
pre.textContent = JSON.stringify({width: document.documentElement.clientWidth,
                                  scrollWidth: document.documentElement.scrollWidth, charts});
document.body.appendChild(pre);
</script>"""


@pytest.fixture(scope="session")
def pages(report, imported):
    """name -> the page: densenet with stream-schedule, the demo's model and a model whose two
    orders are the same (both with schedc's default pipeline), and a 500-kernel report."""
    def default_pipeline(name: str) -> str:
        options = CompileOptions.for_target(resolve_target("llvm-cpu"), emit="stream", report=True)
        return render_html(compile_with_options(imported(name)[2], options).report)

    return {"densenet": render_html(report), "demo": default_pipeline("staged_branches"),
            "equal-orders": default_pipeline("transformer_block"), "overview": render_html(synthetic_report(500))}


def layout(page: str, width: int, tmp_path) -> dict:
    measured = tmp_path / f"measured-{width}.html"
    measured.write_text(page.replace("</body>", MEASURE + "</body>"))
    dumped = chromium("--dump-dom", f"--window-size={width},2000", measured.as_uri(), tmp_path=tmp_path)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    text = dumped.stdout[dumped.stdout.index('<pre id="layout">') + len('<pre id="layout">'):]
    return json.loads(html.unescape(text[: text.index("</pre>")]))


def overlapping(labels: list) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes share more than a pixel across and any height (a line's box
    is as thin as its stroke)."""
    pairs = []
    for i, (a, *ra) in enumerate(labels):
        for b, *rb in labels[i + 1:]:
            if min(ra[2], rb[2]) - max(ra[0], rb[0]) > 1 and min(ra[3], rb[3]) - max(ra[1], rb[1]) > 0.5:
                pairs.append((a, b))
    return pairs


def screenshot(page: str, name: str, width: int, tmp_path):
    from PIL import Image

    SHOTS.mkdir(parents=True, exist_ok=True)
    source, shot = tmp_path / f"{name}.html", SHOTS / f"{name}-{width}.png"
    source.write_text(page)
    done = chromium(f"--screenshot={shot}", f"--window-size={width},4000", source.as_uri(), tmp_path=tmp_path)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    return np.asarray(Image.open(shot).convert("RGB")).astype(int)


@needs_chromium
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["densenet", "demo", "equal-orders", "overview"])
def test_labels_never_collide_and_nothing_scrolls_sideways(pages, name, width, tmp_path):
    measured = layout(pages[name], width, tmp_path)
    assert measured["scrollWidth"] <= measured["width"], "the page scrolls sideways"
    for chart in measured["charts"]:
        left, top, right, bottom = chart["box"]
        assert right <= measured["width"], f"{chart['chart']} is wider than the window"
        assert overlapping(chart["labels"]) == [], chart["chart"]
        struck = [t for t, *box in chart["labels"] for line in chart["lines"] if overlapping([(t, *box), ("line", *line)])]
        assert struck == [], f"lines through labels of {chart['chart']}: {struck}"
        outside = [t for t, *box in chart["labels"] if box[0] < left - 1 or box[2] > right + 1 or box[1] < top - 1 or box[3] > bottom + 1]
        assert outside == [], f"labels outside {chart['chart']}: {outside}"
    pixels = screenshot(pages[name], name, width, tmp_path)
    assert np.mean(np.any(pixels < 250, axis=-1)) > 0.03, "the screenshot is blank"


@needs_chromium
def test_both_orders_show_when_they_are_equal(pages, tmp_path):
    from schedc.report.charts import IREE_COLOUR, SCHEDC_COLOUR

    page = pages["equal-orders"]
    assert "schedc&#x27;s order (the same as IREE&#x27;s)" in page
    timeline = next(c for c in layout(page, 1280, tmp_path)["charts"] if c["chart"] == "memory-timeline")
    left, top, right, bottom = (int(v) for v in timeline["box"])
    pixels = screenshot(page, "equal-orders-timeline", 1280, tmp_path)[top:bottom, left:right]

    def share(colour: str) -> float:
        rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
        return np.mean(np.abs(pixels - rgb).sum(axis=-1) < 60)

    assert share(SCHEDC_COLOUR) > 0.002 and share(IREE_COLOUR) > 0.002, (share(SCHEDC_COLOUR), share(IREE_COLOUR))
