"""Catalog files read as hostile input: regular files only, read within the size they had when
opened, given up when a read stops making progress.

Anything but a regular file in a catalog's place can wedge a reader: a FIFO blocks the open
until a writer comes, `/dev/zero` never ends. The builder writes only regular files into its
build folder, so everything else is refused before the first read. `CatalogFolder` opens the
build folder once through `catalog/<profile>` (the one symbolic link that is followed), then each
file relative to it: every component without following links (`O_NOFOLLOW`, so a link to
`/dev/zero` or out of the folder is refused), without waiting for a writer (`O_NONBLOCK`), and
`fstat` must show a regular file. A read stops at the size `fstat` gave; a file that shrinks or
grows meanwhile is refused. Digests run on worker threads, and a file whose read makes no
progress for `STALL_S` seconds (a hung network mount) is given up, so a verification always
returns; a thread stuck in such a read holds no lock and closes its file if the read returns.

`catalog_stamps` is the identity of a verified catalog that the engine compares on every call:
device, inode, type, size, modification and status-change time of each file (the change time,
`st_ctime_ns`, cannot be set back by a user, so an in-place edit that restores size and
modification time still shows).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO, TypeVar

from ..errors import ErrorCode, LeanIndexError
from ..small_files import HOSTILE_OPEN_FLAGS
from .layout import DATABASE_WAL_FILE, MANIFEST_FILE, CatalogPaths, catalog_file_problem

T = TypeVar("T")

#: Seconds a file read may go without progress (one chunk) before it is given up.
STALL_S = 10.0
#: Bytes read per step of a digest.
CHUNK_BYTES = 1 << 22
#: The largest manifest read (bytes); a real one is a few KiB.
MAX_MANIFEST_BYTES = 8 << 20

#: (st_dev, st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns)
FileStamp = tuple[int, int, int, int, int, int]


def stamp_of(st: os.stat_result) -> FileStamp:
    """The stamp of a file from its `stat` result."""
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def path_stamp(path: Path | str) -> FileStamp | None:
    """The stamp of `path` itself (a link is not followed; `lstat`), None when it cannot be
    stat'ed. Never opens the file."""
    try:
        return stamp_of(os.lstat(path))
    except OSError:
        return None


def link_target(paths: CatalogPaths) -> str | None:
    """What `catalog/<profile>` points at, None when it is no link."""
    try:
        return os.readlink(paths.catalog_dir)
    except OSError:
        return None


def catalog_stamps(paths: CatalogPaths, files: Iterable[str]) -> dict[str, object]:
    """What must stay unchanged for a verification to hold: the served manifest's stamp, the
    link target of `catalog/<profile>`, each of `files`' stamp (`path_stamp`), and that of
    DuckDB's write-ahead log (None: there is none, as verification requires). Stats only."""
    # Plain strings and `os.lstat`: the engine compares these on every call, and building a
    # `Path` per file cost more than the stats themselves.
    base = os.fspath(paths.catalog_dir) + os.sep
    stamps: dict[str, object] = {
        "manifest": path_stamp(paths.served_manifest),
        "link": link_target(paths),
        DATABASE_WAL_FILE: path_stamp(base + DATABASE_WAL_FILE),
    }
    lstat = os.lstat
    for relative in files:
        try:
            st = lstat(base + relative)
        except OSError:
            stamps[relative] = None
            continue
        stamps[relative] = (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return stamps


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class FileChanged(OSError):
    """A file's size changed while it was read (it is refused, not half read)."""


def digest_fd(fd: int, size: int, cancelled: Callable[[], bool] = lambda: False, progress: Callable[[], None] = lambda: None) -> str | None:
    """The sha256 (hex) of the first `size` bytes of the open regular file `fd` (read with
    `pread`, so the file offset is untouched), None when `cancelled()` turned true between two
    chunks. `progress()` is called after each chunk. Raises `FileChanged` when the file ends
    before `size` bytes or has a byte after them, `OSError` when a read fails."""
    digest = hashlib.sha256()
    buffer = bytearray(min(CHUNK_BYTES, max(size, 1)))
    view = memoryview(buffer)
    offset = 0
    while offset < size:
        if cancelled():
            return None
        got = os.preadv(fd, [view[: min(len(buffer), size - offset)]], offset)
        if got == 0:
            raise FileChanged(errno.EIO, "the file shrank while it was read")
        digest.update(view[:got])
        offset += got
        progress()
    if os.pread(fd, 1, size):
        raise FileChanged(errno.EIO, "the file grew while it was read")
    return digest.hexdigest()


def regular_file_sha256(path: Path) -> str:
    """The sha256 (hex) of the regular file at `path` (a link to one is followed), read within
    the size it had when opened. Raises `OSError`: `EINVAL` when it is no regular file (a FIFO
    or device is refused before any read), `FileChanged` when its size changes while read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"{_file_kind(st.st_mode)}, not a regular file", str(path))
        digest = digest_fd(fd, st.st_size)
        assert digest is not None  # never cancelled
        return digest
    finally:
        os.close(fd)


class DeadlineExceeded(TimeoutError):
    """A call given to `run_with_deadline` did not return in time (it goes on in its thread)."""


def run_with_deadline(fn: Callable[[], T], timeout_s: float, dispose: Callable[[T], None] | None = None) -> T:
    """`fn()` on a daemon thread; its result or its exception, or `DeadlineExceeded` when it did
    not return within `timeout_s` seconds. A result that comes after the deadline is handed to
    `dispose` (to close what it opened), on that thread."""
    done = threading.Event()
    lock = threading.Lock()
    abandoned = threading.Event()  # the caller stopped waiting
    values: list[T] = []  # `fn`'s result, once it returned
    errors: list[BaseException] = []  # what `fn` raised

    def work() -> None:
        try:
            values.append(fn())
        except BaseException as error:  # noqa: BLE001  (handed to the caller)
            errors.append(error)
        with lock:
            late = abandoned.is_set()
            done.set()
        if late and values and dispose is not None:
            dispose(values[0])

    threading.Thread(target=work, name="leanindex-catalog-io", daemon=True).start()
    if not done.wait(timeout_s):
        with lock:
            if not done.is_set():
                abandoned.set()
                raise DeadlineExceeded(f"no answer within {timeout_s:g} s")
    if errors:
        raise errors[0]
    return values[0]


class CatalogFile:
    """One catalog file opened by `CatalogFolder.open`: `relative` name, `fd` (read-only,
    regular), `stat` (its `fstat` at open)."""

    def __init__(self, relative: str, fd: int, st: os.stat_result):
        self.relative = relative
        self.fd = fd
        self.stat = st
        self._reading = False
        self._orphaned = False

    @property
    def stamp(self) -> FileStamp:
        """Its stamp when it was opened (compare with `path_stamp` of its path)."""
        return stamp_of(self.stat)

    def reader(self) -> BinaryIO:
        """A buffered reader over the file from its start (closing it leaves `fd` open)."""
        handle = open(self.fd, "rb", closefd=False)  # noqa: SIM115  (the caller closes it)
        handle.seek(0)
        return handle

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class CatalogFolder:
    """The build folder `catalog/<profile>` points at, opened once, and the files opened under
    it (use as a context manager; `close` closes them all).

    Raises `LeanIndexError(catalog_unavailable)` when there is no catalog folder. `link` is the
    link target read just before opening it.
    """

    def __init__(self, paths: CatalogPaths):
        self.paths = paths
        self.link = link_target(paths)
        self._files: list[CatalogFile] = []
        self._lock = threading.Lock()
        try:
            self._dir = os.open(paths.catalog_dir, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            raise LeanIndexError(
                ErrorCode.CATALOG_UNAVAILABLE,
                f"profile {paths.profile!r} has no catalog under this root; get one with `leanindex catalog pull`, "
                f"`leanindex catalog import-docgen`, `leanindex catalog build` (needs Lean), or `leanindex demo` (Lean core)",
                {"profile": paths.profile},
            ) from None

    def __enter__(self) -> CatalogFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the folder and every file no worker is reading (a worker stuck in a read
        closes its file when the read returns)."""
        with self._lock:
            for file in self._files:
                if file._reading:
                    file._orphaned = True
                else:
                    file._close()
            self._files = []
            if self._dir >= 0:
                os.close(self._dir)
                self._dir = -1

    def holds(self, name: str) -> bool:
        """True when the build folder has an entry `name` of any type (a link is not followed)."""
        try:
            os.stat(name, dir_fd=self._dir, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def refusal(self, relative: str, why: str, code: ErrorCode = ErrorCode.CATALOG_UNAVAILABLE) -> LeanIndexError:
        """The coded error about catalog file `relative` (no server path in it)."""
        return LeanIndexError(
            code, f"catalog file {relative} of profile {self.paths.profile!r} {why}", {"profile": self.paths.profile, "file": relative}
        )

    def open(self, relative: str, max_bytes: int | None = None) -> CatalogFile:
        """Open catalog file `relative` (a catalog file's name, `layout.catalog_file_problem`, or
        the manifest's) for reading, refusing anything but a regular file before reading a
        byte; with `max_bytes`, a larger file too. Raises `LeanIndexError(catalog_unavailable)`
        naming `relative`: not a catalog file's name, missing, a symbolic link (the file or a
        folder on its way), a FIFO, device, socket or directory, too large, unreadable."""
        problem = None if relative == MANIFEST_FILE else catalog_file_problem(relative)
        if problem is not None:
            raise self.refusal(relative, f"is refused: {problem}")
        *folders, name = relative.split("/")
        opened: list[int] = []
        try:
            at = self._dir
            for folder in folders:
                at = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | HOSTILE_OPEN_FLAGS, dir_fd=at)
                opened.append(at)
            fd = os.open(name, HOSTILE_OPEN_FLAGS, dir_fd=at)
        except OSError as error:
            if error.errno == errno.ENOENT:
                raise self.refusal(relative, "is missing") from None
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise self.refusal(relative, "is a symbolic link or lies under one (a catalog holds regular files only)") from None
            raise self.refusal(relative, f"is unreadable: {error.strerror or error}") from None
        finally:
            for fd_ in opened:
                os.close(fd_)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise self.refusal(relative, f"is {_file_kind(st.st_mode)} (a catalog holds regular files only)")
        if max_bytes is not None and st.st_size > max_bytes:
            os.close(fd)
            raise self.refusal(relative, f"is larger than {max_bytes} bytes")
        file = CatalogFile(relative, fd, st)
        with self._lock:
            self._files.append(file)
        return file

    def digests(self, files: list[CatalogFile], workers: int = 2) -> dict[str, str]:
        """The sha256 (hex) of each of `files` by relative name, read on `workers` daemon
        threads (hashlib releases the GIL on large reads, so two hash about twice as fast).

        Raises `LeanIndexError(catalog_unavailable)` naming a file whose read failed, whose
        size changed while it was read, or that made no progress for `STALL_S` seconds (the
        other reads are then stopped, and the stuck one is left to its thread)."""
        pending = sorted(files, key=lambda f: f.stat.st_size)  # largest first, popped from the end
        results: dict[str, str] = {}
        last_progress: dict[str, float] = {}
        failure: list[LeanIndexError] = []
        cancelled = threading.Event()
        changed = threading.Condition(self._lock)

        def read(file: CatalogFile) -> str | BaseException | None:
            def progress() -> None:
                with changed:
                    last_progress[file.relative] = time.monotonic()

            try:
                return digest_fd(file.fd, file.stat.st_size, cancelled.is_set, progress)
            except BaseException as error:  # noqa: BLE001  (reported by the waiting thread)
                return error

        def worker() -> None:
            while True:
                with changed:
                    if cancelled.is_set() or not pending:
                        return
                    file = pending.pop()
                    file._reading = True
                    last_progress[file.relative] = time.monotonic()
                outcome = read(file)
                with changed:
                    file._reading = False
                    del last_progress[file.relative]
                    if file._orphaned:
                        file._close()
                    if isinstance(outcome, str):
                        results[file.relative] = outcome
                    elif isinstance(outcome, FileChanged):
                        failure.append(self.refusal(file.relative, "changed while it was read"))
                    elif isinstance(outcome, OSError):
                        failure.append(self.refusal(file.relative, f"is unreadable: {outcome.strerror or outcome}"))
                    elif outcome is not None:
                        failure.append(self.refusal(file.relative, f"could not be read ({type(outcome).__name__})"))
                    changed.notify_all()

        for n in range(min(workers, len(files))):
            threading.Thread(target=worker, name=f"leanindex-verify-{n}", daemon=True).start()
        with changed:
            while len(results) < len(files) and not failure:
                now = time.monotonic()
                stalled = sorted(r for r, at in last_progress.items() if now - at >= STALL_S)
                if stalled:
                    failure.append(self.refusal(stalled[0], f"made no read progress for {STALL_S:g} s"))
                    break
                oldest = min(last_progress.values(), default=now)
                changed.wait(timeout=max(0.01, STALL_S - (now - oldest)))
            if failure:
                cancelled.set()
                raise failure[0]
        return results

    def open_manifest(self) -> CatalogFile:
        """Open the served manifest as a catalog file (`open`: regular, not a link, at most
        `MAX_MANIFEST_BYTES`), so that reading it cannot block."""
        return self.open(MANIFEST_FILE, max_bytes=MAX_MANIFEST_BYTES)
