"""Which profiles the checker accepts: only environments it can really run (not doc-gen4
imports), on the toolchain the manifest pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker_support import STANDIN, standin_config
from leanindex.catalog.builder import EnvironmentFacts, build_catalog
from leanindex.catalog.stream import iter_lines
from leanindex.checker import CheckerConfig
from leanindex.checker.isolation import make_sandbox
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.sample import sample_stream_path

PINNED = "leanprover/lean4:v4.35.0"


def build(root: Path, profile: str, facts: EnvironmentFacts) -> None:
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), root, profile, facts=facts)


def project(tmp_path: Path, toolchain: str) -> Path:
    folder = tmp_path / f"project-{toolchain.rsplit(':', 1)[-1]}"
    folder.mkdir()
    (folder / "lean-toolchain").write_text(toolchain + "\n")
    return folder


def test_a_doc_gen4_profile_is_refused(tmp_path: Path) -> None:
    build(tmp_path / "root", "docs", EnvironmentFacts(source="doc-gen4"))
    with pytest.raises(LeanIndexError) as refused:
        CheckerConfig.for_profile(tmp_path / "root", "DOCS", project_dir=project(tmp_path, PINNED), repl_dir=tmp_path / "repl")
    assert refused.value.code == ErrorCode.INVALID_REQUEST
    assert refused.value.details["source"] == "doc-gen4"


def test_the_project_must_run_the_pinned_toolchain(tmp_path: Path) -> None:
    build(tmp_path / "root", "core", EnvironmentFacts(source="lean", toolchain=PINNED))
    (tmp_path / "repl").mkdir()
    with pytest.raises(LeanIndexError) as refused:
        CheckerConfig.for_profile(tmp_path / "root", "core", project_dir=project(tmp_path, "leanprover/lean4:v4.30.0"), repl_dir=tmp_path / "repl", lake_path=STANDIN / "lake")
    assert refused.value.code == ErrorCode.INVALID_REQUEST
    assert refused.value.details["manifest_toolchain"] == PINNED

    config = CheckerConfig.for_profile(tmp_path / "root", "core", project_dir=project(tmp_path, PINNED), repl_dir=tmp_path / "repl", lake_path=STANDIN / "lake")
    assert config.imports == ["Init"] and config.identity.source == "lean"


def test_sandbox_refuses_a_project_without_a_toolchain_pin(tmp_path):
    config, _ = standin_config(tmp_path, instant=True)
    sandbox = make_sandbox(config)
    assert sandbox.env["ELAN_TOOLCHAIN"] == (config.project_dir / "lean-toolchain").read_text().strip()
    sandbox.remove()
    (config.project_dir / "lean-toolchain").unlink()
    with pytest.raises(LeanIndexError) as caught:
        make_sandbox(config)
    assert caught.value.code is ErrorCode.INVALID_REQUEST


def test_the_identity_is_the_served_manifests_when_the_pinned_copy_lags(tmp_path: Path) -> None:
    """A build killed between the catalog switch and the pinned copy leaves an older copy in
    `manifests/`; the checker answers for the catalog that is served."""
    root = tmp_path / "root"
    (tmp_path / "repl").mkdir()
    build(root, "core", EnvironmentFacts(source="lean", toolchain=PINNED))
    pinned = root / "manifests" / "core.json"
    older = pinned.read_bytes()
    build(root, "core", EnvironmentFacts(source="lean", toolchain=PINNED, imports=["Init", "Std"]))
    pinned.write_bytes(older)
    config = CheckerConfig.for_profile(root, "core", project_dir=project(tmp_path, PINNED), repl_dir=tmp_path / "repl", lake_path=STANDIN / "lake")
    assert config.imports == ["Init", "Std"]
