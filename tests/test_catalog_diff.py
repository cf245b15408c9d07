"""`leanindex catalog diff`: a fresh manifest and catalog against the committed ones."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanindex.catalog.builder import EnvironmentFacts, build_catalog
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import PackageRevision
from leanindex.catalog.stream import iter_lines
from leanindex.cli import main
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, Outcome
from leanindex.sample import sample_stream_path

MATHLIB_URL = "https://github.com/leanprover-community/mathlib4"


def sample_lines(drop: str | None = None, lean_version: str | None = None) -> list[bytes]:
    """The sample stream, optionally without declaration `drop` and with another Lean version."""
    records = [json.loads(line) for line in sample_stream_path().read_text(encoding="utf-8").splitlines()]
    if lean_version:
        records[0]["lean"]["version"] = lean_version
    if drop:
        records = [r for r in records if r.get("name") != drop]
        records[-1]["count"] -= 1
    return [json.dumps(r, ensure_ascii=False).encode() for r in records]


def facts(mathlib_rev: str) -> EnvironmentFacts:
    return EnvironmentFacts(source="lean", packages=[PackageRevision(name="mathlib", rev=mathlib_rev, url=MATHLIB_URL)])


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=test", "-c", "user.email=test@example.com", *args],
                   check=True, capture_output=True)


def commit_build(root: Path, lines: list[bytes], fact: EnvironmentFacts | None = None) -> Path:
    """Build, commit the manifest, and keep a copy of the catalog as the 'older catalog'."""
    build_catalog(lines, root, "core", facts=fact)
    git(root, "add", "manifests/core.json")
    git(root, "commit", "-q", "-m", "pin core")
    older = root.parent / "older.parquet"
    older.write_bytes(CatalogPaths.of(root, "core").declarations.read_bytes())
    return older


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


def diff(root: Path, *args: str):
    return CliRunner().invoke(main, ["catalog", "diff", "--profile", "core", "--root", str(root), *args], catch_exceptions=False)


def test_identical_build_exits_zero(root: Path) -> None:
    with open(sample_stream_path(), "rb") as handle:
        commit_build(root, list(iter_lines(handle)))
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), root, "core")
    result = diff(root)
    assert result.exit_code == 0, result.stdout
    assert "identical" in result.stdout and "76 -> 76" in result.stdout
    report = json.loads(diff(root, "--json").stdout)
    assert report["identical"] is True and report["identity_changes"] == []
    assert report["committed"] == "git HEAD:manifests/core.json"


def test_toolchain_bump_lists_identity_counts_and_names(root: Path) -> None:
    older = commit_build(root, sample_lines(drop="Nat.add_comm", lean_version="4.34.0"), facts("aaa"))
    build_catalog(sample_lines(), root, "core", facts=facts("bbb"))

    result = diff(root, "--against-catalog", str(older), "--json")
    assert result.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    report = json.loads(result.stdout)
    assert report["identical"] is False
    changes = {c["field"]: (c["before"], c["after"]) for c in report["identity_changes"]}
    assert changes["lean.version"] == ("4.34.0", "4.35.0")
    assert changes["packages.mathlib"] == ("aaa", "bbb")
    assert changes["mathlib_commit"] == ("aaa", "bbb")
    assert report["counts"]["declarations"] == {"before": 75, "after": 76}
    assert report["names"]["added"] == ["Nat.add_comm"] and report["names"]["removed"] == []
    assert report["environment_digest"]["before"] != report["environment_digest"]["after"]

    text = diff(root, "--against-catalog", str(older), "--limit", "0")
    assert text.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    assert "lean.version: 4.34.0 -> 4.35.0" in text.stdout
    assert "packages.mathlib: aaa -> bbb" in text.stdout
    assert "75 -> 76 (+1)" in text.stdout
    assert "... 1 more added" in text.stdout and "drift" in text.stdout


def test_removed_names_are_listed_in_name_order(root: Path) -> None:
    older = commit_build(root, sample_lines())
    build_catalog(sample_lines(drop="Nat.add_comm"), root, "core")
    report = json.loads(diff(root, "--against-catalog", str(older), "--json").stdout)
    assert report["names"]["removed"] == ["Nat.add_comm"] and report["names"]["removed_count"] == 1
    assert report["identity_changes"] == []  # same environment, other content: still drift
    assert report["declarations_parquet_changed"] is True


def test_no_committed_manifest_is_drift(root: Path) -> None:
    git(root, "commit", "-q", "--allow-empty", "-m", "empty")
    build_catalog(sample_lines(), root, "core")
    result = diff(root, "--json")
    assert result.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    report = json.loads(result.stdout)
    assert report["committed_found"] is False and report["counts"]["declarations"] == {"before": None, "after": 76}


def test_against_a_manifest_file(root: Path, tmp_path: Path) -> None:
    build_catalog(sample_lines(lean_version="4.34.0"), root, "core")
    saved = tmp_path / "old.json"
    saved.write_text(CatalogPaths.of(root, "core").manifest.read_text())
    build_catalog(sample_lines(), root, "core")
    result = diff(root, "--against", str(saved), "--json")
    assert result.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    assert json.loads(result.stdout)["committed"] == str(saved)


def test_errors_have_their_exit_status(root: Path, tmp_path: Path) -> None:
    assert diff(root).exit_code == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE]  # nothing built yet
    older = commit_build(root, sample_lines())
    assert diff(root, "--against", "no-such-ref").exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    # A tampered fresh catalog fails verification before any names are compared.
    paths = CatalogPaths.of(root, "core")
    database = paths.database
    database.write_bytes(database.read_bytes() + b"x")
    assert diff(root, "--against-catalog", str(older)).exit_code == EXIT_STATUS[ErrorCode.DIGEST_MISMATCH]
