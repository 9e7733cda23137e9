"""Runs the commands of the documentation's shell blocks for real, on the host CPU.

    python bench/check_docs.py [--keep DIR] [--dry-run]

Every fenced shell block (```sh, ```bash, ```shell, ```console) of README.md and docs/*.md runs
in one `bash -e` per block, in document order (README.md, then the docs/ pages in the order
README.md lists them), all in one temporary folder holding a copy of examples/, with this
repository's .venv/bin first on PATH: a block can read what an earlier block wrote, as a reader
following the pages in order would. Per block it prints `ok`, `skipped` or `FAILED` with the
failing command and its stderr, and exits 1 if any block failed.

Not run: what needs a GPU (`--device=cuda|hip|vulkan`, `schedc tune bench`, the one-step
`schedc tune MODEL`, `schedc tune merge` of tune bench's results, bench/ lines that say CUDA or
GPU) and any later line that reads a file one of those would have written; the `./dev` lines
(they set up the whole environment); `source` lines (.venv/bin is on PATH already). An optional
`[--flag]` of a command is left out. `lit` and `python -m pytest` lines run in the repository,
`python bench/...` scripts from the repository's bench/.

It compiles models (minutes), so it is not part of CI; test/python/test_docs.py, which reuses
the block reader below, parses the same commands without running them.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = ("sh", "bash", "shell", "console")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")


@dataclass(frozen=True)
class Command:
    document: Path
    line: int  # the command's first line in the document, from 1
    text: str  # backslash continuations joined, the comment after ` #` cut
    raw: str  # as written, comments included

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Block:
    document: Path
    line: int  # the line of the opening fence
    commands: tuple[Command, ...]


def strip_comment(line: str) -> str:
    """The line without its shell comment: a `#` that starts a word, outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _commands(document: Path, language: str, lines: list[tuple[int, str]]) -> tuple[Command, ...]:
    commands, pending, first, raw = [], "", 0, ""
    for number, line in lines:
        if language == "console" and not pending:
            if not line.lstrip().startswith("$ "):
                continue  # a console block's output
            line = line.lstrip()[2:]
        if not pending:
            first, raw = number, ""
        raw += line + "\n"
        text = strip_comment(line)
        if text.endswith("\\"):
            pending += text[:-1].rstrip() + " "
            continue
        text = (pending + text.strip()).strip()
        pending = ""
        if text:
            commands.append(Command(document, first, text, raw.rstrip("\n")))
    return tuple(commands)


def shell_blocks(document: Path) -> list[Block]:
    """The fenced shell blocks of a Markdown file, with their commands."""
    blocks, fence, language, start, lines = [], None, "", 0, []
    for number, line in enumerate(document.read_text().splitlines(), start=1):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence, language, start, lines = match.group(1), match.group(2).lower(), number, []
            continue
        if match and match.group(1).startswith(fence) and not match.group(2) and line.strip() == match.group(1):
            if language in SHELL_LANGUAGES:
                blocks.append(Block(document, start, _commands(document, language, lines)))
            fence = None
            continue
        lines.append((number, line))
    return blocks


def documents() -> list[Path]:
    """README.md, then docs/*.md in the order README.md's Documentation section lists them
    (the order of its links, where it has no such section), then the rest."""
    readme = ROOT / "README.md"
    text = readme.read_text()
    linked = re.findall(r"\]\((docs/[\w.-]+\.md)", text.partition("\n## Documentation")[2] or text)
    pages = [ROOT / p for p in dict.fromkeys(linked) if (ROOT / p).exists()]
    pages += sorted(p for p in (ROOT / "docs").glob("*.md") if p not in pages)
    return [readme, *pages]


# -- what runs here --------------------------------------------------------------------------

_GPU_DEVICE = re.compile(r"--device[= ](cuda|hip|vulkan)\b")
_OPTIONAL = re.compile(r"\s\[[^\]\"']*\]")  # `[--device=cuda]`: an optional flag, left out here
_BENCH = re.compile(r"\bpython3?\s+bench/")


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _outputs(words: list[str]) -> list[str]:
    """The files a command names as what it writes (-o, --output, --database)."""
    found = []
    for i, word in enumerate(words):
        if word in ("-o", "--output", "--database") and i + 1 < len(words):
            found.append(words[i + 1])
        for flag in ("--output=", "--database="):
            if word.startswith(flag):
                found.append(word[len(flag):])
    return found


def skip_reason(command: Command, text: str, unwritten: list[str]) -> str | None:
    words = _words(text)
    if not words:
        return "empty"
    if words[0] == "./dev":
        return "./dev sets up the whole environment: run it yourself"
    if words[0] == "source":
        return ".venv/bin is on PATH already"
    if _GPU_DEVICE.search(text):
        return "needs a GPU"
    if words[:2] == ["schedc", "tune"]:
        step = words[2] if len(words) > 2 else ""
        if step == "bench":
            return "needs a GPU"
        if step == "merge":
            return "needs tune bench's results, made on a GPU"
        if step != "prepare":
            return "the one-step schedc tune needs a GPU"
    if _BENCH.search(text) and re.search(r"cuda|gpu", command.raw, re.IGNORECASE):
        return "a CUDA benchmark"
    for name in unwritten:
        if any(name in word for word in words):
            return f"reads {name}, which a skipped line writes"
    return None


def shell_line(text: str) -> str:
    """The command as this script runs it (repository paths made absolute)."""
    words = _words(text)
    if words and (words[0] == "lit" or words[:3] == ["python", "-m", "pytest"]):
        return f'(cd "$SCHEDC_REPO" && {text})'
    return _BENCH.sub(lambda m: m.group(0).replace("bench/", '"$SCHEDC_REPO"/bench/'), text)


def block_script(block: Block, current: Path) -> tuple[list[str], list[str]]:
    """The block as a bash script (each command after a line that writes its name into
    `current`), and a note per skipped line."""
    notes, script, unwritten = [], [], []
    for command in block.commands:
        text = _OPTIONAL.sub("", command.text)
        reason = skip_reason(command, text, unwritten)
        if reason:
            notes.append(f"  skipped {command.where}: {command.text}  ({reason})")
            unwritten += _outputs(_words(text))
            continue
        script.append(f"printf '%s\\n' {shlex.quote(command.where + ': ' + command.text)} > {shlex.quote(str(current))}")
        script.append(shell_line(text))
    return script, notes


def run_block(block: Block, folder: Path, env: dict) -> tuple[str, list[str], str]:
    """(`ok` | `skipped` | `FAILED`, notes, what to print on failure)."""
    current = folder / ".check_docs.current"
    script, notes = block_script(block, current)
    if not script:
        return "skipped", notes, ""
    result = subprocess.run(["bash", "-e", "-c", "\n".join(["set -e", *script])], cwd=folder, env=env, capture_output=True, text=True, check=False)
    if result.returncode == 0:
        return "ok", notes, ""
    failed = current.read_text().strip() if current.exists() else "?"
    detail = f"  command: {failed}\n  exit code {result.returncode}; stderr:\n" + "\n".join(result.stderr.splitlines()[-40:])
    if result.stdout.strip():  # lit reports its failures on stdout
        detail += "\n  stdout:\n" + "\n".join(result.stdout.splitlines()[-20:])
    return "FAILED", notes, detail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", metavar="DIR", help="run in DIR (kept afterwards) instead of a temporary folder")
    parser.add_argument("--dry-run", action="store_true", help="print each block's script and what it skips; run nothing")
    args = parser.parse_args()
    if args.dry_run:
        for document in documents():
            for block in shell_blocks(document):
                script, notes = block_script(block, Path("$CURRENT"))
                print(f"== {block.document.relative_to(ROOT)}:{block.line}")
                for line in script[1::2] or ["  (nothing to run)"]:  # the commands, not their printf
                    print(line)
                for note in notes:
                    print(note)
        return 0
    folder = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="schedc-docs-"))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "examples", folder / "examples", dirs_exist_ok=True)
    env = dict(os.environ, SCHEDC_REPO=str(ROOT), PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    failures = 0
    try:
        for document in documents():
            for block in shell_blocks(document):
                status, notes, detail = run_block(block, folder, env)
                print(f"{status:7s} {block.document.relative_to(ROOT)}:{block.line}", flush=True)
                for note in notes:
                    print(note)
                if status == "FAILED":
                    failures += 1
                    print(detail, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{failures} block(s) failed" if failures else "every block ran", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
