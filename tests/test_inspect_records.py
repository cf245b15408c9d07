"""Inspect from the memory-mapped index (`catalog.records`): every answer equals the one built
from the stream line the builder was given (the sample catalog whole; a random sample of the
shipped core catalog, its lines converted again from the embedded archive), a tampered record file
is refused, and the name look-up agrees with a dict."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from embedded_support import DemoRun
from leanindex.catalog.layout import connect_duckdb
from leanindex.catalog.records import find_name, name_hash, write_records
from leanindex.docgen.importer import collect_docgen, docgen_stream
from leanindex.embedded import CORE_ROOTS, EMBEDDED_LEAN_VERSION, EMBEDDED_PROFILE, embedded_archive
from leanindex.engine import Engine
from leanindex.engine.loaded import LoadedCatalog
from leanindex.models import INSPECT_RECORD_FIELDS, DeclarationFlags, ExistsRequest, InspectManyRequest, InspectRequest, InspectResponse
from leanindex.names import printed_namespace
from leanindex.records import FLAG_FIELDS, DeclarationRecord
from leanindex.sample import sample_stream_path
from streamkit import build


def _stored_answer(records: dict[str, dict], catalog: LoadedCatalog, name: str, found: InspectResponse) -> InspectResponse:
    """The answer as built from `records` (name -> the declaration's stream line as the builder
    was given it); the instance count is counted in `records` too; `uses` and `used_by_count` (index postings, unchanged) are taken from
    `found`."""
    row = records[name]
    instance_count = found.instance_count
    instances = [r.get("instance_class") for r in records.values() if r.get("is_instance")]
    if row.get("is_class") and None not in instances:
        instance_count = instances.count(name)
    return InspectResponse(
        **catalog.identity().model_dump(),
        **{field: row.get(field, DeclarationRecord.model_fields[field].get_default()) for field in INSPECT_RECORD_FIELDS},
        namespace=printed_namespace(row["name"], row["components"]),
        flags=DeclarationFlags(**{flag: row.get(flag, False) for flag in FLAG_FIELDS}),
        uses=found.uses,
        used_by_count=found.used_by_count,
        instance_count=instance_count,
    )


def _assert_answers_match_records(engine: Engine, profile: str, records: dict[str, dict], names: list[str]) -> None:
    catalog = engine.catalog(profile)
    for name in names:
        found = engine.inspect(InspectRequest(environment=profile, declaration_name=name))
        assert found.model_dump_json() == _stored_answer(records, catalog, name, found).model_dump_json(), name
    for first in range(0, len(names), 100):
        batch = names[first : first + 100]
        many = engine.inspect_many(InspectManyRequest(environment=profile, names=batch))
        singles = [engine.inspect(InspectRequest(environment=profile, declaration_name=name)) for name in batch]
        assert [r.response for r in many.results] == singles
        exists = engine.exists(ExistsRequest(environment=profile, names=batch))
        assert [(r.exists, r.kind, r.module) for r in exists.results] == [(True, s.kind, s.module) for s in singles]


def test_every_sample_declaration_answers_as_its_stream_line(tmp_path: Path) -> None:
    lines = sample_stream_path().read_bytes().splitlines()
    build(tmp_path, "sample", lines)
    records = {r["name"]: r for r in map(json.loads, lines) if r.get("record") == "declaration"}
    engine = Engine(tmp_path)
    try:
        names = engine.catalog("sample").all_names()
        assert len(names) > 10 and set(names) == set(records)
        _assert_answers_match_records(engine, "sample", records, names)
    finally:
        engine.close()


def test_core_declarations_answer_as_their_stream_lines(embedded_demo: DemoRun) -> None:
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    # The lines `leanindex demo` built from, converted again from the embedded archive.
    collection = collect_docgen(embedded_archive(), package_roots=sorted(CORE_ROOTS))
    try:
        lines = list(docgen_stream(collection, EMBEDDED_LEAN_VERSION))
    finally:
        collection.lines.close()
    records = {r["name"]: r for r in map(json.loads, lines) if r.get("record") == "declaration"}
    engine = Engine(embedded_demo.root)
    try:
        catalog = engine.catalog(EMBEDDED_PROFILE)
        names = catalog.all_names()
        assert set(names) == set(records)
        classes = [name for name, row in records.items() if row.get("is_class")]
        assert classes and catalog.instances_recorded()
        rng = random.Random(31)
        # Every class (instance counts from the index) and 1,500 random names.
        picked = sorted({*classes, *rng.sample(names, 1500)})
        _assert_answers_match_records(engine, EMBEDDED_PROFILE, records, picked)
    finally:
        engine.close()


def _name_arrays(names: list[str]) -> dict[str, np.ndarray]:
    """The index's `names`/`name_starts` layout of `names` and `write_records`' arrays over a
    database holding them."""
    encoded = [n.encode() for n in names]
    text = b"\x00" + b"\x00".join(encoded) + b"\x00"
    starts = np.zeros(len(names) + 1, dtype=np.int64)
    np.cumsum([len(n) + 1 for n in encoded], out=starts[1:])
    starts += 1
    starts[-1] = len(text)
    con = connect_duckdb()
    con.execute("CREATE TABLE declarations (pos BIGINT, name VARCHAR, record VARCHAR)")
    con.execute("CREATE TABLE instances (pos INTEGER, class_name VARCHAR)")
    if names:
        con.executemany("INSERT INTO declarations VALUES (?, ?, ?)", [(i, n, json.dumps({"record": "declaration", "name": n, "doc": n})) for i, n in enumerate(names)])
    names_array = np.frombuffer(text, dtype=np.uint8)
    return {"names": names_array, "name_starts": starts, **write_records(con, names_array, starts)}


NAME = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(NAME | st.sampled_from(["Nat", "Nat.add", "at.add", "Nat.add_comm", "α", "αβ", "β", "Nat.α"]), max_size=40, unique=True), st.data())
def test_name_look_up_agrees_with_a_dict(names: list[str], data: st.DataObject) -> None:
    arrays = _name_arrays(names)
    oracle = {name: i for i, name in enumerate(names)}
    # The names themselves, their proper prefixes and suffixes (often names of others, or of
    # none), names joined across the NUL, and unrelated text.
    probes = {*names, "", "\x00", "\ud800"}
    for name in names:
        probes.update(name[:k] for k in range(1, len(name)))
        probes.update(name[k:] for k in range(1, len(name)))
    probes.update("\x00".join(pair) for pair in zip(names, names[1:], strict=False))
    probes.update(data.draw(st.lists(NAME, max_size=10)))
    for probe in probes:
        found = find_name(arrays["name_hashes"], arrays["name_hash_positions"], arrays["names"], arrays["name_starts"], probe)
        assert found == oracle.get(probe), probe


def test_names_of_equal_hash_are_told_apart() -> None:
    arrays = _name_arrays(["a", "b", "c"])
    # As if "a" and "b" had the hash of "b" ("a" first): the look-up compares the stored names.
    key = name_hash(b"b")
    hashes = np.array(sorted([key, key, name_hash(b"c")]), dtype=np.uint64)
    positions = np.array([0, 1, 2] if hashes[0] == key else [2, 0, 1], dtype=np.int32)
    assert find_name(hashes, positions, arrays["names"], arrays["name_starts"], "b") == 1
    assert find_name(hashes, positions, arrays["names"], arrays["name_starts"], "c") == 2
    assert find_name(hashes, positions, arrays["names"], arrays["name_starts"], "a") is None
