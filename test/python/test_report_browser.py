"""The HTML report of a bench model (densenet, compiled for the host CPU with stream-schedule so
that every chart has data), opened in a real browser: headless Chromium from the system's
packages. The rendered DOM holds each chart and the JSON report's numbers in its table, and a
screenshot shows the charts (not a blank page). Skipped where no Chromium is installed:
`./dev test` installs it with apt-get where it can.

The report's own data is checked too: IREE's arenas as schedc reads and lays them out are the
module's real allocations, and the timelines peak where memory-order says."""

from __future__ import annotations

import importlib.util
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
from test_report_html import Page

_spec = importlib.util.spec_from_file_location("bench_models", ROOT / "bench" / "models.py")
bench_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_models)

CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium; ./dev test does it where apt-get can)")
FUNCTION = "forward"


@pytest.fixture(scope="module")
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
