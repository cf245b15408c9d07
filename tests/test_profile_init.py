"""`leanindex profile init` and the pinned profile definitions, with the stand-in `lake`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakefakes import FIXTURES, Sandbox, make_sandbox
from leanindex.cli import main
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.lake.profiles import load_profiles
from leanindex.catalog.manifest import mathlib_commit_of as mathlib_revision
from leanindex.lake.project import read_lake_packages
from leanindex.catalog.manifest import PackageRevision

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = make_sandbox(tmp_path)
    for key, value in box.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FAKE_LAKE_MANIFEST", str(FIXTURES / "lake-manifest.json"))
    return box


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_pinned_profiles_use_the_repository_toolchain() -> None:
    toolchain = (REPO / "lean-toolchain").read_text().strip()
    profiles = load_profiles()
    assert set(profiles) == {"core", "mathlib"}
    assert {p.toolchain for p in profiles.values()} == {toolchain}
    assert profiles["core"].imports == ["Init"] and profiles["core"].require is None
    assert profiles["mathlib"].imports == ["Mathlib"]
    # Mathlib tags releases after the Lean version they build with.
    assert profiles["mathlib"].require.rev == toolchain.rsplit(":", 1)[1]


def test_mathlib_init_writes_the_project_and_fetches_the_cache(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "mathlib-project"
    result = run("profile", "init", "mathlib", "--rev", "v4.35.0", "--dir", str(target), "--lake", str(sandbox.lake), "--json")
    assert result.exit_code == 0, result.stdout + result.stderr

    lakefile = (target / "lakefile.lean").read_text()
    assert 'require mathlib from git "https://github.com/leanprover-community/mathlib4" @ "v4.35.0"' in lakefile
    assert "package «leanindex-mathlib»" in lakefile and "lean_lib LeanIndexProfile" in lakefile
    assert (target / "lean-toolchain").read_text() == "leanprover/lean4:v4.35.0\n"
    assert (target / "LeanIndexProfile.lean").read_text() == "import Mathlib\n"
    assert [(Path(c["cwd"]), c["args"]) for c in sandbox.lake_calls()] == [
        (target, ["update"]),
        (target, ["exe", "cache", "get"]),
    ]
    report = json.loads(result.stdout)
    assert report["rev"] == "v4.35.0"
    assert report["packages"][0] == {
        "name": "mathlib",
        "rev": "8f3c1ab5d2e4f6a7b8c9d0e1f2a3b4c5d6e7f809",
        "url": "https://github.com/leanprover-community/mathlib4",
    }
    # Lake output went to stderr, so stdout is exactly the JSON document.
    assert "cache get done" in result.stderr

    again = run("profile", "init", "mathlib", "--dir", str(target), "--lake", str(sandbox.lake))
    assert again.exit_code == 0, again.stderr


def test_core_init_is_a_bare_project_without_cache(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "core-project"
    result = run("profile", "init", "core", "--dir", str(target), "--lake", str(sandbox.lake))
    assert result.exit_code == 0, result.stderr
    assert "require" not in (target / "lakefile.lean").read_text()
    assert not (target / "LeanIndexProfile.lean").read_text().startswith("import")
    assert [c["args"] for c in sandbox.lake_calls()] == [["update"]]
    assert "leanindex catalog build --profile core --project" in result.stdout


def test_rev_is_refused_for_core_and_nothing_is_written(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "core-project"
    result = run("profile", "init", "core", "--rev", "v4.35.0", "--dir", str(target), "--lake", str(sandbox.lake))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert not target.exists() and sandbox.lake_calls() == []


def test_existing_different_files_are_not_overwritten(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "lakefile.lean").write_text("-- my own project\n")
    result = run("profile", "init", "mathlib", "--dir", str(target), "--lake", str(sandbox.lake))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert "lakefile.lean" in result.stderr
    assert (target / "lakefile.lean").read_text() == "-- my own project\n"
    assert not (target / "lean-toolchain").exists() and sandbox.lake_calls() == []


def test_toolchain_moved_by_update_is_an_error(sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LAKE_UPDATE_TOOLCHAIN", "leanprover/lean4:v4.36.0")
    result = run("profile", "init", "mathlib", "--rev", "master", "--dir", str(tmp_path / "m"), "--lake", str(sandbox.lake))
    assert result.exit_code == EXIT_STATUS[ErrorCode.BACKEND_ERROR]
    assert "v4.36.0" in result.stderr


def test_failing_lake_update_reports_its_output(sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LAKE_FAIL", "update")
    result = run("profile", "init", "mathlib", "--dir", str(tmp_path / "m"), "--lake", str(sandbox.lake), "--json")
    assert result.exit_code == EXIT_STATUS[ErrorCode.BACKEND_ERROR]
    error = json.loads(result.stdout)["error"]
    assert "told to fail `update`" in error["details"]["stderr_tail"]
    assert [c["args"] for c in sandbox.lake_calls()] == [["update"]]


def test_unknown_profile(sandbox: Sandbox, tmp_path: Path) -> None:
    result = run("profile", "init", "physlean", "--dir", str(tmp_path / "p"), "--lake", str(sandbox.lake))
    assert result.exit_code == EXIT_STATUS[ErrorCode.UNKNOWN_ENVIRONMENT]
    assert "core" in result.stderr and "mathlib" in result.stderr


def test_lake_manifest_reading(tmp_path: Path) -> None:
    (tmp_path / "lake-manifest.json").write_text((FIXTURES / "lake-manifest.json").read_text())
    packages = read_lake_packages(tmp_path)
    assert [p.name for p in packages] == ["mathlib", "local-helpers", "batteries", "Qq"]
    assert packages[1] == PackageRevision(name="local-helpers", rev=None, url=None)

    data = json.loads((FIXTURES / "lake-manifest.json").read_text())
    data["version"] = 7
    (tmp_path / "lake-manifest.json").write_text(json.dumps(data))
    assert [p.rev for p in read_lake_packages(tmp_path)] == [p.rev for p in packages]

    (tmp_path / "lake-manifest.json").write_text(json.dumps({"version": 4, "packages": [{"git": {"name": "x"}}]}))
    with pytest.raises(LeanIndexError, match="version 4 is not supported"):
        read_lake_packages(tmp_path)
    (tmp_path / "lake-manifest.json").unlink()
    assert read_lake_packages(tmp_path) is None


def test_mathlib_revision_falls_back_to_the_url() -> None:
    renamed = [PackageRevision(name="Mathlib4", rev="abc", url="https://github.com/leanprover-community/mathlib4.git")]
    assert mathlib_revision(renamed) == "abc"
    assert mathlib_revision([PackageRevision(name="batteries", rev="x", url="https://github.com/leanprover-community/batteries")]) is None
