"""A served catalog notices every change through its inotify watch, and compares the stamps only
when something it watches reported an event (issue 31: the per-call `lstat` of every catalog file
was the largest fixed cost of a search or inspect).

Each change below is one that the stamp comparison (`files.catalog_stamps`) catches; with the
watch quiet the comparison is skipped, so each test shows the watch is what sends the call back
to the comparison: `STAMPS_VALID_S` is raised so the time window cannot, and the comparisons are
counted.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from leanindex.catalog import watch as catalog_watch
from leanindex.catalog.layout import CatalogPaths
from leanindex.engine import loaded as loaded_module
from leanindex.engine.loaded import LoadedCatalog
from leanindex.sample import sample_stream_path
from streamkit import build

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's; elsewhere every call compares the stamps")

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per stamp comparison a `LoadedCatalog.unchanged` made."""
    calls: list[int] = []
    original = loaded_module.catalog_stamps

    def counting(paths: CatalogPaths, files: object) -> dict[str, object]:
        calls.append(1)
        return original(paths, files)  # type: ignore[arg-type]

    monkeypatch.setattr(loaded_module, "catalog_stamps", counting)
    monkeypatch.setattr(loaded_module, "STAMPS_VALID_S", 1e9)
    return calls


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LoadedCatalog]:
    build(tmp_path, "sample", SAMPLE_LINES)
    catalog = LoadedCatalog.open(CatalogPaths.of(tmp_path, "sample"))
    yield catalog
    catalog.close()


def folder(catalog: LoadedCatalog) -> Path:
    return catalog.paths.catalog_dir


def rewrite_in_place(catalog: LoadedCatalog) -> None:
    path = folder(catalog) / "index" / "kind.npy"
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(data[:1])  # the same byte: only the times say it was written


def rename_over(catalog: LoadedCatalog) -> None:
    target = folder(catalog) / "index" / "flags.npy"
    copy = target.with_name("flags.copy")
    shutil.copyfile(target, copy)
    os.replace(copy, target)


def new_write_ahead_log(catalog: LoadedCatalog) -> None:
    (folder(catalog) / "catalog.duckdb.wal").write_bytes(b"")


def chmod(catalog: LoadedCatalog) -> None:
    os.chmod(folder(catalog) / "declarations.parquet", 0o600)


def truncate(catalog: LoadedCatalog) -> None:
    os.truncate(folder(catalog) / "index" / "hidden.npy", 0)


def manifest_moved_away(catalog: LoadedCatalog) -> None:
    manifest = folder(catalog) / "manifest.json"
    os.replace(manifest, manifest.with_name("manifest.old"))


def link_switched(catalog: LoadedCatalog) -> None:
    link = catalog.paths.catalog_dir
    target = link.parent / os.readlink(link)
    shutil.copytree(target, target.with_name(target.name + "-copy"))
    fresh = link.with_name("next-link")
    os.symlink(os.readlink(link) + "-copy", fresh)
    os.replace(fresh, link)


def root_replaced(catalog: LoadedCatalog) -> None:
    # The root renamed away and a copy put in its place: every file the same, every inode new.
    root = catalog.paths.root
    os.rename(root, root.with_name(root.name + "-old"))
    shutil.copytree(root.with_name(root.name + "-old"), root, symlinks=True)


def text_file_rewritten(catalog: LoadedCatalog) -> None:
    path = folder(catalog) / "index" / "text" / "vocabulary.json"
    path.write_bytes(path.read_bytes())


CHANGES: list[Callable[[LoadedCatalog], None]] = [
    rewrite_in_place,
    rename_over,
    new_write_ahead_log,
    chmod,
    truncate,
    manifest_moved_away,
    link_switched,
    text_file_rewritten,
    root_replaced,
]


def test_a_quiet_watch_skips_the_comparison(served: LoadedCatalog, comparisons: list[int]) -> None:
    assert all(served.unchanged() for _ in range(5))
    assert len(comparisons) == 1  # the first call's, made after the watch started


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_every_change_is_noticed(served: LoadedCatalog, comparisons: list[int], change: Callable[[LoadedCatalog], None]) -> None:
    assert served.unchanged()
    change(served)
    # Plain booleans: a failure report must not print the catalog's (possibly truncated) maps.
    noticed = [not served.unchanged() for _ in range(2)]  # the second: a failed comparison is not remembered
    assert noticed == [True, True]
    assert len(comparisons) == 3


def test_an_event_on_something_else_costs_one_comparison(served: LoadedCatalog, comparisons: list[int]) -> None:
    assert served.unchanged()
    (served.paths.catalog_dir.parent / "unrelated.txt").write_text("x")
    assert served.unchanged()
    assert served.unchanged()
    assert len(comparisons) == 2


def test_the_window_expires(served: LoadedCatalog, comparisons: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loaded_module, "STAMPS_VALID_S", 0.0)
    assert served.unchanged()
    assert served.unchanged()
    assert len(comparisons) == 2


def test_without_a_watch_every_call_compares(served: LoadedCatalog, comparisons: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loaded_module.CatalogWatch, "start", classmethod(lambda cls, paths: None))
    assert all(served.unchanged() for _ in range(3))
    assert len(comparisons) == 3
    rewrite_in_place(served)
    noticed = not served.unchanged()
    assert noticed


def test_a_forked_child_compares(served: LoadedCatalog, comparisons: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    assert served.unchanged()
    watcher = catalog_watch._process_watcher()
    monkeypatch.setattr(watcher, "pid", -1)  # as seen from a child: its parent's queue
    assert served.unchanged()
    assert len(comparisons) == 2


def test_two_catalogs_share_watches_and_closing_one_keeps_the_other(served: LoadedCatalog, comparisons: list[int]) -> None:
    other = LoadedCatalog.open(served.paths)
    assert served.unchanged() and other.unchanged()
    watcher = catalog_watch._process_watcher()
    watched = len(watcher.subscribers)
    other.close()
    assert len(watcher.subscribers) == watched  # the same inodes: served still watches them
    rewrite_in_place(served)
    noticed = not served.unchanged()
    assert noticed


def test_closing_removes_the_watches(tmp_path: Path) -> None:
    build(tmp_path, "sample", SAMPLE_LINES)
    watcher = catalog_watch._process_watcher()
    before = set(watcher.subscribers)
    catalog = LoadedCatalog.open(CatalogPaths.of(tmp_path, "sample"))
    assert catalog.unchanged()
    folders_above = len(Path(catalog.paths.catalog_dir).parent.parents)  # the root's holder up to /
    # The manifest, 4 folders of the catalog, the folders above (some watched already, by the
    # other tests' catalogs: watches of one inode are shared).
    added = set(watcher.subscribers) - before
    assert len(catalog.manifest.catalog.files) + 5 <= len(added) <= len(catalog.manifest.catalog.files) + 5 + folders_above
    catalog.close()
    assert set(watcher.subscribers) <= before


def test_a_missing_path_sets_no_watch(tmp_path: Path) -> None:
    assert catalog_watch.CatalogWatch.start([(str(tmp_path / "absent"), catalog_watch.WATCH_MASK)]) is None
    watcher = catalog_watch._process_watcher()
    assert all(watcher.descriptors.values())  # no half-made subscription kept


def test_watched_paths_cover_every_folder() -> None:
    watched = catalog_watch.watched_paths("/r/catalog/p", ["a.parquet", "index/x.npy", "index/text/y.npy"])
    full, above = catalog_watch.WATCH_MASK, catalog_watch.ANCESTOR_MASK
    assert watched == [
        ("/r/catalog", full), ("/r/catalog/p/", full), ("/r/catalog/p/a.parquet", full), ("/r/catalog/p/index", full),
        ("/r/catalog/p/index/x.npy", full), ("/r/catalog/p/index/text", full), ("/r/catalog/p/index/text/y.npy", full),
        ("/r", above), ("/", above),
    ]


def test_a_catalog_does_not_narrow_another_catalogs_watch(tmp_path: Path, comparisons: list[int]) -> None:
    # A root inside another catalog's folder: the folders above the inner catalog include the
    # outer catalog's `index/`, which the outer watches for every event; it must keep them.
    build(tmp_path, "sample", SAMPLE_LINES)
    outer = LoadedCatalog.open(CatalogPaths.of(tmp_path, "sample"))
    inner_root = outer.paths.catalog_dir / "index" / "nested"
    build(inner_root, "sample", SAMPLE_LINES)
    inner = LoadedCatalog.open(CatalogPaths.of(inner_root, "sample"))
    try:
        assert outer.unchanged() and inner.unchanged()
        assert outer.unchanged()
        before = len(comparisons)
        (outer.paths.catalog_dir / "index" / "stray").write_bytes(b"")  # an entry of index/ created
        assert outer.unchanged()  # compared (the stamps hold): the event reached it
        assert len(comparisons) == before + 1
    finally:
        inner.close()
        outer.close()


def test_a_subscription_ended_inside_a_locked_section_does_not_wait(tmp_path: Path) -> None:
    # The garbage collector may run a catalog's finalizer (which ends its subscription) while this
    # thread holds the watcher's lock, inside `quiet`: ending it must not wait for that lock.
    build(tmp_path, "sample", SAMPLE_LINES)
    catalog = LoadedCatalog.open(CatalogPaths.of(tmp_path, "sample"))
    assert catalog.unchanged()
    watcher = catalog_watch._process_watcher()
    token = max(watcher.descriptors)
    ended = threading.Event()
    with watcher.lock:
        worker = threading.Thread(target=lambda: (catalog.close(), ended.set()))
        worker.start()
        assert ended.wait(5), "closing waited for the watcher's lock"
        assert token in watcher.descriptors  # not dropped yet: the lock is held
    assert catalog_watch.CatalogWatch.start([(str(tmp_path), catalog_watch.WATCH_MASK)]) is not None  # the next lock drops it
    assert token not in watcher.descriptors
