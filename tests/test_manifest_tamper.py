"""Every field of a manifest is covered by a digest that verification checks (issue 10, item 2).

For each leaf field of the manifest a catalog is served from, the test changes that one value
(a number by 10,000 as in `86957 -> 96957`, a string by one character, a null into a string, a
boolean flipped, a list emptied or extended) and expects `catalog verify`, the engine and
`environments()` to refuse it with `digest_mismatch`. `environment_digest` keeps its meaning
(the identity, equal for two builds of one environment); `manifest_digest` covers the rest.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import read_manifest
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.sample import sample_stream_path
from streamkit import build

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()
QUERY = SearchRequest(environment="SAMPLE", name_contains="add_comm")


def leaves(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every leaf path of a JSON value (an empty list or object counts as a leaf)."""
    if isinstance(value, dict) and value:
        return [leaf for key in value for leaf in leaves(value[key], (*path, key))]
    if isinstance(value, list) and value:
        return [leaf for i, item in enumerate(value) for leaf in leaves(item, (*path, i))]
    return [path]


def changed(value: Any) -> Any:
    """A different value of a plausible type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 10000
    if isinstance(value, str):
        return value[:-1] + ("1" if not value.endswith("1") else "2") if value else "x"
    if value is None:
        return "x"
    if isinstance(value, list):
        return ["x"]
    return {"x": "y"}


def sample_root(tmp_path: Path) -> Path:
    build(tmp_path, "sample", SAMPLE_LINES)
    return tmp_path


def served_manifest(root: Path) -> Path:
    """The manifest the engine serves the profile from."""
    return CatalogPaths.of(root, "sample").served_manifest


def _reference_fields() -> list[tuple[str | int, ...]]:
    """The leaf paths of a freshly built manifest (all but `manifest_digest` itself)."""
    with tempfile.TemporaryDirectory(prefix="leanindex-tamper-") as folder:
        reference = json.loads(served_manifest(sample_root(Path(folder))).read_text())
    return [path for path in leaves(reference) if path != ("manifest_digest",)]


FIELDS = _reference_fields()


def test_every_top_level_field_is_exercised() -> None:
    """The list below is derived from a real manifest, so a new field is tampered with too."""
    tops = {path[0] for path in FIELDS}
    assert {"profile", "lean", "catalog", "environment_digest", "source", "extractor"} <= tops
    assert ("catalog", "declaration_count") in FIELDS and ("catalog", "built_at") in FIELDS
    assert ("catalog", "visible_count") in FIELDS and ("catalog", "builder_version") in FIELDS


@pytest.mark.parametrize("field", FIELDS, ids=lambda path: ".".join(map(str, path)))
def test_tampered_field_is_refused(tmp_path: Path, field: tuple[str | int, ...]) -> None:
    root = sample_root(tmp_path)
    engine = Engine(root)
    try:
        assert engine.search(QUERY).total_matches == 1
        path = served_manifest(root)
        data = json.loads(path.read_text())
        holder = data
        for key in field[:-1]:
            holder = holder[key]
        holder[field[-1]] = changed(holder[field[-1]])
        path.write_text(json.dumps(data, indent=2))

        result = CliRunner().invoke(main, ["catalog", "verify", "--profile", "sample", "--root", str(root), "--json"])
        assert result.exit_code != 0, result.stdout
        code = json.loads(result.stdout)["error"]["code"]
        assert code in {"digest_mismatch", "catalog_unavailable"}
        assert result.exit_code == EXIT_STATUS[ErrorCode(code)]
        with pytest.raises(LeanIndexError) as caught:
            engine.search(QUERY)
        assert caught.value.code.value == code
        listed = {e.environment: e for e in engine.environments().environments}
        assert listed["SAMPLE"].verified is False
    finally:
        engine.close()


def test_a_one_byte_count_edit_is_a_digest_mismatch(tmp_path: Path) -> None:
    """The campaign's case: `declaration_count` edited in place by one byte."""
    root = sample_root(tmp_path)
    path = served_manifest(root)
    count = read_manifest(path).catalog.declaration_count
    text = path.read_text()
    assert text.count(f'"declaration_count": {count}') == 1
    edited = str(count + 1)
    path.write_text(text.replace(f'"declaration_count": {count}', f'"declaration_count": {edited}'))
    with pytest.raises(LeanIndexError) as caught:
        read_manifest(path)
    assert caught.value.code is ErrorCode.DIGEST_MISMATCH
    assert caught.value.details["field"] == "manifest_digest"


def test_two_builds_of_one_environment_share_the_identity_digest(tmp_path: Path) -> None:
    first = build(tmp_path / "a", "sample", SAMPLE_LINES)
    second = build(tmp_path / "b", "sample", SAMPLE_LINES)
    assert first.environment_digest == second.environment_digest
