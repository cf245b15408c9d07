"""Build folders left by killed builds are removed at the start of any build and by
`catalog verify`, which report the space reclaimed (issue 10, item 8).

Builds are killed for real (SIGKILL in a child process while the serving database is written),
which leaves their folders under `catalog/.builds/`; the served catalog's folder, and any folder
the builder did not make, must survive every cleanup, and a cleanup never runs while another
build holds the builds lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
from pathlib import Path

from click.testing import CliRunner

from fault_support import build_killed_at
from leanindex.catalog.builder import build_catalog
from leanindex.catalog.layout import CatalogPaths
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.sample import sample_stream_path
from leanindex.storage import tree_bytes
from streamkit import as_file, declaration, stream

SAMPLE = sample_stream_path().read_bytes().splitlines()
KILL_WHILE_WRITING_THE_DATABASE = "builder._write_database = lambda build_dir: kill()"


def kill_builds(root: Path, tmp_path: Path, count: int) -> dict[str, int]:
    """Leave `count` stale build folders: one build of SAMPLE killed mid-way (each build first
    removes the folders earlier killed builds left, so one is left by a real kill), the others
    copies of it under the names killed builds of other profiles would have. Returns the
    folders and their sizes."""
    source = tmp_path / "input.ndjson"
    source.write_bytes(b"\n".join(SAMPLE) + b"\n")
    builds = CatalogPaths.of(root, "sample").builds_dir
    before = set(os.listdir(builds))
    assert build_killed_at(root, "sample", source, KILL_WHILE_WRITING_THE_DATABASE) == -signal.SIGKILL
    (killed,) = set(os.listdir(builds)) - before
    for i in range(1, count):
        shutil.copytree(builds / killed, builds / f"other{i}-20260101T000000-0000000{i}")
    left = sorted(set(os.listdir(builds)) - before)
    assert len(left) == count
    return {name: tree_bytes(builds / name) for name in left}


def served_folder(root: Path) -> str:
    return CatalogPaths.of(root, "sample").catalog_dir.resolve().name


def still_served(root: Path) -> None:
    engine = Engine(root)
    try:
        assert engine.search(SearchRequest(environment="SAMPLE", name_contains="add_comm")).total_matches == 1
    finally:
        engine.close()


def verify_json(root: Path) -> dict:
    result = CliRunner().invoke(main, ["catalog", "verify", "--profile", "sample", "--root", str(root), "--json"])
    assert result.exit_code == 0, result.stdout
    return json.loads(result.stdout)


def test_verify_removes_killed_builds_and_reports_the_space(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_catalog(iter(SAMPLE), root, "sample")
    keep = root / "catalog" / ".builds" / "hand-made-folder"
    keep.mkdir()
    stale = kill_builds(root, tmp_path, 2)
    assert all(size > 0 for size in stale.values())
    report = verify_json(root)["stale_builds"]
    assert sorted(report["removed"]) == sorted(stale)
    assert report["reclaimed_bytes"] == sum(stale.values())
    assert report["skipped"] is None
    assert sorted(os.listdir(root / "catalog" / ".builds")) == sorted([served_folder(root), "hand-made-folder"])
    still_served(root)
    assert verify_json(root)["stale_builds"] == {"removed": [], "reclaimed_bytes": 0, "skipped": None}


def test_any_build_starts_by_removing_stale_builds(tmp_path: Path) -> None:
    """Even a build of another profile, and even one whose stream is then refused."""
    root = tmp_path / "root"
    build_catalog(iter(SAMPLE), root, "sample")
    kill_builds(root, tmp_path, 2)
    bad = stream([declaration(["Nat", "b"]), declaration(["Nat", "a"])])  # not in Name.lt order
    try:
        build_catalog(iter(bad), root, "other")
    except LeanIndexError as error:
        assert error.code is ErrorCode.INVALID_STREAM
    assert os.listdir(root / "catalog" / ".builds") == [served_folder(root)]
    still_served(root)


def test_the_build_command_reports_the_space_reclaimed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_catalog(iter(SAMPLE), root, "sample")
    stale = kill_builds(root, tmp_path, 1)
    source = tmp_path / "other.ndjson"
    source.write_bytes(as_file(stream([declaration(["Nat", "add_comm"])])))
    result = CliRunner().invoke(main, ["catalog", "build", "--profile", "other", "--input", str(source), "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["profile"] == "other"
    assert f"removed 1 stale build folder, reclaimed {sum(stale.values()):,} bytes" in result.stderr


def test_no_cleanup_while_a_build_holds_the_lock(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_catalog(iter(SAMPLE), root, "sample")
    stale = kill_builds(root, tmp_path, 1)
    builds = root / "catalog" / ".builds"
    fd = os.open(builds, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a running build does
        report = verify_json(root)["stale_builds"]
    finally:
        os.close(fd)
    assert report["removed"] == [] and report["reclaimed_bytes"] == 0 and "build" in report["skipped"]
    assert set(stale) <= set(os.listdir(builds))


def test_verify_cleans_even_when_the_catalog_fails(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_catalog(iter(SAMPLE), root, "sample")
    stale = kill_builds(root, tmp_path, 1)
    served = CatalogPaths.of(root, "sample")
    served.served_manifest.write_text("{}")
    result = CliRunner().invoke(main, ["catalog", "verify", "--profile", "sample", "--root", str(root), "--json"])
    assert json.loads(result.stdout)["error"]["code"] == "catalog_unavailable"
    assert f"removed 1 stale build folder, reclaimed {sum(stale.values()):,} bytes" in result.stderr
    assert os.listdir(root / "catalog" / ".builds") == [served_folder(root)]
