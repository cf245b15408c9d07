"""The pinned manifest of the embedded Lean core catalog is rebuilt from the archive and diffed.

`manifests/core-docgen.json` is committed; the session's `leanindex demo` import (a fresh
rebuild from `py/leanindex/data/docgen-core-v4.33.0.tar.xz`) must be identical to it under
`leanindex catalog diff` (environment digest, counts, Parquet digest).
"""

from __future__ import annotations

import json
from pathlib import Path

from embedded_support import DemoRun, run_leanindex
from leanindex.catalog.manifest import read_manifest
from leanindex.errors import OUTCOME_EXIT, Outcome

PINNED = Path(__file__).resolve().parents[1] / "manifests" / "core-docgen.json"


def test_the_rebuilt_embedded_catalog_matches_the_pinned_manifest(embedded_demo: DemoRun) -> None:
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    diff = run_leanindex(embedded_demo.root, "catalog", "diff", "--profile", "core-docgen", "--against", str(PINNED), "--json")
    report = json.loads(diff.stdout)
    assert diff.returncode == 0, report
    assert report["identical"] is True and report["identity_changes"] == []
    assert report["counts"]["declarations"] == {"before": 86957, "after": 86957}


def test_drift_from_the_pinned_manifest_fails(embedded_demo: DemoRun, tmp_path: Path) -> None:
    pinned = read_manifest(PINNED)
    catalog = pinned.catalog.model_copy(update={"declarations_parquet_sha256": "0" * 64, "declaration_count": 86956})
    # A manifest as a build would write it (its own digests recomputed), only with other contents.
    drifted = tmp_path / "core-docgen.json"
    drifted.write_text(pinned.model_copy(update={"catalog": catalog}).sealed().to_json())
    diff = run_leanindex(embedded_demo.root, "catalog", "diff", "--profile", "core-docgen", "--against", str(drifted))
    assert diff.returncode == OUTCOME_EXIT[Outcome.DRIFTED], diff.stdout + diff.stderr
    assert "drift" in diff.stdout and "86,956 -> 86,957" in diff.stdout
