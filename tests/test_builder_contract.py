"""The catalog builder refuses every violation of `leanindex.declarations/v1`, names the line,
and writes nothing (DESIGN.md "Catalog and manifest"; issue 2, item 4).

Each case below breaks one line of an otherwise valid stream. The library must raise
`LeanIndexError(invalid_stream)` with `details["line"]` pointing at it; `leanindex catalog
build` must exit with `EXIT_STATUS[invalid_stream]` and name the line; and the root folder must
be exactly as before: no catalog, no manifest, nothing left in `catalog/.builds`, and an earlier
good catalog of the profile byte-identical and still verifying.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import file_sha256
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.sample import sample_stream_path
from streamkit import as_file, build, declaration, encode, footer, header, snapshot, stream

GOOD = [
    declaration(["True"], kind="inductive", type="Prop", type_constants=[], module="Init.Prelude"),
    declaration(
        ["Nat", "add_comm"],
        type="∀ (n m : Nat), n + m = m + n",
        type_constants=["Eq", "HAdd.hAdd", "Nat"],
        module="Init.Data.Nat.Basic",
    ),
    declaration(
        ["Nat", "add_zero"],
        type="∀ (n : Nat), n + 0 = n",
        type_constants=["Eq", "HAdd.hAdd", "Nat", "OfNat.ofNat"],
        module="Init.Core",
    ),
]
# Line numbers of the good stream: 1 header, 2-4 the declarations above, 5 footer.


def good_lines() -> list[bytes]:
    return stream(GOOD)


def with_line(number: int, replacement: dict[str, Any] | bytes) -> list[bytes]:
    lines = good_lines()
    lines[number - 1] = encode(replacement)
    return lines


def changed(index: int, **fields: Any) -> dict[str, Any]:
    """GOOD[index] with `fields` replaced (a value of `...` deletes the key)."""
    record = dict(GOOD[index])
    for key, value in fields.items():
        if value is ...:
            del record[key]
        else:
            record[key] = value
    return record


BadStream = Callable[[], list[bytes]]

CASES: list[tuple[str, BadStream, int]] = [
    # JSON and fields
    ("malformed JSON", lambda: with_line(3, b'{"record": "declaration", "name": "Nat.add_comm"'), 3),
    ("not JSON at all", lambda: with_line(3, b"Nat.add_comm : a + b = b + a"), 3),
    ("invalid UTF-8", lambda: with_line(3, encode(GOOD[1]).replace(b"add_comm", b"add_\xff")), 3),
    ("empty line inside the stream", lambda: with_line(3, b""), 3),
    ("JSON array instead of an object", lambda: with_line(3, b"[1, 2]"), 3),
    ("missing field", lambda: with_line(3, changed(1, type=...)), 3),
    ("missing flag", lambda: with_line(3, changed(1, is_deprecated=...)), 3),
    ("mistyped field", lambda: with_line(3, changed(1, type=5)), 3),
    ("null type", lambda: with_line(3, changed(1, type=None)), 3),
    ("unknown extra field", lambda: with_line(3, changed(1, proof="rfl")), 3),
    ("int where bool", lambda: with_line(3, changed(1, is_private=0)), 3),
    ("string where bool", lambda: with_line(3, changed(1, is_instance="false")), 3),
    ("bool where int (range line)", lambda: with_line(3, changed(1, range={"start": {"line": True, "column": 0}, "end": {"line": 2, "column": 0}})), 3),
    ("range line 0 (lines are 1-based)", lambda: with_line(3, changed(1, range={"start": {"line": 0, "column": 0}, "end": {"line": 2, "column": 0}})), 3),
    ("negative column", lambda: with_line(3, changed(1, range={"start": {"line": 1, "column": -1}, "end": {"line": 2, "column": 0}})), 3),
    ("bool component", lambda: with_line(3, changed(1, components=["Nat", True])), 3),
    ("negative numeric component", lambda: with_line(3, changed(1, name="Nat.-1", components=["Nat", -1])), 3),
    ("empty components", lambda: with_line(3, changed(1, components=[])), 3),
    ("type_constants not a list", lambda: with_line(3, changed(1, type_constants="Nat")), 3),
    ("unknown kind", lambda: with_line(3, changed(1, kind="lemma")), 3),
    ("kind in upper case", lambda: with_line(3, changed(1, kind="THEOREM")), 3),
    # names
    ("name not matching its components", lambda: with_line(3, changed(1, name="Nat.add_assoc")), 3),
    ("numeric component printed as a string", lambda: with_line(3, changed(1, name="Nat.1", components=["Nat", "1"])), 3),
    ("string component read as a number", lambda: with_line(3, changed(1, name="Nat.«1»", components=["Nat", 1])), 3),
    ("dot inside a component not escaped", lambda: with_line(3, changed(1, name="Nat.add.comm", components=["Nat", "add.comm"])), 3),
    ("unbalanced escape", lambda: with_line(3, changed(1, name="Nat.«add_comm", components=["Nat", "add_comm"])), 3),
    ("empty name", lambda: with_line(3, changed(1, name="")), 3),
    # order and uniqueness
    ("duplicate", lambda: [*good_lines()[:3], encode(GOOD[1]), encode(GOOD[2]), encode(footer(4))], 4),
    ("out of Name.lt order", lambda: [*good_lines()[:2], encode(GOOD[2]), encode(GOOD[1]), encode(footer(3))], 4),
    ("string order is not Name.lt order", lambda: [encode(header()), encode(GOOD[1]), encode(GOOD[0]), encode(footer(2))], 3),
    ("type_constants unsorted", lambda: with_line(3, changed(1, type_constants=["Nat", "Eq", "HAdd.hAdd"])), 3),
    ("type_constants duplicated", lambda: with_line(3, changed(1, type_constants=["Eq", "Nat", "Nat"])), 3),
    ("value_constants unsorted", lambda: with_line(4, changed(2, value_constants=["Nat.rec", "Eq.refl"])), 4),
    ("conclusion_constants unsorted", lambda: with_line(3, changed(1, type_constants=["Eq", "Nat"], conclusion_constants=["Nat", "Eq"])), 3),
    ("conclusion constant not in the type", lambda: with_line(3, changed(1, type_constants=["Eq"], conclusion_constants=["Eq", "Nat"])), 3),
    ("conclusion_head not in the conclusion", lambda: with_line(3, changed(1, type_constants=["Eq", "Nat"], conclusion_constants=["Nat"], conclusion_head="Eq")), 3),
    ("module not in the header", lambda: with_line(3, changed(1, module="Init.Data.Nat.Lemmas")), 3),
    # header
    ("missing header", lambda: good_lines()[1:], 1),
    ("header with another format", lambda: with_line(1, header(format="leanindex.declarations/v3")), 1),
    ("header missing lean", lambda: with_line(1, {k: v for k, v in header().items() if k != "lean"}), 1),
    ("header modules not a list", lambda: with_line(1, header(modules="Init.Core")), 1),
    ("header extractor with an unknown field", lambda: with_line(1, header(extractor={"name": "x", "version": "1", "build": "7"})), 1),
    ("malformed header", lambda: with_line(1, b'{"record": "header", '), 1),
    ("header second", lambda: [*good_lines()[:3], encode(header()), *good_lines()[3:]], 4),
    ("header repeated right away", lambda: [encode(header()), *good_lines()], 2),
    ("unknown record type", lambda: [*good_lines()[:2], encode({"record": "comment", "text": "hi"}), *good_lines()[2:]], 3),
    # footer and the end of the stream
    ("footer count too small", lambda: with_line(5, footer(2)), 5),
    ("footer count too large", lambda: with_line(5, footer(4)), 5),
    ("footer count as a bool", lambda: with_line(5, {"record": "footer", "count": True}), 5),
    ("footer count as a string", lambda: with_line(5, {"record": "footer", "count": "3"}), 5),
    ("footer with an extra field", lambda: with_line(5, {"record": "footer", "count": 3, "digest": "x"}), 5),
    ("missing footer", lambda: good_lines()[:4], 5),
    ("truncated inside the last declaration", lambda: [*good_lines()[:3], encode(GOOD[2])[:40]], 4),
    ("footer too early", lambda: [*good_lines()[:3], encode(footer(2)), encode(GOOD[2]), encode(footer(3))], 5),
    ("data after the footer", lambda: [*good_lines(), encode(GOOD[2])], 6),
    ("second footer", lambda: [*good_lines(), encode(footer(3))], 6),
    ("header only", lambda: good_lines()[:1], 2),
    ("empty stream", lambda: [], 1),
]


def test_good_stream_builds() -> None:
    """The base the cases break is itself valid (otherwise every case would pass vacuously)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        manifest = build(Path(tmp), "core", good_lines())
        assert manifest.catalog.declaration_count == 3
        assert manifest.catalog.visible_count == 3


@pytest.fixture(scope="module")
def earlier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root with a good CORE catalog built before any bad stream is tried."""
    root = tmp_path_factory.mktemp("earlier")
    build(root, "core", good_lines())
    return root


@pytest.mark.parametrize(("bad", "line"), [(bad, line) for _, bad, line in CASES], ids=[c[0] for c in CASES])
def test_library_refuses_and_writes_nothing(tmp_path: Path, bad: BadStream, line: int) -> None:
    with pytest.raises(LeanIndexError) as caught:
        build(tmp_path, "core", bad())
    assert caught.value.code is ErrorCode.INVALID_STREAM
    assert caught.value.details["line"] == line
    assert caught.value.message.startswith(f"line {line}:")
    assert snapshot(tmp_path) == {}


@pytest.mark.parametrize(("bad", "line"), [(bad, line) for _, bad, line in CASES], ids=[c[0] for c in CASES])
def test_earlier_catalog_survives(earlier: Path, bad: BadStream, line: int) -> None:
    before = snapshot(earlier)
    with pytest.raises(LeanIndexError) as caught:
        build(earlier, "CORE", bad())
    assert caught.value.details["line"] == line
    assert snapshot(earlier) == before
    verify_catalog(CatalogPaths.of(earlier, "core"))


@pytest.mark.parametrize(("bad", "line"), [(bad, line) for _, bad, line in CASES], ids=[c[0] for c in CASES])
def test_cli_exits_non_zero_naming_the_line(earlier: Path, bad: BadStream, line: int, tmp_path: Path) -> None:
    before = snapshot(earlier)
    source = tmp_path / "bad.ndjson"
    source.write_bytes(as_file(bad()))
    result = CliRunner().invoke(main, ["catalog", "build", "--input", str(source), "--profile", "core", "--root", str(earlier)])
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_STREAM] != 0
    assert "invalid_stream" in result.stderr
    assert f"line {line}:" in result.stderr
    assert result.stdout == ""
    assert snapshot(earlier) == before


def test_cli_json_error_object(tmp_path: Path) -> None:
    source = tmp_path / "bad.ndjson"
    source.write_bytes(as_file(with_line(3, changed(1, kind="lemma"))))
    result = CliRunner().invoke(
        main, ["catalog", "build", "--input", str(source), "--profile", "core", "--root", str(tmp_path / "root"), "--json"]
    )
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_STREAM]
    body = json.loads(result.stdout)
    assert set(body) == {"error"}
    assert body["error"]["code"] == "invalid_stream"
    assert body["error"]["details"]["line"] == 3
    assert not (tmp_path / "root" / "manifests").exists()


def test_cli_reads_stdin(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["catalog", "build", "--input", "-", "--profile", "Core", "--root", str(tmp_path), "--json"], input=as_file(good_lines())
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["profile"] == "core"
    assert manifest["catalog"]["declaration_count"] == 3
    verify_catalog(CatalogPaths.of(tmp_path, "core"))


def test_cli_truncated_stdin_writes_nothing(earlier: Path) -> None:
    before = snapshot(earlier)
    truncated = as_file(good_lines())[:-30]
    result = CliRunner().invoke(main, ["catalog", "build", "--input", "-", "--profile", "core", "--root", str(earlier)], input=truncated)
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_STREAM]
    assert "line 5:" in result.stderr
    assert snapshot(earlier) == before


@pytest.mark.parametrize("profile", ["../escape", "", "a b", "x" * 65, "-lead"])
def test_bad_profile_id_is_invalid_request(tmp_path: Path, profile: str) -> None:
    with pytest.raises(LeanIndexError) as caught:
        build(tmp_path, profile, good_lines())
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert snapshot(tmp_path) == {}
    result = CliRunner().invoke(main, ["catalog", "build", "--input", "-", "--profile", profile, "--root", str(tmp_path)], input=as_file(good_lines()))
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert snapshot(tmp_path) == {}


def test_missing_input_file_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["catalog", "build", "--input", str(tmp_path / "absent.ndjson"), "--profile", "core", "--root", str(tmp_path / "root")])
    assert result.exit_code == 2, result.output  # a usage error, not a crash
    assert "does not exist" in result.stderr
    assert not (tmp_path / "root").exists()


def test_rebuild_replaces_catalog_and_removes_the_old_build(tmp_path: Path) -> None:
    build(tmp_path, "core", good_lines())
    first = snapshot(tmp_path)
    build(tmp_path, "core", stream(GOOD[:2]))
    builds = list((tmp_path / "catalog" / ".builds").iterdir())
    assert len(builds) == 1, "the superseded build folder is removed"
    assert snapshot(tmp_path)["catalog/core"] != first["catalog/core"]
    assert verify_catalog(CatalogPaths.of(tmp_path, "core")).catalog.declaration_count == 2


def test_empty_catalog_builds_and_answers(tmp_path: Path) -> None:
    manifest = build(tmp_path, "empty", stream([]))
    assert manifest.catalog.declaration_count == 0
    response = Engine(tmp_path).search(SearchRequest(environment="EMPTY", name_contains="a"))
    assert response.results == [] and response.total_matches == 0 and response.stop_reason.value == "EXHAUSTED"


def test_blank_lines_after_the_footer_are_accepted(tmp_path: Path) -> None:
    manifest = build(tmp_path, "core", [*good_lines(), b"", b"  "])
    assert manifest.catalog.declaration_count == 3


def test_same_stream_gives_the_same_bytes(tmp_path: Path) -> None:
    """The Parquet sha256 and the environment digest depend on the records only, not on the
    time or folder of the build."""
    lines = sample_stream_path().read_bytes().splitlines()
    a = build(tmp_path / "a", "sample", lines)
    b = build(tmp_path / "b", "sample", lines)
    c = build(tmp_path / "a", "sample", lines)
    assert a.catalog.declarations_parquet_sha256 == b.catalog.declarations_parquet_sha256 == c.catalog.declarations_parquet_sha256
    assert a.environment_digest == b.environment_digest == c.environment_digest
    assert file_sha256(CatalogPaths.of(tmp_path / "b", "sample").declarations) == a.catalog.declarations_parquet_sha256
    index_files = {k: v for k, v in a.catalog.files.items() if k.startswith("index/")}
    assert index_files == {k: v for k, v in b.catalog.files.items() if k.startswith("index/")}


def test_different_records_give_different_digests(tmp_path: Path) -> None:
    a = build(tmp_path / "a", "core", good_lines())
    b = build(tmp_path / "b", "core", stream([GOOD[0], GOOD[1], changed(2, doc="Adding zero.")]))
    assert a.catalog.declarations_parquet_sha256 != b.catalog.declarations_parquet_sha256
    # The environment digest covers the environment, not the records: same header, same digest.
    assert a.environment_digest == b.environment_digest


def test_every_record_field_reaches_the_catalog(tmp_path: Path) -> None:
    """Each field of the record model is a Parquet column (a range as four), or is one the
    layout names as read back from another; none is dropped on the way into the catalog."""
    import pyarrow.parquet as pq

    from leanindex.catalog import columns
    from leanindex.records import DeclarationRecord

    build(tmp_path, "fields", stream([declaration(["Foo"], type_fallback=True, value_constants=["Bar"])]))
    stored = pq.read_table(CatalogPaths.of(tmp_path, "fields").declarations)
    for name in DeclarationRecord.model_fields:
        in_columns = name in stored.column_names or any(c.startswith(name + "_") for c in stored.column_names)
        assert in_columns or name in columns.NOT_STORED, name
    row = stored.to_pylist()[0]
    assert row["type_fallback"] is True and row["value_constants"] == ["Bar"]


def test_a_new_record_field_gets_a_column_or_refuses_to_load() -> None:
    """The column layout derives from the record model: a new field gets its column, and a field
    whose type has no column type stops the import instead of vanishing from the catalog."""
    import pyarrow as pa
    from pydantic import StrictInt

    from leanindex.catalog import columns
    from leanindex.records import DeclarationRecord

    class Weighted(DeclarationRecord):
        weight: StrictInt | None = None

    class Mapped(DeclarationRecord):
        weights: dict[str, int] = {}

    assert ("weight", pa.int64()) in columns.read_fields(Weighted)
    with pytest.raises(TypeError, match="weights"):
        columns.read_fields(Mapped)


def test_the_same_stream_gives_the_same_files_whatever_the_hash_seed(tmp_path: Path) -> None:
    """Catalog files are digested and compared across builds (the pinned manifest, `catalog
    diff`), so their bytes may not depend on Python's per-process hash seed (set iteration
    order). The DuckDB database is the one file whose bytes DuckDB does not keep stable."""
    import os
    import subprocess
    import sys

    files = []
    for seed in ("1", "2"):
        root = tmp_path / seed
        done = subprocess.run(
            [sys.executable, "-m", "leanindex", "catalog", "build", "--profile", "s", "--input", str(sample_stream_path()),
             "--root", str(root), "--json"],
            capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert done.returncode == 0, done.stderr
        files.append(verify_catalog(CatalogPaths.of(root, "s")).catalog.files)
    differ = sorted(name for name in files[0] if files[0][name] != files[1][name])
    assert differ == ["catalog.duckdb"]
    assert any(name.startswith("index/text/") for name in files[0])
