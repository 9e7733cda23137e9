"""The compile report: build (the JSON report and its summary), html (one self-contained
page), charts (its SVG charts).

The JSON report is built by `build`; `report_page` makes what a report path holds (the page for
a .html path, else JSON), and `read_report` reads a JSON report back.
"""

from __future__ import annotations

import json
from pathlib import Path

from schedc.errors import SchedcError
from schedc.report.build import report_text
from schedc.report.html import render_html


def report_page(path: str, report: dict) -> str:
    """What a report path holds: one self-contained HTML page for a `.html` path, else JSON."""
    if str(path).lower().endswith((".html", ".htm")):
        return render_html(report)
    return report_text(report)


def write_report(path: str, report: dict) -> None:
    """Writes the report as JSON, or as one self-contained HTML page for a `.html` path."""
    from schedc.outputs import write_output

    write_output(path, report_page(path, report))


def read_report(path: str) -> dict:
    """A JSON report written by `schedc --report`; a clear error for anything else."""
    file = Path(path)
    if not file.is_file():
        raise SchedcError(f"{path}: no such file")
    try:
        report = json.loads(file.read_text())
    except UnicodeDecodeError:
        raise SchedcError(f"{path}: not a text file") from None
    except json.JSONDecodeError as e:
        raise SchedcError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    if not isinstance(report, dict) or not isinstance(report.get("functions"), dict):
        raise SchedcError(f"{path}: not a schedc report (no 'functions' object); write one with schedc --report=PATH.json")
    return report
