"""`leanindex doctor` with and without (stand-in) Lean tools on PATH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakefakes import Sandbox, make_sandbox
from leanindex.catalog.builder import build_catalog
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.stream import iter_lines
from leanindex.cli import main
from leanindex.errors import OUTCOME_EXIT, Outcome
from leanindex.sample import sample_stream_path

PINNED = "leanprover/lean4:v4.35.0"


def fake_tool(bin_dir: Path, name: str, output: str) -> None:
    script = bin_dir / name
    # Only shell built-ins: PATH holds nothing but the stand-ins in these tests.
    script.write_text(f"#!/bin/sh\necho '{output}'\n")
    script.chmod(0o755)


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = make_sandbox(tmp_path)
    for key, value in box.env.items():
        monkeypatch.setenv(key, value)
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), box.root, "core")
    return box


def doctor(box: Sandbox) -> tuple[int, dict[str, dict]]:
    result = CliRunner().invoke(main, ["doctor", "--root", str(box.root), "--source", str(box.source), "--json"], catch_exceptions=False)
    report = json.loads(result.stdout)
    return result.exit_code, {check["name"]: check for check in report["checks"]}


def with_tools(box: Sandbox, monkeypatch: pytest.MonkeyPatch, lean_version: str = "4.35.0", toolchains: str = PINNED + " (default)") -> None:
    fake_tool(box.bin, "lean", f"Lean (version {lean_version}, x86_64-unknown-linux-gnu, commit 0123abcd, Release)")
    fake_tool(box.bin, "elan", "elan 4.1.2 (58e8d545e 2025-05-26)")
    # `elan toolchain list` and `elan --version` differ only by their arguments.
    (box.bin / "elan").write_text(
        f"#!/bin/sh\nif [ \"$1\" = toolchain ]; then echo '{toolchains}'; else echo 'elan 4.1.2 (58e8d545e 2025-05-26)'; fi\n"
    )
    monkeypatch.setenv("PATH", str(box.bin))


def test_without_lean_tools_every_gap_has_a_fix(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    status, checks = doctor(sandbox)
    # A search-only user with a verified catalog: what is set up works.
    assert status == 0
    assert uses(sandbox) == {"search": "ready", "indexing": "not set up", "checking": "not set up"}
    assert checks["python"]["status"] == "ok"
    assert checks["package duckdb"]["status"] == "ok" and checks["package duckdb"]["detail"] == "2.0.1"
    for tool in ("elan", "lake", "lean"):
        assert checks[tool]["status"] == "missing"
        assert "elan-init.sh" in checks[tool]["fix"]
    assert checks["extractor"]["status"] == "missing"
    assert checks["extractor"]["fix"] == f"cd {sandbox.source} && lake build leanindex-extract"
    assert checks["profile core"]["status"] == "ok" and "76 declarations" in checks["profile core"]["detail"]
    # Only the profiles the user has: none they never asked for is "missing".
    assert [name for name in checks if name.startswith("profile")] == ["profile core"]


def uses(box: Sandbox, *extra: str) -> dict[str, str]:
    result = CliRunner().invoke(main, ["doctor", "--root", str(box.root), "--source", str(box.source), "--json", *extra], catch_exceptions=False)
    return {use["use"]: use["state"] for use in json.loads(result.stdout)["uses"]}


def test_nothing_set_up_is_not_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_sandbox(tmp_path)
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    status, checks = doctor(box)
    assert status == OUTCOME_EXIT[Outcome.NOT_READY]
    assert uses(box) == {"search": "not set up", "indexing": "not set up", "checking": "not set up"}


def test_a_given_repl_that_is_not_built_breaks_checking(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with_tools(sandbox, monkeypatch)
    repl = tmp_path / "repl"
    repl.mkdir()
    assert uses(sandbox, "--repl", str(repl))["checking"] == "broken"
    result = CliRunner().invoke(main, ["doctor", "--root", str(sandbox.root), "--source", str(sandbox.source), "--repl", str(repl)])
    assert result.exit_code == OUTCOME_EXIT[Outcome.NOT_READY]
    assert f"fix: cd {repl} && lake build" in result.stdout


def test_with_lean_tools_on_the_pinned_toolchain_all_is_well(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tools(sandbox, monkeypatch)
    (sandbox.source / ".lake" / "build" / "bin").mkdir(parents=True)
    (sandbox.source / ".lake" / "build" / "bin" / "leanindex-extract").write_text("")
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), sandbox.root, "mathlib")
    (sandbox.root / "repl" / ".lake" / "build" / "bin").mkdir(parents=True)
    (sandbox.root / "repl" / ".lake" / "build" / "bin" / "repl").write_text("")
    build_embedded_stand_in(sandbox)
    result = CliRunner().invoke(main, ["doctor", "--root", str(sandbox.root), "--source", str(sandbox.source), "--repl", str(sandbox.root / "repl"), "--json"])
    status, checks = result.exit_code, {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    assert {name: c["status"] for name, c in checks.items() if c["status"] != "ok"} == {}
    assert status == 0
    assert uses(sandbox, "--repl", str(sandbox.root / "repl")) == {"search": "ready", "indexing": "ready", "checking": "ready"}
    assert checks["lake"]["detail"].startswith("Lean 4.35.0")
    assert checks["lean"]["detail"].startswith("Lean 4.35.0")
    assert checks["toolchain"]["detail"] == f"{PINNED} installed"
    assert ["--version"] in [c["args"] for c in sandbox.lake_calls()]


def build_embedded_stand_in(box: Sandbox) -> None:
    """A catalog under the embedded profile's name (the sample stream: only its presence counts here)."""
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), box.root, "core-docgen")


def build_extractor_stand_in(box: Sandbox) -> None:
    """A built extractor: indexing is set up, so its failing pieces break it."""
    (box.source / ".lake" / "build" / "bin").mkdir(parents=True)
    (box.source / ".lake" / "build" / "bin" / "leanindex-extract").write_text("")


def test_wrong_lean_version_is_a_mismatch(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tools(sandbox, monkeypatch, lean_version="4.34.0")
    build_extractor_stand_in(sandbox)
    status, checks = doctor(sandbox)
    assert status == OUTCOME_EXIT[Outcome.NOT_READY]
    assert checks["lean"]["status"] == "mismatch" and "4.34.0" in checks["lean"]["detail"]
    assert checks["lake"]["status"] == "ok"


def test_missing_toolchain_is_not_downloaded_by_asking_versions(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    with_tools(sandbox, monkeypatch, toolchains="leanprover/lean4:v4.30.0 (default)")
    build_extractor_stand_in(sandbox)
    status, checks = doctor(sandbox)
    assert status == OUTCOME_EXIT[Outcome.NOT_READY]
    assert checks["toolchain"]["fix"] == f"elan toolchain install {PINNED}"
    assert checks["lake"]["status"] == "missing" and checks["lake"]["fix"] == f"elan toolchain install {PINNED}"
    assert sandbox.lake_calls() == []


def test_tampered_catalog_fails_verification(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    database = CatalogPaths.of(sandbox.root, "core").database
    database.write_bytes(database.read_bytes() + b"x")
    _, checks = doctor(sandbox)
    status, checks = doctor(sandbox)
    assert status == OUTCOME_EXIT[Outcome.NOT_READY]  # a catalog that fails breaks search
    assert checks["profile core"]["status"] == "failed"
    assert checks["profile core"]["detail"].startswith("digest_mismatch")
    assert "leanindex catalog build --profile core" in checks["profile core"]["fix"]


def test_readable_output(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(main, ["doctor", "--root", str(sandbox.root), "--source", str(sandbox.source)])
    assert result.exit_code == 0
    assert "search    ready" in result.stdout and "indexing  not set up" in result.stdout
    assert "pinned toolchain: leanprover/lean4:v4.35.0" in result.stdout
    assert "fix: cd " in result.stdout and "lake build leanindex-extract" in result.stdout
