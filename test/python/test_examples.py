"""The examples show what their comments say. Each figure a comment quotes (bytes, microseconds,
ratios) is one the command beside it prints today: the demo's (examples/demo.sh and the
README's `./dev demo` line), the replay example's and the training example's. A change that
moves a figure fails here until the comment says the new one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)? (?:B|us)\b|\b\d+\.\d+x\b")
MODELS = ROOT / "examples" / "models.py"


def comment_before(page: Path, command: str) -> str:
    """The `#` lines right above the line of `page` that starts with `command`."""
    lines = page.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(command))
    above = []
    for line in reversed(lines[:at]):
        if not line.lstrip().startswith("#"):
            break
        above.append(line.lstrip().lstrip("#").strip())
    return " ".join(reversed(above))


def figures(text: str) -> list[str]:
    return FIGURE.findall(text)


def schedc(*args, cwd) -> str:
    done = subprocess.run([sys.executable, "-m", "schedc.tools.schedc", *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def assert_quoted(comment: str, output: str) -> None:
    quoted = figures(comment)
    assert quoted, f"the comment quotes no figure: {comment}"
    missing = [f for f in quoted if f not in output]
    assert not missing, f"figures the comment states but the command does not print: {missing}\n{output}"


def test_the_demo_fits_one_screen_and_shows_its_saving(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "examples/demo.sh", str(tmp_path / "demo")], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    assert len(output.splitlines()) <= 24, output
    script = (ROOT / "examples" / "demo.sh").read_text()
    header = " ".join(line.lstrip("# ") for line in script.splitlines() if line.startswith("#") and not line.startswith("#!"))
    assert_quoted(header, output)
    readme = (ROOT / "README.md").read_text()
    demo_line = readme[readme.index("./dev demo     #"): readme.index("./dev test     #")]
    assert_quoted(demo_line, output)
    saving = re.search(r"IREE transient ([\d,]+) B -> ([\d,]+) B \((0\.\d+)x\)", output)
    assert saving and float(saving[3]) < 1, "the summary line shows a saving"
    order = re.search(r"estimated peak ([\d,]+) B -> ([\d,]+) B", output)
    assert order and int(order[2].replace(",", "")) < int(order[1].replace(",", "")), "memory-order changes the order"
    assert (tmp_path / "demo" / "report.html").stat().st_size > 0


@pytest.fixture(scope="session")
def staged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("staged")
    schedc("import", f"{MODELS}:staged_branches", "-o", "model.mlir", cwd=folder)
    return folder


def test_the_replay_example_says_what_it_trades(staged):
    command = 'schedc model.mlir --target=cuda --passes="memory-order,stream-schedule{mode=max-concurrency},arena-plan"'
    comment = comment_before(ROOT / "README.md", command)
    assert "trading memory for time" in comment
    concurrent = schedc("model.mlir", "--target=cuda", "--passes=memory-order,stream-schedule{mode=max-concurrency},arena-plan",
                        "--execution=graphs", "--summary", "-o", "g.vmfb", cwd=staged)
    serial = schedc("model.mlir", "--target=cuda", "--passes=memory-order,stream-schedule{mode=min-memory},arena-plan",
                    "--execution=graphs", "--summary", "-o", "s.vmfb", cwd=staged)
    default = schedc("model.mlir", "--target=cuda", "--execution=graphs", "--summary", "-o", "d.vmfb", cwd=staged)
    time_and_bytes = re.compile(r"estimated ([\d.]+) us.*IREE transient [\d,]+ B -> ([\d,]+) B")
    (fast, more), (slow, _), less = time_and_bytes.search(concurrent).groups(), time_and_bytes.search(serial).groups(), re.search(r"IREE transient [\d,]+ B -> ([\d,]+) B", default)[1]
    assert figures(comment) == [f"{fast} us", f"{slow} us", f"{more} B", f"{less} B"]
    assert float(fast) < float(slow) and int(more.replace(",", "")) > int(less.replace(",", ""))


def test_the_training_example_reaches_its_budget(tmp_path):
    schedc("import", f"{MODELS}:deep_convnet_train", "--train", "-o", "step.mlir", cwd=tmp_path)
    output = schedc("step.mlir", "--passes=memory-order,remat{memory-budget=0.7},arena-plan", "--summary", cwd=tmp_path)
    assert "cannot get under the budget" not in output
    remat = re.search(r"remat: .*?\+([\d.]+)% FLOPs.*?peak ([\d,]+) B -> ([\d,]+) B \(budget ([\d,]+) B\)", output)
    assert remat, output
    before, after, budget = (int(g.replace(",", "")) for g in remat.groups()[1:])
    assert after <= budget <= 0.7 * before + 1
    for page in (ROOT / "README.md", ROOT / "docs" / "training.md"):
        comment = comment_before(page, "schedc import examples/models.py:deep_convnet_train")
        assert figures(comment) == [f"{remat[2]} B", f"{remat[3]} B", f"{remat[4]} B"], page
        assert f"{remat[1]}% more FLOPs" in comment, page
