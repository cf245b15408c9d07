"""Hostile input that once got through: each case is refused with a stable code and changes
nothing, or is handled the way the contract says."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from streamkit import build, declaration, encode, snapshot, stream

from leanindex.catalog.builder import build_catalog
from leanindex.catalog.layout import CatalogPaths, normalize_profile
from leanindex.catalog.manifest import Manifest
from leanindex.catalog.stream import iter_lines
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest

GOOD = [declaration(["Nat", "a"]), declaration(["Nat", "b"]), declaration(["Nat", "c"])]


def refused(root: Path, lines: list[bytes]) -> LeanIndexError:
    before = snapshot(root)
    with pytest.raises(LeanIndexError) as error:
        build(root, "core", lines)
    assert snapshot(root) == before
    return error.value


def test_a_repeated_key_is_refused_naming_its_line(tmp_path: Path) -> None:
    lines = stream(GOOD)
    lines[2] = lines[2].replace(b'"name": ', b'"name": "Evil", "name": ', 1)
    error = refused(tmp_path, lines)
    assert error.code == ErrorCode.INVALID_STREAM and error.details["line"] == 3
    assert "repeats the key 'name'" in error.message


@pytest.mark.parametrize(
    "source_range",
    [
        {"start": {"line": 2**31, "column": 0}, "end": {"line": 2**31, "column": 1}},
        {"start": {"line": 9, "column": 0}, "end": {"line": 3, "column": 0}},
    ],
    ids=["line beyond int32", "end before start"],
)
def test_impossible_ranges_are_refused(tmp_path: Path, source_range: dict) -> None:
    records = [GOOD[0], declaration(["Nat", "b"], range=source_range), GOOD[2]]
    error = refused(tmp_path, stream(records))
    assert error.code == ErrorCode.INVALID_STREAM and error.details["line"] == 3


def test_deep_nesting_is_malformed_not_a_crash(tmp_path: Path) -> None:
    lines = stream(GOOD)
    lines.insert(2, b"[" * 100_000)
    error = refused(tmp_path, lines)
    assert error.code == ErrorCode.INVALID_STREAM and error.details["line"] == 3


def test_an_endless_line_is_refused_without_reading_it_all() -> None:
    endless = io.BytesIO(b"{}\n" + b"x" * 5000)
    with pytest.raises(LeanIndexError) as error:
        list(iter_lines(endless, chunk_bytes=64, max_line_bytes=1000))
    assert error.value.code == ErrorCode.INVALID_STREAM and error.value.details["line"] == 2
    assert endless.tell() < 2000


@pytest.mark.parametrize("profile", ["core\n", "\u212aore", "../core", "x" * 65, ""])
def test_odd_profile_ids_are_refused(profile: str) -> None:
    with pytest.raises(LeanIndexError) as error:
        normalize_profile(profile)
    assert error.value.code == ErrorCode.INVALID_REQUEST


def test_a_manifest_that_is_not_utf8_fails_closed(tmp_path: Path) -> None:
    build(tmp_path, "core", stream(GOOD))
    paths = CatalogPaths.of(tmp_path, "core")
    paths.served_manifest.write_bytes(b"\xff\xfe{")
    with pytest.raises(LeanIndexError) as error:
        verify_catalog(paths)
    assert error.value.code == ErrorCode.CATALOG_UNAVAILABLE
    listed = Engine(tmp_path).environments().environments
    assert [(e.environment, e.verified, e.problem.code) for e in listed] == [("CORE", False, "catalog_unavailable")]


@pytest.mark.parametrize("edit", ["drop the hidden flags", "empty the file list", "headline digest"])
def test_a_manifest_must_describe_the_whole_catalog(tmp_path: Path, edit: str) -> None:
    build(tmp_path, "core", stream(GOOD))
    paths = CatalogPaths.of(tmp_path, "core")
    manifest = json.loads(paths.served_manifest.read_text())
    if edit == "drop the hidden flags":
        del manifest["catalog"]["files"]["index/hidden.npy"]
    elif edit == "empty the file list":
        manifest["catalog"]["files"] = {}
    else:
        manifest["catalog"]["declarations_parquet_sha256"] = "0" * 64
    # Resealed, so that only the whole-catalog rule (not a manifest digest) can refuse it.
    paths.served_manifest.write_text(Manifest.model_validate(manifest).sealed().to_json())
    with pytest.raises(LeanIndexError) as error:
        verify_catalog(paths)
    assert error.value.code == ErrorCode.DIGEST_MISMATCH


def forged(cursor: str, **changes: object) -> str:
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    payload.update(changes)
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


def test_forged_cursors_are_refused(tmp_path: Path) -> None:
    build(tmp_path, "core", stream(GOOD))
    engine = Engine(tmp_path)
    request = SearchRequest(environment="core", name_contains="Nat", result_limit=1)
    cursor = engine.search(request).next_cursor
    assert cursor is not None
    for bad in (forged(cursor, p=10**30), forged(cursor, p=-1), forged(cursor, v=True), cursor + "=", " " + cursor, cursor + "+"):
        with pytest.raises(LeanIndexError) as error:
            engine.search(request.model_copy(update={"after": bad}))
        assert error.value.code == ErrorCode.INVALID_REQUEST, bad
    assert [r.name for r in engine.search(request.model_copy(update={"after": cursor})).results] == ["Nat.b"]


def test_rebuilds_remove_builds_a_killed_build_left_behind(tmp_path: Path) -> None:
    build(tmp_path, "core", stream(GOOD))
    paths = CatalogPaths.of(tmp_path, "core")
    stale = paths.builds_dir / "core-20260101T000000-0123abcd"
    stale.mkdir()
    (stale / "declarations.parquet").write_bytes(b"half written")
    build(tmp_path, "core", stream(GOOD[:2]))
    assert sorted(p.name for p in paths.builds_dir.iterdir()) == [os.readlink(paths.catalog_dir).rsplit("/", 1)[-1]]
    verify_catalog(paths)


def test_concurrent_builds_of_a_profile_leave_one_whole_catalog(tmp_path: Path) -> None:
    streams = [stream(GOOD), stream(GOOD[:1]), stream(GOOD[:2])]
    errors: list[BaseException] = []

    def run(lines: list[bytes]) -> None:
        try:
            build_catalog(iter(lines), tmp_path, "core")
        except BaseException as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(lines,)) for lines in streams]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    manifest = verify_catalog(CatalogPaths.of(tmp_path, "core"))
    assert manifest.catalog.declaration_count in (1, 2, 3)
    assert len(list(CatalogPaths.of(tmp_path, "core").builds_dir.iterdir())) == 1


def test_check_stops_reading_at_the_size_limit(tmp_path: Path) -> None:
    (tmp_path / "repl").mkdir()
    build(tmp_path, "core", stream(GOOD))
    big = tmp_path / "big.lean"
    big.write_bytes(b"-" * (300 * 1024))
    args = ["check", str(big), "-e", "core", "--root", str(tmp_path), "--repl", str(tmp_path / "repl"), "--lake", sys.executable, "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    assert json.loads(result.stdout)["error"]["code"] == "payload_too_large"


def test_check_with_stdin_closed_is_a_clean_error(tmp_path: Path) -> None:
    (tmp_path / "repl").mkdir()
    build(tmp_path, "core", stream(GOOD))
    command = [sys.executable, "-m", "leanindex", "check", "-", "-e", "core", "--root", str(tmp_path), "--repl", str(tmp_path / "repl"), "--lake", sys.executable, "--json"]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, close_fds=True, preexec_fn=lambda: os.close(0))
    assert done.returncode == 3
    assert json.loads(done.stdout)["error"]["code"] == "invalid_request"


def test_an_empty_token_is_refused_not_ignored(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", "--root", str(tmp_path)], env={"LEANINDEX_TOKEN": ""})
    assert result.exit_code == 2 and "LEANINDEX_TOKEN" in result.output


def test_a_line_of_garbage_then_valid_records_names_the_garbage(tmp_path: Path) -> None:
    lines = [*stream(GOOD)[:2], encode(b"\xff\xfe not json"), *stream(GOOD)[2:]]
    assert refused(tmp_path, lines).details["line"] == 3
