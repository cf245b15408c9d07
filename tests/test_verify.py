"""Fail closed after tampering (DESIGN.md "Catalog and manifest"; issue 2, item 5).

A catalog is built from the embedded sample, an `Engine` serves it, then one thing is broken:
a byte of a catalog file, a deleted file, an edited manifest, a replaced catalog link.
`leanindex catalog verify` must exit with the code's status, and the engine that already served
the profile must notice the change (it stats the files on every call) and refuse with the same
error on every call, until the catalog is rebuilt, when the same engine serves again.

The tests write catalog files as raw bytes only; no DuckDB connection is opened on them for
writing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import Manifest
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.models import InspectRequest, SearchRequest
from leanindex.sample import sample_stream_path
from streamkit import build, declaration, stream

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()
QUERY = SearchRequest(environment="SAMPLE", name_contains="add_comm")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    build(tmp_path, "sample", SAMPLE_LINES)
    return tmp_path


@pytest.fixture
def engine(root: Path) -> Engine:
    served = Engine(root)
    assert served.search(QUERY).total_matches > 0  # served (and verified) before the tampering
    yield served
    served.close()


def paths_of(root: Path) -> CatalogPaths:
    return CatalogPaths.of(root, "sample")


def flip_byte(path: Path, offset: int | None = None) -> None:
    """Invert one byte in place (same inode, same size), by default in the middle."""
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        at = size // 2 if offset is None else offset
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 0xFF]))


def edit_manifest(root: Path, change: Callable[[dict], None]) -> None:
    path = paths_of(root).served_manifest
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def verify_cli(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["catalog", "verify", "--profile", "SAMPLE", "--root", str(root), "--json"])
    return result.exit_code, result.stdout


def assert_fails_closed(root: Path, engine: Engine, code: ErrorCode) -> None:
    status, out = verify_cli(root)
    assert status == EXIT_STATUS[code]
    assert json.loads(out)["error"]["code"] == code.value
    with pytest.raises(LeanIndexError) as caught:
        verify_catalog(paths_of(root))
    assert caught.value.code is code
    for _ in range(2):  # refused on every call, not only on the first one after the change
        with pytest.raises(LeanIndexError) as caught:
            engine.search(QUERY)
        assert caught.value.code is code
        with pytest.raises(LeanIndexError) as caught:
            engine.inspect(InspectRequest(environment="sample", declaration_name="Nat.add_comm"))
        assert caught.value.code is code
    listed = {e.environment: e for e in engine.environments().environments}
    assert listed["SAMPLE"].verified is False


def assert_recovers_after_rebuild(root: Path, engine: Engine) -> None:
    build(root, "sample", SAMPLE_LINES)
    assert verify_cli(root)[0] == 0
    assert [r.name for r in engine.search(QUERY).results] == ["Nat.add_comm"]
    assert engine.environments().environments[0].verified is True


def test_untouched_catalog_verifies(root: Path, engine: Engine) -> None:
    status, out = verify_cli(root)
    assert status == 0
    body = json.loads(out)
    assert body["verified"] is True
    assert set(body["files"]) >= {"declarations.parquet", "catalog.duckdb", "index/names.npy"}
    result = CliRunner().invoke(main, ["catalog", "verify", "--profile", "sample", "--root", str(root)])
    assert result.exit_code == 0 and "verified" in result.stdout


@pytest.mark.parametrize(
    "relative",
    ["declarations.parquet", "catalog.duckdb", "index/names.npy", "index/postings.npy", "index/name_sa.npy", "index/static_rank.npy", "index/text/doc.data.npy", "index/text/vocabulary.json"],
)
def test_flipped_byte(root: Path, engine: Engine, relative: str) -> None:
    flip_byte(paths_of(root).catalog_dir / relative)
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)
    assert_recovers_after_rebuild(root, engine)


def test_flipped_last_byte_of_parquet(root: Path, engine: Engine) -> None:
    path = paths_of(root).declarations
    flip_byte(path, path.stat().st_size - 1)
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)


def test_truncated_file(root: Path, engine: Engine) -> None:
    path = paths_of(root).database
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)
    assert_recovers_after_rebuild(root, engine)


@pytest.mark.parametrize("relative", ["declarations.parquet", "catalog.duckdb", "index/kind.npy", "index/text/name.indices.npy"])
def test_deleted_file(root: Path, engine: Engine, relative: str) -> None:
    (paths_of(root).catalog_dir / relative).unlink()
    assert_fails_closed(root, engine, ErrorCode.CATALOG_UNAVAILABLE)
    assert_recovers_after_rebuild(root, engine)


def test_deleted_index_folder(root: Path, engine: Engine) -> None:
    shutil.rmtree(paths_of(root).catalog_dir / "index")
    assert_fails_closed(root, engine, ErrorCode.CATALOG_UNAVAILABLE)


def test_removed_catalog_link(root: Path, engine: Engine) -> None:
    paths_of(root).catalog_dir.unlink()
    assert_fails_closed(root, engine, ErrorCode.CATALOG_UNAVAILABLE)
    assert_recovers_after_rebuild(root, engine)


def test_edited_identity_field(root: Path, engine: Engine) -> None:
    edit_manifest(root, lambda m: m["lean"].update(version="4.99.0"))
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)
    assert_recovers_after_rebuild(root, engine)


def test_edited_environment_digest(root: Path, engine: Engine) -> None:
    edit_manifest(root, lambda m: m.update(environment_digest="0" * 64))
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)


def test_edited_file_digest(root: Path, engine: Engine) -> None:
    def change(m: dict) -> None:
        m["catalog"]["files"]["index/hidden.npy"] = "f" * 64

    edit_manifest(root, change)
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)


def test_manifest_of_another_profile(root: Path, engine: Engine) -> None:
    build(root, "other", SAMPLE_LINES)
    shutil.copyfile(CatalogPaths.of(root, "other").served_manifest, paths_of(root).served_manifest)
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)


def test_unreadable_manifest(root: Path, engine: Engine) -> None:
    paths_of(root).served_manifest.write_text("{not json")
    assert_fails_closed(root, engine, ErrorCode.CATALOG_UNAVAILABLE)
    assert_recovers_after_rebuild(root, engine)


def test_link_to_another_catalog(root: Path, engine: Engine) -> None:
    """The link now names a complete, valid catalog, but not the one the manifest describes."""
    build(root, "other", stream([declaration(["Nat", "add_comm"])]))
    other_target = os.readlink(CatalogPaths.of(root, "other").catalog_dir)
    link = paths_of(root).catalog_dir
    link.unlink()
    os.symlink(other_target, link)
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)
    assert_recovers_after_rebuild(root, engine)
    # Rebuilding SAMPLE must not delete the folder its link was pointed at: it is OTHER's.
    assert verify_catalog(CatalogPaths.of(root, "other")).catalog.declaration_count == 1


def test_rebuild_keeps_a_linked_folder_outside_the_builds(root: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "catalog-copy"
    link = paths_of(root).catalog_dir
    shutil.copytree(link.resolve(), outside)
    link.unlink()
    os.symlink(outside, link)
    build(root, "sample", SAMPLE_LINES)
    assert (outside / "declarations.parquet").exists()
    assert verify_cli(root)[0] == 0


def test_link_to_an_identical_copy_still_serves(root: Path, engine: Engine) -> None:
    """Stat changes alone do not fail: the engine re-verifies, and identical bytes pass."""
    link = paths_of(root).catalog_dir
    copy = root / "catalog" / ".builds" / "sample-copy"
    shutil.copytree(link.resolve(), copy)
    link.unlink()
    os.symlink(os.path.relpath(copy, link.parent), link)
    assert [r.name for r in engine.search(QUERY).results] == ["Nat.add_comm"]
    assert verify_cli(root)[0] == 0


def test_catalog_missing_with_manifest_present(tmp_path: Path) -> None:
    build(tmp_path, "sample", SAMPLE_LINES)
    shutil.rmtree(paths_of(tmp_path).catalog_dir.resolve())
    paths_of(tmp_path).catalog_dir.unlink()
    fresh = Engine(tmp_path)
    with pytest.raises(LeanIndexError) as caught:
        fresh.search(QUERY)
    assert caught.value.code is ErrorCode.CATALOG_UNAVAILABLE
    assert "catalog build" in caught.value.message
    assert verify_cli(tmp_path)[0] == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE]


def test_verify_without_manifest(tmp_path: Path) -> None:
    status, out = verify_cli(tmp_path)
    assert status == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE]
    assert json.loads(out)["error"]["code"] == "catalog_unavailable"


def test_in_place_edit_with_size_and_mtime_put_back(root: Path, engine: Engine) -> None:
    """The engine's stat check includes the change time, which a user cannot set back: an edit
    that keeps inode and size and restores the modification time is re-verified (issue 32)."""
    path = paths_of(root).catalog_dir / "index/names.npy"
    before = os.stat(path)
    flip_byte(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    for _ in range(2):
        with pytest.raises(LeanIndexError) as caught:
            engine.search(QUERY)
        assert caught.value.code is ErrorCode.DIGEST_MISMATCH and caught.value.details["file"] == "index/names.npy"
    assert_recovers_after_rebuild(root, engine)


@pytest.mark.parametrize("field", ["declaration_count", "visible_count"])
def test_resealed_counts_are_checked_against_the_files(root: Path, engine: Engine, field: str) -> None:
    """A manifest whose count was changed and both digests recomputed (`Manifest.sealed`) is
    refused: the counts are verified against the Parquet footer and the hidden flags."""
    path = paths_of(root).served_manifest
    manifest = Manifest.model_validate_json(path.read_text())
    catalog = manifest.catalog.model_copy(update={field: 999999})
    path.write_text(manifest.model_copy(update={"catalog": catalog}).sealed().to_json())
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)
    with pytest.raises(LeanIndexError) as caught:
        verify_catalog(paths_of(root))
    assert caught.value.details["field"] == field and caught.value.details["recorded"] == 999999
    assert field in caught.value.message
    assert_recovers_after_rebuild(root, engine)


def test_a_duckdb_write_ahead_log_beside_the_database_is_refused(root: Path, engine: Engine, tmp_path: Path) -> None:
    """DuckDB replays `catalog.duckdb.wal` even on a read-only open, so a WAL that no digest
    covers would change what inspect serves: a served catalog that gains one is refused, by the
    engine that was serving it too (its stat check covers the WAL's absence)."""
    import duckdb

    paths = paths_of(root)
    assert engine.inspect(InspectRequest(environment="sample", declaration_name="Nat.add_comm")).name == "Nat.add_comm"
    scratch = tmp_path / "wal"
    scratch.mkdir()
    shutil.copy(paths.database, scratch / "catalog.duckdb")
    con = duckdb.connect(str(scratch / "catalog.duckdb"), config={"checkpoint_threshold": "1TB"})
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("CREATE TABLE injected AS SELECT 1 AS x")
    con.close()
    wal = scratch / "catalog.duckdb.wal"
    assert wal.is_file() and wal.stat().st_size > 0, "DuckDB left no write-ahead log"
    shutil.copy(wal, paths.catalog_dir / "catalog.duckdb.wal")
    assert_fails_closed(root, engine, ErrorCode.DIGEST_MISMATCH)
    with pytest.raises(LeanIndexError) as caught:
        verify_catalog(paths)
    assert caught.value.details["file"] == "catalog.duckdb.wal"
    (paths.catalog_dir / "catalog.duckdb.wal").unlink()
    assert engine.search(QUERY).total_matches > 0
