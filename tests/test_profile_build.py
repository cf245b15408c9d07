"""`leanindex catalog build --profile ...` driving a stand-in `lake` and extractor (no Lean).

The stand-ins (tests/standin/) replay the embedded sample stream; the sandbox (tests/lakefakes.py)
provides a source checkout, a Lake project with a real-format lake-manifest.json, and stand-in
.olean files on LEAN_PATH and in the toolchain sysroot.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakefakes import Sandbox, expected_modules_digest, expected_source_digest, make_sandbox
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import read_manifest
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.errors import EXIT_STATUS, ErrorCode
from leanindex.sample import sample_stream_path


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = make_sandbox(tmp_path)
    for key, value in box.env.items():
        monkeypatch.setenv(key, value)
    return box


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def build_args(box: Sandbox, profile: str = "demo", *extra: str) -> list[str]:
    return [
        "catalog", "build", "--profile", profile, "--project", str(box.project), "--imports", "Init",
        "--lake", str(box.lake), "--source", str(box.source), "--root", str(box.root), *extra,
    ]


def test_success_path_publishes_a_verified_catalog_with_environment_facts(sandbox: Sandbox) -> None:
    result = run(*build_args(sandbox, "demo", "--without-values", "--threads", "2", "--json"))
    assert result.exit_code == 0, result.stderr + result.stdout
    manifest = verify_catalog(CatalogPaths.of(sandbox.root, "demo"))
    assert json.loads(result.stdout)["environment_digest"] == manifest.environment_digest

    assert manifest.catalog.declaration_count == 76
    assert manifest.source.kind == "lean"
    assert manifest.toolchain == "leanprover/lean4:v4.35.0"
    assert [(p.name, p.rev) for p in manifest.packages] == [
        ("mathlib", "8f3c1ab5d2e4f6a7b8c9d0e1f2a3b4c5d6e7f809"),
        ("local-helpers", None),
        ("batteries", "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d"),
        ("Qq", "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"),
    ]
    assert manifest.packages[0].url == "https://github.com/leanprover-community/mathlib4"
    assert manifest.mathlib_commit == "8f3c1ab5d2e4f6a7b8c9d0e1f2a3b4c5d6e7f809"
    assert manifest.modules_digest == expected_modules_digest(sandbox)
    assert manifest.extractor.digest == expected_source_digest(sandbox.source)
    assert (manifest.extractor.name, manifest.extractor.version) == ("leanindex-sample", "1")
    assert manifest.platform and "-" in manifest.platform

    calls = [(Path(c["cwd"]), c["args"][:2]) for c in sandbox.lake_calls()]
    assert (sandbox.source, ["build", "leanindex-extract"]) in calls
    assert all(cwd == sandbox.project for cwd, args in calls if args[0] == "env")
    seen = json.loads(sandbox.args_log.read_text())
    assert seen["args"] == ["--without-values", "--threads", "2", "Init"]
    assert seen["lean_path"].split(os.pathsep)[0] == str(sandbox.lean_path)


def test_core_defaults_to_the_source_checkout_and_lake_on_path(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{sandbox.bin}{os.pathsep}{os.environ['PATH']}")
    result = run("catalog", "build", "--profile", "core", "--source", str(sandbox.source), "--root", str(sandbox.root))
    assert result.exit_code == 0, result.stderr + result.stdout
    manifest = verify_catalog(CatalogPaths.of(sandbox.root, "core"))
    assert json.loads(sandbox.args_log.read_text())["args"] == ["Init"]
    assert all(Path(c["cwd"]) == sandbox.source for c in sandbox.lake_calls())
    # The source checkout has resolved no packages: unknown, not invented.
    assert manifest.packages is None and manifest.mathlib_commit is None


def _earlier_catalog(box: Sandbox, profile: str = "demo") -> str:
    result = run("catalog", "build", "--profile", profile, "--input", str(sample_stream_path()), "--root", str(box.root))
    assert result.exit_code == 0, result.stderr + result.stdout
    return CatalogPaths.of(box.root, profile).manifest.read_text()


FAILURES = [
    ("crash", [], ErrorCode.BACKEND_ERROR, "INTERNAL PANIC"),
    ("garbage", [], ErrorCode.INVALID_STREAM, "importing Init"),
    ("truncate", [], ErrorCode.INVALID_STREAM, "stopping before the footer"),
    ("hang", ["--timeout", "1"], ErrorCode.TIMEOUT, "waiting forever"),
]


@pytest.mark.parametrize(("mode", "extra", "code", "stderr_line"), FAILURES, ids=[f[0] for f in FAILURES])
def test_failed_run_publishes_nothing_and_reports_stderr_tail(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, mode: str, extra: list[str], code: ErrorCode, stderr_line: str
) -> None:
    earlier = _earlier_catalog(sandbox)
    paths = CatalogPaths.of(sandbox.root, "demo")
    monkeypatch.setenv("STANDIN_MODE", mode)
    result = run(*build_args(sandbox, "demo", "--json", *extra))

    assert result.exit_code == EXIT_STATUS[code]
    error = json.loads(result.stdout)["error"]
    assert error["code"] == code.value
    assert stderr_line in error["details"]["stderr_tail"]
    assert stderr_line in error["message"]
    # The earlier catalog is untouched and still verifies; no partial build is left behind.
    assert paths.manifest.read_text() == earlier
    verify_catalog(paths)
    assert [p.name for p in paths.builds_dir.iterdir()] == [paths.catalog_dir.resolve().name]


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


def test_timeout_kills_the_extractor_process_group(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANDIN_MODE", "hang")
    result = run(*build_args(sandbox, "demo", "--timeout", "1"))
    assert result.exit_code == EXIT_STATUS[ErrorCode.TIMEOUT]
    assert "did not finish within 1 s" in result.stderr
    pid = json.loads(sandbox.args_log.read_text())["pid"]
    # SIGKILL delivery is asynchronous; wait for the kernel to finish it rather than timing it.
    deadline = time.monotonic() + 30
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), f"extractor {pid} survived the timeout"
    assert not CatalogPaths.of(sandbox.root, "demo").catalog_dir.exists()


def test_extractor_build_failure_is_a_backend_error(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LAKE_FAIL", "build")
    result = run(*build_args(sandbox))
    assert result.exit_code == EXIT_STATUS[ErrorCode.BACKEND_ERROR]
    assert "lake build leanindex-extract" in result.stderr and "told to fail `build`" in result.stderr
    assert not (sandbox.root / "catalog" / "demo").exists()


def test_missing_olean_fails_the_build(sandbox: Sandbox) -> None:
    (sandbox.sysroot / "lib" / "lean" / "Init" / "Core.olean").unlink()
    result = run(*build_args(sandbox, "demo", "--json"))
    assert result.exit_code == EXIT_STATUS[ErrorCode.BACKEND_ERROR]
    error = json.loads(result.stdout)["error"]
    assert error["details"]["missing"] == ["Init.Core"]
    assert not (sandbox.root / "catalog" / "demo").exists()


def test_progress_shows_count_and_rate_and_eta_once_a_count_is_known(sandbox: Sandbox) -> None:
    first = run(*build_args(sandbox, "demo", "--progress"))
    assert first.exit_code == 0, first.stderr
    assert "76 constants" in first.stderr and "constants/s" in first.stderr
    assert "ETA" not in first.stderr

    second = run(*build_args(sandbox, "demo", "--progress"))
    assert second.exit_code == 0, second.stderr
    assert "76/76 constants" in second.stderr and "ETA" in second.stderr

    quiet = run(*build_args(sandbox, "demo", "--no-progress"))
    assert "constants/s" not in quiet.stderr


def test_input_excludes_extractor_options(sandbox: Sandbox) -> None:
    result = run("catalog", "build", "--profile", "demo", "--input", str(sample_stream_path()),
                 "--project", str(sandbox.project), "--root", str(sandbox.root))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert "--project" in result.stderr


def test_unpinned_profile_needs_imports(sandbox: Sandbox) -> None:
    result = run("catalog", "build", "--profile", "mine", "--project", str(sandbox.project),
                 "--lake", str(sandbox.lake), "--source", str(sandbox.source), "--root", str(sandbox.root))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert "--imports" in result.stderr
    assert sandbox.lake_calls() == []


def test_missing_lake_names_the_fix(sandbox: Sandbox) -> None:
    result = run(*[a if a != str(sandbox.lake) else str(sandbox.bin / "no-lake") for a in build_args(sandbox)])
    assert result.exit_code == EXIT_STATUS[ErrorCode.BACKEND_ERROR]
    assert "elan-init.sh" in result.stderr


def test_mathlib_without_project_points_at_profile_init(sandbox: Sandbox) -> None:
    result = run("catalog", "build", "--profile", "mathlib", "--lake", str(sandbox.lake),
                 "--source", str(sandbox.source), "--root", str(sandbox.root))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert "leanindex profile init mathlib" in result.stderr


def test_mathlib_project_without_lake_manifest_is_refused(sandbox: Sandbox) -> None:
    (sandbox.project / "lake-manifest.json").unlink()
    result = run(*build_args(sandbox, "mathlib"))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert "lake update" in result.stderr
    assert sandbox.lake_calls() == []


def test_toolchain_mismatch_is_refused_before_running_anything(sandbox: Sandbox) -> None:
    (sandbox.project / "lean-toolchain").write_text("leanprover/lean4:v4.30.0\n")
    result = run(*build_args(sandbox))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert "v4.30.0" in result.stderr and "v4.35.0" in result.stderr
    assert sandbox.lake_calls() == []


def test_given_extractor_skips_the_build(sandbox: Sandbox) -> None:
    assert run(*build_args(sandbox)).exit_code == 0
    built = sandbox.source / ".lake" / "build" / "bin" / "leanindex-extract"
    sandbox.log.unlink()
    result = run(*build_args(sandbox, "other", "--extractor", str(built)))
    assert result.exit_code == 0, result.stderr + result.stdout
    assert [c["args"][0] for c in sandbox.lake_calls()] == ["env", "env"]
    assert read_manifest(CatalogPaths.of(sandbox.root, "other").manifest).extractor.digest == expected_source_digest(sandbox.source)
