"""A failed or killed publish leaves a complete catalog served (issue 10, item 3).

A profile is built (OLD, 76 sample declarations), then rebuilt from a one-declaration stream
(NEW) while a fault hits one step of publishing: the disk of `manifests/` is full, or the build
is killed with SIGKILL just before or just after a step. Afterwards a fresh engine must serve a
complete catalog (OLD, or NEW once the atomic switch happened), `catalog verify` must pass, and
after it `manifests/<profile>.json` must equal the served catalog's own manifest.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from fault_support import build_killed_at, fill, small_tmpfs
from leanindex.catalog.builder import build_catalog
from leanindex.catalog.layout import CatalogPaths
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.sample import sample_stream_path
from streamkit import as_file, declaration, stream

OLD_LINES = sample_stream_path().read_bytes().splitlines()
NEW_LINES = stream([declaration(["Nat", "add_comm"])])
QUERY = SearchRequest(environment="SAMPLE", name_contains="add_comm")


def served_count(root: Path) -> int:
    """The declaration count a fresh engine serves for SAMPLE (raises if it serves nothing)."""
    engine = Engine(root)
    try:
        assert engine.search(QUERY).results[0].name == "Nat.add_comm"
        (summary,) = engine.environments().environments
        assert summary.verified is True, summary.problem
        return summary.declaration_count
    finally:
        engine.close()


def verify_and_pin(root: Path) -> dict:
    result = CliRunner().invoke(main, ["catalog", "verify", "--profile", "sample", "--root", str(root), "--json"])
    assert result.exit_code == 0, result.stdout
    paths = CatalogPaths.of(root, "sample")
    assert json.loads(paths.manifest.read_text()) == json.loads(paths.served_manifest.read_text())
    return json.loads(result.stdout)


@pytest.fixture
def old_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    build_catalog(iter(OLD_LINES), root, "sample")
    return root


def test_full_manifests_disk_keeps_the_previous_catalog(old_root: Path) -> None:
    before = CatalogPaths.of(old_root, "sample").manifest.read_bytes()
    with small_tmpfs(old_root / "manifests", 256 * 1024) as manifests:
        (manifests / "sample.json").write_bytes(before)
        fill(manifests)
        with pytest.raises(LeanIndexError) as caught:
            build_catalog(iter(NEW_LINES), old_root, "sample")
        assert caught.value.code is ErrorCode.STORAGE_FULL
        assert caught.value.details["path"] == str(manifests / "sample.json")
        assert (manifests / "sample.json").read_bytes() == before
        assert served_count(old_root) == 76
    assert served_count(old_root) == 76
    verify_and_pin(old_root)


# Each patch kills the build at one moment of publishing (`kill()` is SIGKILL of the build).
KILL_POINTS = {
    "before the link switch": "builder._switch_link = lambda link, target, _f=builder._switch_link: (kill(), _f(link, target))",
    "after the link switch": "builder._switch_link = lambda link, target, _f=builder._switch_link: (_f(link, target), kill())",
    "at the pinned manifest write": (
        "builder.write_atomically = lambda path, text, _f=builder.write_atomically: "
        "kill() if path.parent.name == 'manifests' else _f(path, text)"
    ),
    "after the pinned manifest write": (
        "builder.write_atomically = lambda path, text, _f=builder.write_atomically: "
        "(_f(path, text), kill() if path.parent.name == 'manifests' else None)"
    ),
}
SERVED_AFTER = {
    "before the link switch": 76,
    "after the link switch": 1,
    "at the pinned manifest write": 1,
    "after the pinned manifest write": 1,
}


@pytest.mark.parametrize("moment", list(KILL_POINTS))
def test_build_killed_while_publishing(old_root: Path, tmp_path: Path, moment: str) -> None:
    new_input = tmp_path / "new.ndjson"
    new_input.write_bytes(as_file(NEW_LINES))
    status = build_killed_at(old_root, "sample", new_input, KILL_POINTS[moment])
    assert status == -signal.SIGKILL
    assert served_count(old_root) == SERVED_AFTER[moment]
    verify_and_pin(old_root)
    assert served_count(old_root) == SERVED_AFTER[moment]
