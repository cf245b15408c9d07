"""Serving opens no database (issue 31): the instance table, the constant names and the module
names are index arrays (`catalog.instances`, `catalog.index`) equal to the database tables they
are written from, on the sample catalog, the shipped core catalog and random tables; a tampered
one (or a record file of `catalog.records`) is refused; and a search or inspect process never imports DuckDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embedded_support import DemoRun
from leanindex.catalog.index import SearchIndex, joined_strings
from leanindex.catalog.instances import INSTANCE_ARRAYS, instance_counts, instance_positions, instances_recorded, write_instances
from leanindex.catalog.layout import CatalogPaths, connect_duckdb
from leanindex.catalog.records import RECORD_ARRAYS
from leanindex.catalog.verify import verify_catalog
from leanindex.embedded import EMBEDDED_PROFILE
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.names import name_sort_key
from leanindex.sample import sample_stream_path
from streamkit import build, declaration, stream

NAME_ARRAYS = ("constant_names", "constant_name_starts", "module_names", "module_name_starts")


def _assert_index_matches_database(root: Path, profile: str) -> dict[str, list[int]]:
    """Every class of the database's `instances` table has exactly its positions in the index
    arrays, in code-point order of class names; the unrecorded instances, the constant names and
    the module names are the database's; the loaded catalog answers the same. Returns the
    database's table (class -> positions)."""
    paths = CatalogPaths.of(root, profile)
    con = connect_duckdb(paths.database, read_only=True)
    try:
        table = {cls: list(found) for cls, found in con.execute("SELECT class_name, list(pos ORDER BY pos) FROM instances WHERE class_name IS NOT NULL GROUP BY class_name").fetchall()}
        unrecorded = [pos for (pos,) in con.execute("SELECT pos FROM instances WHERE class_name IS NULL ORDER BY pos").fetchall()]
        constants = [name for (name,) in con.execute("SELECT name FROM constants ORDER BY id").fetchall()]
        modules = [name for (name,) in con.execute("SELECT name FROM modules ORDER BY id").fetchall()]
        names = [name for (name,) in con.execute("SELECT name FROM declarations ORDER BY pos").fetchall()]
    finally:
        con.close()
    index = SearchIndex.load(paths.catalog_dir)
    counts = instance_counts(index)
    assert list(counts) == sorted(table)  # str order is code-point order
    assert counts == {cls: len(found) for cls, found in table.items()}
    assert index.instance_unrecorded.tolist() == unrecorded
    assert instances_recorded(index) == (not unrecorded)
    probes = {*table, *names, "", "\x00", "\ud800", *(cls[:-1] for cls in table), *(cls + "x" for cls in table)}
    for probe in probes:
        found = instance_positions(index, probe)
        assert found.dtype == np.int64
        assert found.tolist() == table.get(probe, []), probe
    assert joined_strings(index.constant_names, index.constant_name_starts) == constants
    assert joined_strings(index.module_names, index.module_name_starts) == modules
    engine = Engine(root)
    try:
        catalog = engine.catalog(profile)
        assert (catalog.constant_names, catalog.modules) == (constants, modules)
        assert catalog.constant_ids == {name: i for i, name in enumerate(constants)}
        assert catalog.instances_recorded() == (not unrecorded)
        for cls, found in table.items():
            assert catalog.instance_positions(cls).tolist() == found
            assert catalog.has_instances(cls)
    finally:
        engine.close()
    return table


def test_the_sample_catalogs_arrays_are_its_database_tables(tmp_path: Path) -> None:
    build(tmp_path, "sample", sample_stream_path().read_bytes().splitlines())
    table = _assert_index_matches_database(tmp_path, "sample")
    # The sample (an extractor stream) records no instance's class.
    assert table == {}
    assert not instances_recorded(SearchIndex.load(CatalogPaths.of(tmp_path, "sample").catalog_dir))


def test_the_core_catalogs_arrays_are_its_database_tables(embedded_demo: DemoRun) -> None:
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    table = _assert_index_matches_database(embedded_demo.root, EMBEDDED_PROFILE)
    assert (len(table), sum(map(len, table.values()))) == (422, 7977)


#: Class names: any text (a NUL or non-ASCII included: the arrays are exact for any string).
CLASS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), CLASS, st.sampled_from(["Add", "AddMonoid", "Ad", "α", "αβ", "β", "Z"])), max_size=40))
def test_written_arrays_answer_as_the_table(classes: list[str | None]) -> None:
    con = connect_duckdb()
    try:
        con.execute("CREATE TABLE instances (pos INTEGER, class_name VARCHAR)")
        if classes:
            con.executemany("INSERT INTO instances VALUES (?, ?)", list(enumerate(classes)))
        arrays = write_instances(con)
    finally:
        con.close()
    index = type("Arrays", (), arrays)
    oracle: dict[str, list[int]] = {}
    for pos, cls in enumerate(classes):
        if cls is not None:
            oracle.setdefault(cls, []).append(pos)
    assert instance_counts(index) == {cls: len(oracle[cls]) for cls in sorted(oracle)}
    assert list(instance_counts(index)) == sorted(oracle)
    for probe in {*oracle, "", "A", "Adz", "\x00", "\ud800"}:
        assert instance_positions(index, probe).tolist() == oracle.get(probe, []), probe
    assert instances_recorded(index) == (None not in classes)
    assert index.instance_unrecorded.tolist() == [pos for pos, cls in enumerate(classes) if cls is None]


@settings(max_examples=60, deadline=None)
@given(st.lists(CLASS, max_size=30))
def test_joined_strings_reads_back_any_list(values: list[str]) -> None:
    from leanindex.catalog.index import _joined

    text, starts = _joined([v.encode() for v in values], lead=True)
    assert joined_strings(text, starts) == values


@pytest.mark.parametrize("array", [*INSTANCE_ARRAYS, *NAME_ARRAYS, *RECORD_ARRAYS])
def test_a_tampered_instance_name_or_record_file_is_refused(tmp_path: Path, array: str) -> None:
    build(tmp_path, "sample", sample_stream_path().read_bytes().splitlines())
    path = CatalogPaths.of(tmp_path, "sample").catalog_dir / "index" / f"{array}.npy"
    with open(path, "r+b") as handle:
        # The last byte: array data past the .npy header (the header's end for an empty array).
        size = handle.seek(0, os.SEEK_END)
        handle.seek(size - 1)
        byte = handle.read(1)
        handle.seek(size - 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(LeanIndexError) as caught:
        verify_catalog(CatalogPaths.of(tmp_path, "sample"))
    assert caught.value.code is ErrorCode.DIGEST_MISMATCH
    assert caught.value.details["file"] == f"index/{array}.npy"
    engine = Engine(tmp_path)
    try:
        with pytest.raises(LeanIndexError) as refused:
            engine.search(SearchRequest(environment="sample", name_contains="add"))
        assert refused.value.code is ErrorCode.DIGEST_MISMATCH
    finally:
        engine.close()


def _instances_stream() -> list[bytes]:
    """A stream whose instances all name their class: `Add` (two), `Decidable` (one)."""
    records = [
        declaration(["Add"], kind="inductive", is_class=True, type="Type → Type", type_constants=[]),
        declaration(["instAddNat"], kind="definition", is_instance=True, instance_class="Add", type="Add Nat", type_constants=["Add", "Nat"]),
        declaration(["Int", "instAdd"], kind="definition", is_instance=True, instance_class="Add", type="Add Int", type_constants=["Add", "Int"]),
        declaration(["instDecEqNat"], kind="definition", is_instance=True, instance_class="Decidable", type="DecidableEq Nat", type_constants=["DecidableEq", "Nat"]),
        declaration(["Nat", "add_comm"]),
    ]
    return stream(sorted(records, key=lambda r: name_sort_key(r["components"])))


_PROBE = """
import json, sys
from pathlib import Path
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.models import InspectRequest, SearchRequest
root = Path(sys.argv[1])
try:
    main(["search", "-e", "inst", "-n", "add", "--root", str(root), "--json"], prog_name="leanindex")
except SystemExit as done:
    assert done.code == 0, done.code
engine = Engine(root)
found = engine.search(SearchRequest(environment="inst", instances_of="Add"))
shown = engine.inspect(InspectRequest(environment="inst", declaration_name="Add"))
engine.close()
print(json.dumps({"instances": [r.name for r in found.results], "count": shown.instance_count,
                  "duckdb": sorted(m for m in sys.modules if m.split(".")[0] in ("duckdb", "_duckdb"))}), file=sys.stderr)
"""


def test_search_and_inspect_never_import_duckdb(tmp_path: Path) -> None:
    build(tmp_path, "inst", _instances_stream())
    done = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path)], capture_output=True, text=True, env={**os.environ, "LEANINDEX_ROOT": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stderr.strip().splitlines()[-1])
    assert probe["instances"] == ["instAddNat", "Int.instAdd"]
    assert probe["count"] == 2
    assert probe["duckdb"] == []
