"""Checks a compiled module's file before IREE maps it.

IREE's runtime maps a .vmfb and trusts it: the FlatBuffer is verified, but the executables
embedded beside it (ELF shared objects, PTX, SPIR-V) are loaded as they are, and a damaged one
can crash the process. A .vmfb as IREE 3.13 writes it is a zip archive (stored, uncompressed)
whose first member `module.fb` is the bytecode module's size-prefixed FlatBuffer (file
identifier "IREE") and
whose other members are the embedded executables; every member carries a CRC-32 in its local
header and in the central directory. Those checksums are what is verified here. A bare
FlatBuffer (no archive) has no checksum: only its identifier is checked, and IREE's own
FlatBuffer verifier does the rest.
"""

from __future__ import annotations

import zipfile

from schedc.errors import RuntimeLoadError

ZIP_MAGIC = b"PK\x03\x04"
FLATBUFFER_IDENTIFIER = b"IREE"  # after the size prefix and the root offset: bytes 8..12
MODULE_MEMBER = "module.fb"


def check_module_file(path: str) -> None:
    """Raises RuntimeLoadError, naming what is wrong, unless `path` is an intact module."""
    with open(path, "rb") as f:
        head = f.read(12)
    if head[:4] == ZIP_MAGIC:
        _check_archive(path)
    elif FLATBUFFER_IDENTIFIER not in (head[4:8], head[8:12]):  # without or with a size prefix
        raise RuntimeLoadError(f"{path}: not an IREE module (.vmfb): no IREE archive or FlatBuffer header")


def _check_archive(path: str) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if MODULE_MEMBER not in names:
                raise RuntimeLoadError(f"{path}: damaged IREE module: its archive has no {MODULE_MEMBER}")
            damaged = archive.testzip()  # reads every member through its local header, checks its CRC-32
            if damaged is not None:
                raise RuntimeLoadError(f"{path}: damaged IREE module: '{damaged}' does not match its checksum")
            with archive.open(MODULE_MEMBER) as member:
                head = member.read(12)
    except RuntimeLoadError:
        raise
    except Exception as e:  # zipfile raises many kinds on a broken archive (BadZipFile, struct, EOF, ...)
        raise RuntimeLoadError(f"{path}: damaged IREE module: its archive cannot be read ({type(e).__name__}: {e})") from None
    if head[8:12] != FLATBUFFER_IDENTIFIER:
        raise RuntimeLoadError(f"{path}: damaged IREE module: {MODULE_MEMBER} is not an IREE FlatBuffer")
