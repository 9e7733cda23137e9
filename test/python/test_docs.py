"""The documentation's commands are ones the tools accept, and its links lead somewhere.

Every command of every fenced shell block of README.md, docs/*.md and bench/README.md is parsed
with the real parsers, without running anything: `schedc ...` with the parser of its
subcommand (and its `--passes` against the pass registry), `schedc-opt ...` with its own,
`python bench/X.py` and `python examples/...` must name a file that exists. README.md stays a
front door (at most 200 lines), and every relative link of the pages points to a file (and a
heading) that exists. bench/check_docs.py runs the same commands for real; its block reader is
the one used here.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
import sys

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("check_docs", ROOT / "bench" / "check_docs.py")
check_docs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("check_docs", check_docs)
_spec.loader.exec_module(check_docs)

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
COMMANDS = [c for page in PAGES if page.exists() for block in check_docs.shell_blocks(page) for c in block.commands]
SCRIPT = re.compile(r"\bpython3?\s+((?:bench|examples)/\S+?\.py)\b")
TUNE_STEPS = ("prepare", "bench", "merge")


def argv_of(command) -> list[str]:
    """The command's words, an optional `[--flag]` taken as given (it must parse too)."""
    return [w.removeprefix("[").removesuffix("]") for w in shlex.split(command.text)]


def subcommands(parser) -> dict:
    """A parser's subcommand parsers by name (argparse keeps them in a private action)."""
    return {name: sub for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name, sub in a.choices.items()}


def exact(parser):
    """The parser, and its subcommands' parsers, without argparse's prefix matching: the
    documentation spells every flag out."""
    parser.allow_abbrev = False
    for subparser in subcommands(parser).values():
        exact(subparser)
    return parser


def parse(parser, argv: list[str], command):
    """parser.parse_args(argv), with argparse's exit turned into a failure naming the line."""
    exact(parser)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            return parser.parse_args(argv)
        except SystemExit as e:
            if e.code in (0, None):  # --help
                return None
            pytest.fail(f"{command.where}: `{command.text}` does not parse:\n{stderr.getvalue()}")


def check_pipeline(text: str | None, command) -> None:
    from schedc.compiler.pipeline import parse_pipeline
    from schedc.errors import SchedcError
    from schedc.passes import REGISTRY

    if not text:
        return
    try:
        parse_pipeline(text, REGISTRY)
    except SchedcError as e:
        pytest.fail(f"{command.where}: `{command.text}`: --passes={text}: {e}")


def tune_prepare_flags() -> set[str]:
    from schedc.tools.schedc import tune_parser

    prepare = subcommands(tune_parser())["prepare"]
    return {flag for action in prepare._actions for flag in action.option_strings}


def check_schedc(argv: list[str], command) -> None:
    from schedc.tools.schedc import compile_parser, generate_parser, import_parser, params_parser, report_parser, run_parser, tune_parser

    subcommand, rest = (argv[0], argv[1:]) if argv else ("", [])
    if subcommand == "import":
        parse(import_parser(), rest, command)
    elif subcommand == "run":
        parse(run_parser(), rest, command)
    elif subcommand == "report":
        parse(report_parser(), rest, command)
    elif subcommand == "params":
        parse(params_parser(), rest, command)
    elif subcommand == "generate":
        parse(generate_parser(), rest, command)
    elif subcommand == "tune" and rest and rest[0] in TUNE_STEPS:
        parse(tune_parser(), rest, command)
    elif subcommand == "tune":
        # The one-step form, `schedc tune MODEL.mlir ...`: prepare's flags, less its -o.
        allowed = tune_prepare_flags() - {"-o", "--output", "-h", "--help"}
        unknown = [w for w in rest if w.startswith("-") and w.split("=")[0] not in allowed]
        assert not unknown, f"{command.where}: `{command.text}`: not flags of schedc tune: {unknown}"
        parse(tune_parser(), ["prepare", *rest, "-o", "DIR"], command)
    else:
        args = parse(compile_parser(), argv, command)
        if args is None:
            return
        check_pipeline(args.passes, command)
        if args.batch_buckets:
            from schedc.compiler.buckets import parse_buckets
            from schedc.errors import SchedcError

            try:
                parse_buckets(args.batch_buckets)
            except SchedcError as e:
                pytest.fail(f"{command.where}: `{command.text}`: {e}")


def check_schedc_opt(argv: list[str], command) -> None:
    from schedc.tools.schedc_opt import build_parser

    args = parse(build_parser(), argv, command)
    if args is not None:
        check_pipeline(args.passes, command)


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_command(command):
    argv = argv_of(command)
    if not argv or argv[0] in ("source", "cd", "export"):
        return
    for script in SCRIPT.findall(command.text):
        assert (ROOT / script).is_file(), f"{command.where}: `{command.text}`: {script} does not exist"
    if argv[0] == "schedc":
        check_schedc(argv[1:], command)
    elif argv[0] == "schedc-opt":
        check_schedc_opt(argv[1:], command)
    elif argv[0] == "./dev":
        assert argv[1:] in (["demo"], ["test"]), f"{command.where}: `{command.text}`: ./dev takes demo or test"


def test_the_pages_have_commands():
    """The reader finds the blocks (a broken fence would make every test above vacuous)."""
    assert any(c.document == README and c.text.startswith("schedc ") for c in COMMANDS)
    assert any(c.text.startswith("schedc-opt ") for c in COMMANDS)


def test_readme_is_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: the manual belongs in docs/ (at most 200)"


# -- links -----------------------------------------------------------------------------------

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)


def prose(text: str) -> str:
    """The text without fenced blocks and code spans, where `](` is not a link."""
    return re.sub(r"`[^`\n]*`", "", _FENCED.sub("", text))


def anchors(page) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation gone, spaces as hyphens."""
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t]*$", _FENCED.sub("", page.read_text()), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


LINKS = [(page, target) for page in PAGES if page.exists() for target in _LINK.findall(prose(page.read_text()))]


@pytest.mark.parametrize("page, target", LINKS, ids=[f"{p.relative_to(ROOT)}->{t}" for p, t in LINKS])
def test_link(page, target):
    if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
        return
    path, _, fragment = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{page.relative_to(ROOT)}: link to {target}: {path} does not exist"
    if fragment and linked.suffix == ".md":
        assert fragment in anchors(linked), f"{page.relative_to(ROOT)}: link to {target}: no heading #{fragment} in {path or page.name}"


def _written_by(argv: list[str]) -> list[str]:
    """The files and folders a README command writes: its -o, --report, --dump-phases and
    --params of an import, and the `.argN.npy` files --save-inputs writes beside -o."""
    written = []
    for i, word in enumerate(argv):
        flag, _, value = word.partition("=")
        if flag in ("-o", "--report", "--dump-phases") or (flag == "--params" and "import" in argv):
            written.append(value or argv[i + 1])
    if "--save-inputs" in argv and "-o" in argv:
        written.append(argv[argv.index("-o") + 1].rsplit(".", 1)[0] + ".arg0.npy")
    return written


def test_what_the_readmes_commands_write_is_ignored_by_git():
    import subprocess

    readme = [c for block in check_docs.shell_blocks(README) for c in block.commands]
    written = sorted({w.rstrip("/") + ("/x" if w.endswith("/") else "") for c in readme for w in _written_by(argv_of(c))})
    assert len(written) >= 10
    checked = subprocess.run(["git", "check-ignore", "--no-index", *written], cwd=ROOT, capture_output=True, text=True)
    ignored = set(checked.stdout.split())
    assert ignored == set(written), f"not ignored: {sorted(set(written) - ignored)}"
