"""A catalog is hashed in full once, then re-read only where a file changed (issue 31, item 4).

Opening a catalog to serve it (`LoadedCatalog.open`) writes `ROOT/catalog/.verified/<profile>.json`;
the next open hashes only the files whose stamp differs from the record. These tests count the
files each open hashes (`CatalogFolder.digests`) and check that an edit in place, a swapped
manifest, a hostile record and an explicit `verify_catalog` are all hashed in full.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from leanindex.catalog import files as catalog_files
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import MAX_RECORD_BYTES, record_path, verify_catalog
from leanindex.engine.loaded import LoadedCatalog
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.sample import sample_stream_path
from streamkit import build

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    build(tmp_path, "sample", SAMPLE_LINES)
    return tmp_path


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The relative names each verification hashed, one list per call of `digests`."""
    calls: list[list[str]] = []
    original = catalog_files.CatalogFolder.digests

    def counting(self: catalog_files.CatalogFolder, opened: list[catalog_files.CatalogFile], workers: int = 2) -> dict[str, str]:
        calls.append(sorted(f.relative for f in opened))
        return original(self, opened, workers)

    monkeypatch.setattr(catalog_files.CatalogFolder, "digests", counting)
    return calls


def open_once(root: Path) -> None:
    LoadedCatalog.open(CatalogPaths.of(root, "sample")).close()


def test_second_open_hashes_nothing(root: Path, hashed: list[list[str]]) -> None:
    paths = CatalogPaths.of(root, "sample")
    open_once(root)
    assert record_path(paths).is_file()
    listed = len(LoadedCatalog.open(paths).manifest.catalog.files)
    assert len(hashed[0]) == listed
    assert hashed[1] == []


def test_an_edit_in_place_is_hashed_again_and_refused(root: Path, hashed: list[list[str]]) -> None:
    paths = CatalogPaths.of(root, "sample")
    open_once(root)
    target = paths.catalog_dir / "index" / "kind.npy"
    before = target.stat()
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    # Same size and modification time: only the status-change time tells.
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(LeanIndexError) as raised:
        open_once(root)
    assert raised.value.code is ErrorCode.DIGEST_MISMATCH
    assert raised.value.details["file"] == "index/kind.npy"
    assert hashed[-1] == ["index/kind.npy"]


def test_a_rebuild_is_hashed_in_full(root: Path, hashed: list[list[str]]) -> None:
    open_once(root)
    build(root, "sample", SAMPLE_LINES)
    open_once(root)
    assert len(hashed[-1]) == len(hashed[0])


@pytest.mark.parametrize(
    "content",
    [b"not json", b"[]", b'{"link": null, "manifest": [], "files": {}}', b" " * (MAX_RECORD_BYTES + 1), b"[" * 100_000 + b"]" * 100_000],
    ids=["junk", "list", "other-catalog", "too-large", "nested"],
)
def test_a_record_that_is_not_ours_is_ignored(root: Path, hashed: list[list[str]], content: bytes) -> None:
    paths = CatalogPaths.of(root, "sample")
    open_once(root)
    record_path(paths).write_bytes(content)
    open_once(root)
    assert len(hashed[-1]) == len(hashed[0])


def test_a_record_that_is_a_fifo_does_not_block(root: Path, hashed: list[list[str]]) -> None:
    paths = CatalogPaths.of(root, "sample")
    record = record_path(paths)
    record.parent.mkdir(parents=True)
    os.mkfifo(record)
    open_once(root)
    assert len(hashed) == 1 and hashed[0]


def test_a_record_whose_digest_differs_from_the_manifest_is_not_trusted(root: Path, hashed: list[list[str]]) -> None:
    paths = CatalogPaths.of(root, "sample")
    open_once(root)
    record = json.loads(record_path(paths).read_text())
    record["files"]["index/kind.npy"][-1] = "0" * 64
    record_path(paths).write_text(json.dumps(record))
    open_once(root)
    assert hashed[-1] == ["index/kind.npy"]


def test_explicit_verification_reads_every_file(root: Path, hashed: list[list[str]]) -> None:
    open_once(root)
    verify_catalog(CatalogPaths.of(root, "sample"))
    assert len(hashed[-1]) == len(hashed[0])


def test_an_unwritable_record_folder_still_verifies(root: Path, hashed: list[list[str]]) -> None:
    paths = CatalogPaths.of(root, "sample")
    record_path(paths).parent.parent.joinpath(".verified").write_text("a file where the folder goes")
    open_once(root)
    open_once(root)
    assert len(hashed[0]) == len(hashed[1]) > 0


def test_a_catalog_of_an_earlier_layout_is_told_to_rebuild(root: Path) -> None:
    """A manifest that lacks a file this version's layout has (a catalog built before the file
    existed) is refused with the way out: build it again."""
    from leanindex.catalog.manifest import read_manifest
    from leanindex.catalog.verify import _check_whole

    paths = CatalogPaths.of(root, "sample")
    manifest = read_manifest(paths.served_manifest)
    files = {k: v for k, v in manifest.catalog.files.items() if k != "index/kind.npy"}
    earlier = manifest.model_copy(update={"catalog": manifest.catalog.model_copy(update={"files": files})})
    with pytest.raises(LeanIndexError) as raised:
        _check_whole(paths, earlier)
    assert raised.value.code is ErrorCode.DIGEST_MISMATCH
    assert raised.value.details["unlisted"] == ["index/kind.npy"]
    assert "build it again with this version" in raised.value.message
    assert raised.value.details["builder_version"] == manifest.catalog.builder_version


def test_a_file_found_changed_removes_the_record(root: Path, hashed: list[list[str]]) -> None:
    """A record forged to cover an edited file is only as good as its digests: once a full
    verification finds the file changed, the record is gone and the next open hashes again."""
    paths = CatalogPaths.of(root, "sample")
    open_once(root)
    target = paths.catalog_dir / "index" / "kind.npy"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    record = json.loads(record_path(paths).read_text())
    st = target.stat()
    record["files"]["index/kind.npy"][:6] = [st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    record_path(paths).write_text(json.dumps(record))
    with pytest.raises(LeanIndexError):
        verify_catalog(paths)
    assert not record_path(paths).exists()
    with pytest.raises(LeanIndexError) as raised:
        open_once(root)
    assert raised.value.code is ErrorCode.DIGEST_MISMATCH


def test_counts_are_read_again_only_when_a_file_is_hashed_again(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from leanindex.catalog import verify

    checked: list[str] = []
    original = verify._check_counts

    def counting(paths: CatalogPaths, *args: object) -> None:
        checked.append(paths.profile)
        original(paths, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(verify, "_check_counts", counting)
    open_once(root)
    open_once(root)
    assert len(checked) == 1  # the second open found every file as recorded
    hidden = CatalogPaths.of(root, "sample").catalog_dir / "index" / "hidden.npy"
    os.utime(hidden)  # same bytes, a new stamp: hashed again, and the counts with it
    open_once(root)
    assert len(checked) == 2
    verify_catalog(CatalogPaths.of(root, "sample"))  # an explicit verification reads everything
    assert len(checked) == 3
