"""Writing a command's outputs whole or not at all, without replacing what is not a file.

A regular file (or a path that does not exist yet) is written to a temporary file beside it and
renamed over it, so a failure never leaves half a file. A symlink is followed: its target is
written, the link stays. A device or a FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is
written in place: renaming a file over it would replace the device node itself.

Several outputs of one run (the module and its report) are staged together and committed only
when every one of them could be written, so a failed run leaves none of them behind.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path

from schedc.errors import SchedcError


def _reason(error: OSError) -> str:
    return error.strerror or type(error).__name__


def written_in_place(path: str) -> bool:
    """Whether an output is written into what is there instead of replacing it: a device, a
    FIFO, or a stream of this process (/dev/stdout, /dev/fd/N, /proc/self/fd/N), even where it
    is redirected to a regular file (a rename would leave the shell's open file empty)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # absent (a new file), or a dangling link
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        return False  # a directory is never an output (check_output_path says so)
    if path == "-" or path.startswith(("/dev/", "/proc/")):
        return True
    return mode is not None and not stat.S_ISREG(mode)


def check_output_path(path: str, inputs=(), what: str = "output") -> None:
    """Fails early for an output that can never be written: a directory, a path under a file,
    or an input file."""
    if path == "-" or written_in_place(path):
        return
    real = Path(os.path.realpath(path))
    if real.is_dir():
        raise SchedcError(f"{path}: is a directory; the {what} must be a file")
    _check_parent(path, real, what)
    for source in inputs:
        if source and source != "-" and Path(source).exists() and real.exists() and os.path.samefile(real, source):
            raise SchedcError(f"{path}: the {what} is the input file; choose another -o")


def _check_parent(path: str, real: Path, what: str) -> None:
    """The nearest existing folder above `real` must be one: not a file (/etc/passwd/x)."""
    parent = real.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise SchedcError(f"{path}: {parent} is not a directory; the {what} cannot be written there")


def check_output_folder(folder: str, what: str = "output folder") -> None:
    """A folder an output can be made in: not a file, not under one."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise SchedcError(f"{folder}: exists and is not a folder")
    _check_parent(folder, path.absolute(), what)


def check_distinct(outputs: dict[str, str | None]) -> None:
    """Fails when two outputs of one run (what -> path) are one file; devices and streams may
    take several (`-o /dev/null --report /dev/null`)."""
    seen: dict[str, str] = {}
    for what, path in outputs.items():
        if not path or written_in_place(path):
            continue
        real = os.path.realpath(path)
        if real in seen:
            raise SchedcError(f"{path}: the {what} and the {seen[real]} are one file; name two files")
        seen[real] = what


class StagedOutputs:
    """Outputs written to temporary files first; `commit` puts them all in place."""

    def __init__(self):
        self._renames: list[tuple[Path, Path]] = []  # (temporary file, final path)
        self._in_place: list[tuple[str, Path | None, bytes]] = []  # devices, FIFOs, stdout

    def __enter__(self) -> "StagedOutputs":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.discard()

    def add(self, path: str, data: bytes | str) -> None:
        data = data.encode() if isinstance(data, str) else data
        if path == "-":
            self._in_place.append((path, None, data))
            return
        if written_in_place(path):
            self._in_place.append((path, Path(path), data))
            return
        check_output_path(path)
        real = Path(os.path.realpath(path))  # a symlink's target, even a dangling one's
        try:
            mode = real.stat().st_mode if real.exists() else None
        except OSError as e:
            raise SchedcError(f"{path}: cannot write ({_reason(e)})") from None
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
        except OSError as e:
            raise SchedcError(f"{path}: cannot write ({_reason(e)})") from None
        staged = Path(tmp)
        self._renames.append((staged, real))
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(staged, 0o666 & ~umask)  # mkstemp makes 0600; new outputs get the usual mode
            else:
                os.chmod(staged, stat.S_IMODE(mode))  # an existing file keeps its mode
        except OSError as e:
            raise SchedcError(f"{path}: cannot write ({_reason(e)})") from None

    def commit(self) -> None:
        """Writes the in-place outputs (they are the ones that can fail), then renames."""
        try:
            for path, real, data in self._in_place:
                if real is None:
                    sys.stdout.buffer.write(data)
                    sys.stdout.flush()
                    continue
                try:
                    with open(real, "wb") as f:
                        f.write(data)
                except OSError as e:
                    raise SchedcError(f"{path}: cannot write ({_reason(e)})") from None
            for staged, real in self._renames:
                try:
                    os.replace(staged, real)
                except OSError as e:
                    raise SchedcError(f"{real}: cannot write ({_reason(e)})") from None
        finally:
            self.discard()

    def discard(self) -> None:
        for staged, _ in self._renames:
            staged.unlink(missing_ok=True)
        self._renames.clear()
        self._in_place.clear()


def write_output(path: str, data: bytes | str) -> None:
    """Writes one output whole or not at all (see the module's docstring)."""
    with StagedOutputs() as outputs:
        outputs.add(path, data)
        outputs.commit()


def write_folder(path: str, files: dict[str, bytes]) -> None:
    """Writes `files` (name -> bytes) into the folder `path`, each file whole or not at all."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise SchedcError(f"{path}: exists and is not a folder")
    for name, data in files.items():
        write_output(str(folder / name), data)


@contextlib.contextmanager
def staged_file(path: str):
    """A temporary path beside `path` for a writer that writes files itself (IREE's archive
    writer): renamed over `path` when the block ends without an error, removed otherwise."""
    check_output_path(path)
    real = Path(os.path.realpath(path))
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
        os.close(fd)
    except OSError as e:
        raise SchedcError(f"{path}: cannot write ({_reason(e)})") from None
    staged = Path(tmp)
    try:
        yield staged
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staged, 0o666 & ~umask)
        os.replace(staged, real)
    except OSError as e:
        raise SchedcError(f"{path}: cannot write ({_reason(e)})") from None
    finally:
        staged.unlink(missing_ok=True)
