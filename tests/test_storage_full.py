"""A full disk is a coded error on every command that writes (issue 10, item 4).

Each command runs as a real child process (`python -m leanindex ...`) with its output folder on
a small tmpfs: `catalog build --input`, `catalog import-docgen`, `demo --root`, `catalog verify`
(which rewrites the pinned manifest) and `api export`. Each must exit with the status of
`storage_full`, print the shared error object under `--json` (with the path that could not be
written and the space needed), print no traceback, and leave no build folder behind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fault_support import fill, small_tmpfs
from leanindex.catalog.builder import build_catalog
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode
from realdata_support import CORE_SAMPLE, realdata_path
from streamkit import as_file, declaration, stream

FULL = EXIT_STATUS[ErrorCode.STORAGE_FULL]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "leanindex", *args], capture_output=True, text=True, timeout=300)


def load_input(folder: Path, size: int = 6000) -> Path:
    path = folder / "load.ndjson"
    path.write_bytes(as_file(stream([declaration(["Load", f"a_{i:05d}"]) for i in range(size)])))
    return path


def assert_storage_full(done: subprocess.CompletedProcess, under: Path, as_json: bool = True) -> dict:
    assert done.returncode == FULL, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    if not as_json:
        assert "storage_full" in done.stderr
        return {}
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "storage_full"
    details = error["details"]
    assert details["path"].startswith(str(under)), details
    assert details["needed_bytes"] > 0 and details["free_bytes"] >= 0
    assert str(under) in error["message"]
    return details


def no_build_left(root: Path) -> None:
    builds = root / "catalog" / ".builds"
    assert not builds.exists() or list(builds.iterdir()) == []


def test_build_from_a_stream_on_a_full_disk(tmp_path: Path) -> None:
    source = load_input(tmp_path)
    with small_tmpfs(tmp_path / "root", 400 * 1024) as root:
        details = assert_storage_full(cli("catalog", "build", "--profile", "load", "--input", str(source), "--root", str(root), "--json"), root)
        # The build needed more than was free when it started, which is free again now.
        assert details["needed_bytes"] > details["free_bytes"] > 300 * 1024
        no_build_left(root)
        assert_storage_full(cli("catalog", "build", "--profile", "load", "--input", str(source), "--root", str(root)), root, as_json=False)
        no_build_left(root)


def test_import_docgen_on_a_full_disk(tmp_path: Path) -> None:
    sample = realdata_path(CORE_SAMPLE)
    with small_tmpfs(tmp_path / "root", 1024 * 1024) as root:
        done = cli("catalog", "import-docgen", str(sample), "--profile", "core", "--root", str(root), "--lean-version", "4.33.0", "--json")
        assert_storage_full(done, root)
        no_build_left(root)


def test_demo_on_a_full_disk(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "root", 64 * 1024) as root:
        assert_storage_full(cli("demo", "--root", str(root)), root, as_json=False)
        no_build_left(root)


def test_verify_rewriting_the_pinned_manifest_on_a_full_disk(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_catalog(iter(stream([declaration(["Nat", "add_comm"])])), root, "sample")
    pinned = root / "manifests" / "sample.json"
    text = pinned.read_text()
    pinned.unlink()
    with small_tmpfs(root / "manifests", 64 * 1024) as manifests:
        fill(manifests)
        assert_storage_full(cli("catalog", "verify", "--profile", "sample", "--root", str(root), "--json"), manifests)
    assert json.loads(text)["profile"] == "sample"


def test_api_export_on_a_full_disk(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "repo", 64 * 1024) as repo:
        fill(repo)
        assert_storage_full(cli("api", "export", "--root", str(repo)), repo, as_json=False)


def test_the_codes_have_statuses() -> None:
    assert EXIT_STATUS[ErrorCode.STORAGE_FULL] != EXIT_STATUS[ErrorCode.IO_ERROR]
    assert {EXIT_STATUS[ErrorCode.STORAGE_FULL], EXIT_STATUS[ErrorCode.IO_ERROR]}.isdisjoint(OUTCOME_EXIT.values())
