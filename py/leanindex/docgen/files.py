"""Reading doc-gen4's per-module declaration files from a folder or a `.tar.xz` archive.

doc-gen4 writes one `declaration-data-<Module>.bmp` file per module into its `doc-data/`
folder (JSON despite the extension), next to `.hash`/`.trace` build bookkeeping. Only files
named `declaration-data-*.bmp` are read; everything else (bookkeeping, READMEs, folders) is
skipped. An archive is streamed member by member (`tarfile` mode `r:xz`), never extracted to
disk, so memory holds one member at a time.
"""

from __future__ import annotations

import lzma
import os
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import ErrorCode, LeanIndexError

FILE_PREFIX = "declaration-data-"
FILE_SUFFIX = ".bmp"

ProgressCallback = Callable[[int, int], None]
"""`on_progress(done, total)`: files read of a folder, or compressed bytes read of an archive."""


@dataclass(frozen=True)
class DocgenFile:
    """One declaration file: its base name (`declaration-data-Init.Core.bmp`) and raw bytes."""

    name: str
    data: bytes


def is_declaration_file(base_name: str) -> bool:
    """Whether a base file name is a doc-gen4 declaration file (`declaration-data-*.bmp`)."""
    return base_name.startswith(FILE_PREFIX) and base_name.endswith(FILE_SUFFIX) and len(base_name) > len(FILE_PREFIX) + len(FILE_SUFFIX)


def module_of_file(base_name: str) -> str:
    """The module a declaration file is named after: `declaration-data-A.B.bmp` -> `A.B`."""
    return base_name[len(FILE_PREFIX) : -len(FILE_SUFFIX)]


def iter_docgen_files(path: str | Path, on_progress: ProgressCallback | None = None) -> Iterator[DocgenFile]:
    """Yield every `declaration-data-*.bmp` file of a folder (sorted by name) or `.tar.xz` archive
    (in archive order; members in sub-folders count by their base name).

    Raises `LeanIndexError(invalid_request)` when `path` is neither a folder nor a `.tar.xz`
    file, and `LeanIndexError(invalid_stream)` when the archive is corrupt or holds no
    declaration file at all.
    """
    source = Path(path)
    if source.is_dir():
        yield from _folder(source, on_progress)
    elif source.is_file() and source.name.endswith(".tar.xz"):
        yield from _archive(source, on_progress)
    else:
        what = "does not exist" if not source.exists() else "is neither a folder nor a .tar.xz archive"
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{source} {what}: give a doc-gen4 doc-data folder or a .tar.xz of its declaration-data-*.bmp files",
            {"path": str(source)},
        )


def _none_found(source: Path) -> LeanIndexError:
    return LeanIndexError(
        ErrorCode.INVALID_STREAM,
        f"{source} holds no {FILE_PREFIX}<Module>{FILE_SUFFIX} file",
        {"path": str(source)},
    )


def _folder(folder: Path, on_progress: ProgressCallback | None) -> Iterator[DocgenFile]:
    names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file() and is_declaration_file(entry.name))
    if not names:
        raise _none_found(folder)
    for done, name in enumerate(names, start=1):
        yield DocgenFile(name, (folder / name).read_bytes())
        if on_progress is not None:
            on_progress(done, len(names))


class _CountingReader:
    """A read-only file wrapper counting the bytes read, so progress can follow the compressed
    input of a streamed archive (whose member count is unknown until its end)."""

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._raw.read(size)
        self.consumed += len(chunk)
        return chunk


def _archive(archive: Path, on_progress: ProgressCallback | None) -> Iterator[DocgenFile]:
    total = archive.stat().st_size
    found = 0
    with open(archive, "rb") as raw:
        reader = _CountingReader(raw)
        try:
            # Mode `r|xz` streams: members are read in order without seeking or an index. The stubs
            # type `fileobj` as a file; any object with `read` is what tarfile reads.
            with tarfile.open(fileobj=reader, mode="r|xz") as tar:  # type: ignore[call-overload]
                for member in tar:
                    base = member.name.rsplit("/", 1)[-1]
                    if not member.isfile() or not is_declaration_file(base):
                        continue
                    handle = tar.extractfile(member)
                    assert handle is not None  # a regular file member always has content
                    found += 1
                    yield DocgenFile(base, handle.read())
                    if on_progress is not None:
                        on_progress(reader.consumed, total)
        except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as error:
            raise LeanIndexError(
                ErrorCode.INVALID_STREAM,
                f"{archive}: not a readable .tar.xz archive ({error})",
                {"path": str(archive)},
            ) from None
    if not found:
        raise _none_found(archive)
