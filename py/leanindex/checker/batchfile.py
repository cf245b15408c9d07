"""The files of `leanindex check-batch`: requests in, one JSON line each, and results out, one
JSON line each, appended as checks complete, so that a run killed at any point resumes.

Input (`read_requests`): each non-blank line is a JSON object, a `BatchItem` (`id`,
`environment`, `code`, optional `timeout_s` and `reference`); `environment` and `timeout_s`
default to the run's. A line that is JSON with a string `id` but not a valid request is answered
at once with an `invalid_request` result; a line without one stops the run (`invalid_request`,
naming the line), as does an id repeated in the input.

Output (`ResultLog`): each line is a `BatchResult`. On opening, the ids already answered are
read back and skipped; a last line cut short (a run killed in the middle of a write: no final
newline, and it starts as every result line does, `{"id":`) is removed first, so its id is
checked again. Anything else means the file is something else (a complete line that is not a
result, a last line that cannot be the start of one, a line over `MAX_RESULT_LINE_BYTES`, a
file that is not a regular file, the input file itself): refused (`invalid_request`), never
changed. The file is locked (`flock`) for the whole run, so a second run on the same file is
refused (`busy`) instead of answering every id twice.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from ..base import Frozen
from ..errors import ErrorCode, LeanIndexError
from ..validation import invalid_request
from .batch import result_of
from .models import BatchItem, BatchResult


def _refuse(message: str, **details: object) -> LeanIndexError:
    return LeanIndexError(ErrorCode.INVALID_REQUEST, message, dict(details))


#: Longest results line read back (bytes): far above any answer (code is capped at 256 KiB).
MAX_RESULT_LINE_BYTES = 64 * 1024 * 1024
#: How every results line starts (`BatchResult` serialises `id` first).
_RESULT_START = b'{"id":'


def _regular(path: str | Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def count_lines(path: str) -> int | None:
    """Non-blank lines of `path` (the number of requests, for the progress bar), one line in
    memory at a time; None for stdin (`-`) and anything that is not a regular file (a pipe can
    be read only once: its lines are for the checks)."""
    if path == "-" or not _regular(path):
        return None
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


class ResultLog:
    """The results file, opened for appending after its answered ids were read back.

    `done` holds those ids and `errors` counts the results in the file that are errors (those
    read back and those written); `repaired_bytes` is the size of a cut-short last line that
    was removed (0 when there was none). `source` is the input file, which must not be `path`.
    Raises `LeanIndexError`: `invalid_request` for a file that is not a results file (module
    docstring), naming the line; `busy` when another run holds the file.
    """

    def __init__(self, path: str | Path, source: str | None = None):
        self.path = Path(path)
        self.done: set[str] = set()
        self.errors = 0
        self.repaired_bytes = 0
        if str(path) == "-":
            raise _refuse("--out must name a file (results are appended to it and read back on a rerun)", out="-")
        if self.path.exists():
            if not _regular(self.path):
                raise _refuse(f"{self.path} is not a regular file; give another --out file", out=str(self.path))
            if source not in (None, "-") and self.path.samefile(source):
                raise _refuse(f"--out {self.path} is the input file; give another --out file", out=str(self.path))
        self._handle: IO[bytes] = open(self.path, "ab")
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise LeanIndexError(
                ErrorCode.BUSY, f"another check-batch run is writing {self.path}; wait for it to end", {"out": str(self.path)}
            ) from None
        try:
            self._read_back()
        except BaseException:
            self._handle.close()
            raise

    def _read_back(self) -> None:
        complete_end = 0
        with open(self.path, "rb") as handle:
            for number, line in enumerate(iter(lambda: handle.readline(MAX_RESULT_LINE_BYTES + 1), b""), start=1):
                if len(line) > MAX_RESULT_LINE_BYTES:
                    raise _refuse(
                        f"{self.path} line {number} is longer than any batch result; give another --out file", out=str(self.path), line=number
                    )
                if not line.endswith(b"\n"):
                    if line[: len(_RESULT_START)] != _RESULT_START[: len(line)]:
                        raise _refuse(
                            f"{self.path} line {number} is not a batch result; give another --out file", out=str(self.path), line=number
                        )
                    break
                complete_end += len(line)
                if not line.strip():
                    continue
                try:
                    result = BatchResult.model_validate_json(line)
                except ValidationError:
                    raise _refuse(
                        f"{self.path} line {number} is not a batch result; give another --out file", out=str(self.path), line=number
                    ) from None
                self.done.add(result.id)
                self.errors += result.error is not None
        size = self.path.stat().st_size
        if size > complete_end:
            self.repaired_bytes = size - complete_end
            os.truncate(self.path, complete_end)

    def write(self, result: BatchResult) -> None:
        """Append one result as one line, in one write, flushed to the operating system (so a
        killed process loses at most the line being written, which the next open removes)."""
        self._handle.write(result.model_dump_json().encode("utf-8") + b"\n")
        self._handle.flush()
        self.done.add(result.id)
        self.errors += result.error is not None

    def close(self) -> None:
        """Close the file, which releases its lock."""
        self._handle.close()

    def __enter__(self) -> ResultLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RequestReader:
    """Iterates the requests of the input file `path` (`-`: stdin) that `skip` does not hold,
    as `BatchItem`s, or as `BatchResult`s for lines refused before checking (see the module
    docstring); `environment` and `timeout_s` fill fields a line leaves out. `skipped` counts
    the lines whose id was in `skip`.
    """

    def __init__(
        self, path: str, skip: set[str], *, environment: str | None, timeout_s: float | None, on_skip: Callable[[], None] | None = None
    ):
        self.path = path
        self.skip = skip
        self.defaults = {k: v for k, v in {"environment": environment, "timeout_s": timeout_s}.items() if v is not None}
        self.skipped = 0
        self.on_skip = on_skip

    def __iter__(self) -> Iterator[BatchItem | BatchResult]:
        seen: set[str] = set()
        handle = sys.stdin.buffer if self.path == "-" else open(self.path, "rb")
        try:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                fields = self._fields(raw, number)
                item_id = fields["id"]
                if item_id in seen:
                    raise _refuse(f"input line {number} repeats the id {item_id!r}; ids must be unique", line=number, id=item_id)
                seen.add(item_id)
                if item_id in self.skip:
                    self.skipped += 1
                    if self.on_skip is not None:
                        self.on_skip()
                    continue
                try:
                    yield BatchItem.model_validate({**self.defaults, **fields})
                except ValidationError as error:
                    yield result_of(item_id, invalid_request(error.errors()))
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()

    def _fields(self, raw: bytes, number: int) -> dict:
        """The line's JSON object; `invalid_request` naming the line when it is not one with a
        string `id`."""
        try:
            fields = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            raise _refuse(f"input line {number} is not JSON: {type(error).__name__}: {error}", line=number) from None
        if not isinstance(fields, dict) or not isinstance(fields.get("id"), str) or not fields["id"]:
            raise _refuse(f"input line {number} has no string `id`; every request needs one", line=number)
        try:
            fields["id"].encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (`"\ud800"`) is valid JSON but no text: the results file could not hold it.
            raise _refuse(f"input line {number} has an `id` that is not Unicode text (a lone surrogate)", line=number) from None
        return fields


class BatchRunReport(Frozen):
    """What one `leanindex check-batch` run did: `answered` results written by this run
    (`counts`: `accepted`, `incomplete`, `rejected`, `error`), `skipped` requests whose result
    was already in `out`, `repaired_bytes` of a cut-short last line removed from `out`, and
    `out_errors`, the error results in `out` after the run (this run's and earlier runs')."""

    out: str
    answered: int
    skipped: int
    repaired_bytes: int
    counts: dict[str, int]
    out_errors: int
