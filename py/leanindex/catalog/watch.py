"""Change notices for served catalogs: one inotify instance per process (Linux), so a loaded
catalog learns in one system call that none of its files, folders, link or manifest can have
changed since it last compared their stamps, instead of one `lstat` per file on every call.

The notice only ever *adds* comparisons: a catalog with a quiet watch skips the stamp
comparison, any event on anything it watches (or a lost event: queue overflow, a watch the
kernel dropped) sends it back to the full comparison of `files.catalog_stamps`, and where no
watch can be set (another system, no inotify instance or watch left) every call compares as
before. The kernel queues an event before the write, rename, unlink, chmod or truncate that
causes it returns, so a change made through those calls is already queued when the next call
reads the queue: the catalog's files and folders, the folder holding the `catalog/<profile>`
link, and every folder above it (a root renamed away and another put in its place) are
watched. Two changes reach no inotify queue: a write through a memory map opened before the
watch started, and a mount over a watched folder. The caller compares the stamps at least once
a second whatever the watch says (`engine.loaded.STAMPS_VALID_S`), which bounds how long either
goes unseen.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
from collections.abc import Iterable

log = logging.getLogger(__name__)

# inotify(7) event bits. Files: written, truncated, metadata (mode, times, link count: an
# unlink or a rename over it), closed after writing, moved or deleted. Folders: an entry
# created, deleted or renamed in or out (a rename over a catalog file, a new write-ahead log,
# a switched `catalog/<profile>` link), or the folder itself moved or deleted.
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW = 0x4000
_MASK_ADD = 0x20000000
#: What is watched on every path of the catalog (a file never reports the folder events, nor a
#: folder the file ones that do not apply to it).
WATCH_MASK = _MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
#: What is watched on the folders above it: only their own move or removal (their other
#: entries change all the time, and a resolved root has no link among them).
ANCESTOR_MASK = _DELETE_SELF | _MOVE_SELF


class _Watcher:
    """The process's inotify instance: watch descriptors shared by the subscriptions that
    watch the same inode, and a changed mark per subscription, set by any event on one of its
    descriptors (all of them on a queue overflow)."""

    def __init__(self) -> None:
        from inotify_simple import INotify

        self.pid = os.getpid()
        self.notify = INotify(nonblocking=True)
        self.lock = threading.Lock()
        # Subscriptions ended while the lock was taken (a catalog's finalizer run by the garbage
        # collector inside a locked section of this very thread): dropped at the next lock.
        self.ended: collections.deque[int] = collections.deque()
        self.subscribers: dict[int, set[int]] = {}
        self.descriptors: dict[int, set[int]] = {}
        self.changed: dict[int, bool] = {}
        self.next_token = 0

    def subscribe(self, watches: Iterable[tuple[str, int]]) -> int:
        """A subscription watching each (path, event mask) (links followed, as the stats go
        through them; masks of one inode add up, so one subscription never narrows another's);
        raises `OSError` when a path cannot be watched (missing, no watch left), keeping
        nothing of the half-made subscription."""
        with self.lock:
            self._drop_ended()
            token = self.next_token
            self.next_token += 1
            self.descriptors[token] = set()
            self.changed[token] = False
            try:
                for path, mask in watches:
                    wd = self.notify.add_watch(path, mask | _MASK_ADD)
                    self.descriptors[token].add(wd)
                    self.subscribers.setdefault(wd, set()).add(token)
            except OSError:
                self._drop(token)
                raise
            return token

    def quiet(self, token: int) -> bool:
        """True when no event reached the subscription since the last call (which clears it)."""
        with self.lock:
            self._drop_ended()
            for event in self.notify.read(timeout=0):
                if event.mask & _Q_OVERFLOW:
                    for other in self.changed:
                        self.changed[other] = True
                for other in self.subscribers.get(event.wd, ()):
                    self.changed[other] = True
            changed = self.changed.get(token, True)
            if token in self.changed:
                self.changed[token] = False
            return not changed

    def unsubscribe(self, token: int) -> None:
        """Drop the subscription and the watches nobody else uses, now when the lock is free,
        else at the next call that takes it. Never waits: a finalizer may call this from
        inside a locked section of the same thread (the garbage collector runs where Python
        allocates), where waiting for the lock would never end."""
        self.ended.append(token)
        if self.lock.acquire(blocking=False):
            try:
                self._drop_ended()
            finally:
                self.lock.release()

    def _drop_ended(self) -> None:
        while self.ended:
            self._drop(self.ended.popleft())

    def _drop(self, token: int) -> None:
        for wd in self.descriptors.pop(token, set()):
            users = self.subscribers.get(wd)
            if users is None:
                continue
            users.discard(token)
            if not users:
                del self.subscribers[wd]
                try:
                    self.notify.rm_watch(wd)
                except OSError:
                    pass  # the kernel already dropped it (the inode went)
        self.changed.pop(token, None)


_watcher: _Watcher | None = None
_watcher_lock = threading.Lock()


def _process_watcher() -> _Watcher:
    """The watcher of this process, made on first use and again in a forked child (which must
    not read its parent's queue)."""
    global _watcher
    with _watcher_lock:
        if _watcher is None or _watcher.pid != os.getpid():
            _watcher = _Watcher()
        return _watcher


class CatalogWatch:
    """A subscription of one loaded catalog: `quiet()` is True when nothing it watches reported
    a change since the previous call. Start it *before* comparing the stamps it stands for, so a
    change after that comparison is an event."""

    def __init__(self, watcher: _Watcher, token: int) -> None:
        self._watcher = watcher
        self._token = token

    @classmethod
    def start(cls, watches: Iterable[tuple[str, int]]) -> CatalogWatch | None:
        """Watch each (path, event mask) (`watched_paths`); None where no watch can be set (not
        Linux, no `inotify_simple`, no inotify instance or watch left, a path missing): the
        caller then compares the stamps on every call, as without a watch."""
        try:
            watcher = _process_watcher()
            return cls(watcher, watcher.subscribe(watches))
        except (ImportError, AttributeError, OSError) as error:
            log.info("catalog changes are checked by stat on every call (no inotify watch: %s)", type(error).__name__)
            return None

    def quiet(self) -> bool:
        """True when no watched path reported a change since the last call; False after a fork
        (the child's queue is not this subscription's)."""
        watcher = self._watcher
        return watcher.pid == os.getpid() and watcher.quiet(self._token)

    def close(self) -> None:
        """End the subscription (its watches go when no other catalog uses them)."""
        watcher = self._watcher
        if watcher.pid == os.getpid():
            watcher.unsubscribe(self._token)


def watched_paths(catalog_dir: str, files: Iterable[str]) -> list[tuple[str, int]]:
    """What a loaded catalog watches, each with its event mask: its manifest and each catalog
    file, the folders they are in (renames over them, a write-ahead log appearing) and the folder
    holding the `catalog/<profile>` link (a rebuild switching it), with `WATCH_MASK`; every folder
    above that one, up to `/`, with `ANCESTOR_MASK` (`catalog_dir` is under a resolved root)."""
    base = catalog_dir.rstrip(os.sep) + os.sep
    holder = os.path.dirname(catalog_dir.rstrip(os.sep)) or os.sep
    wanted: dict[str, int] = {holder: WATCH_MASK, base: WATCH_MASK}
    for relative in files:
        folder = os.path.dirname(relative)
        while folder:
            wanted[base + folder] = WATCH_MASK
            folder = os.path.dirname(folder)
        wanted[base + relative] = WATCH_MASK
    above = holder
    while above != os.path.dirname(above):
        above = os.path.dirname(above)
        wanted.setdefault(above, ANCESTOR_MASK)
    return list(wanted.items())
