"""`leanindex doctor` for a newcomer (issue 30): real commands only, the profiles the user has,
and exit 0 for a search-only set-up even with Lean tools of other projects on PATH."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakefakes import make_sandbox
from leanindex import doctor as doctor_module
from leanindex.catalog.builder import build_catalog
from leanindex.catalog.stream import iter_lines
from leanindex.cli import main
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, Outcome
from leanindex.sample import sample_stream_path


def _report(root: Path, source: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["doctor", "--root", str(root), "--source", str(source), "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _placeholders(report: dict) -> list[str]:
    return [c["fix"] for c in report["checks"] if c["fix"] and re.search(r"OWNER|REPO\b|<[a-z]+>", c["fix"])]


def test_an_empty_root_gets_real_commands_and_no_unasked_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_sandbox(tmp_path)
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    status, report = _report(box.root, box.source)
    checks = {c["name"]: c for c in report["checks"]}
    assert status == OUTCOME_EXIT[Outcome.NOT_READY]  # nothing set up at all
    assert _placeholders(report) == []
    assert not any(name.startswith("profile ") for name in checks)
    assert checks["profiles"]["status"] == "missing"
    assert checks["profiles"]["fix"].startswith(f"leanindex demo --root {box.root.resolve()}")


def test_a_search_only_setup_with_someone_elses_elan_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_sandbox(tmp_path)
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), box.root, "core-docgen")
    # elan is installed (for another project) without the pinned toolchain; no extractor built.
    (box.bin / "elan").write_text("#!/bin/sh\nif [ \"$1\" = toolchain ]; then echo 'leanprover/lean4:v4.20.0 (default)'; else echo 'elan 4.1.2'; fi\n")
    (box.bin / "elan").chmod(0o755)
    monkeypatch.setenv("PATH", str(box.bin))
    status, report = _report(box.root, box.source)
    assert {u["use"]: u["state"] for u in report["uses"]} == {"search": "ready", "indexing": "not set up", "checking": "not set up"}
    assert status == 0
    assert _placeholders(report) == []


def test_pull_urls_name_the_repository_the_metadata_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    class Meta:
        def get_all(self, key: str) -> list[str]:
            return ["Source, https://github.com/example-org/leanindex"] if key == "Project-URL" else []

    monkeypatch.setattr(doctor_module.metadata, "metadata", lambda name: Meta())
    fixes = doctor_module.catalog_fixes("mathlib", "")
    assert "leanindex catalog pull https://github.com/example-org/leanindex/releases/download/catalog-mathlib/mathlib.leanindex.tar" in fixes
    monkeypatch.setattr(doctor_module, "published_repository", lambda: None)
    assert "catalog pull" not in doctor_module.catalog_fixes("mathlib", "")


def test_check_without_lean_names_the_pinned_toolchain_and_elan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    with open(sample_stream_path(), "rb") as handle:
        manifest = build_catalog(iter_lines(handle), root, "core")
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    proof = tmp_path / "proof.lean"
    proof.write_text("theorem t : 1 = 1 := rfl\n")
    result = CliRunner().invoke(main, ["check", "-e", "core", "--root", str(root), "--repl", str(tmp_path / "no-repl"), str(proof)])
    assert result.exit_code == EXIT_STATUS[ErrorCode.LEAN_NOT_INSTALLED]
    assert result.exit_code not in set(OUTCOME_EXIT.values())
    pinned = manifest.toolchain or f"leanprover/lean4:v{manifest.lean.version}"
    assert f"elan toolchain install {pinned}" in result.stderr
    assert "elan-init.sh" in result.stderr
