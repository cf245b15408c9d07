"""What a doc-gen4 import records about what its data lacks (issue 28): missing modules, host
modules, absent facts, blind spots of the big operators, and doc-gen4's instance table, on
small doc-gen4 folders written here in doc-gen4's layout; and how the manifest digests them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from leanindex.catalog.builder import build_catalog
from leanindex.catalog.index import SearchIndex, joined_strings
from leanindex.catalog.instances import instance_counts, instance_positions, instances_recorded
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import (
    BlindSpot,
    CatalogGaps,
    HostModule,
    Manifest,
    MissingModule,
    SourceInfo,
    flag_fact,
    kind_fact,
    parse_manifest,
    read_manifest,
)
from leanindex.docgen import import_docgen
from leanindex.docgen.gaps import BIG_OPERATORS, blind_spots
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SEARCH_FLAGS
from leanindex.records import FLAG_FIELDS, Kind
from streamkit import declaration as stream_declaration
from streamkit import stream

COMMIT = "d8b18978322de05a8f3dba51ef03cf5461676c17"
PROP = '<a href="./foundational_types.html">Prop</a>'


def link(name: str, module: str, text: str | None = None) -> str:
    return f'<a href="./{module.replace(".", "/")}.html#{name}">{text or name}</a>'


def decl(name: str, kind: str = "theorem", type_html: str = PROP, kind_text: str | None = None) -> dict:
    head = (
        f'<div class="decl_header"><span class="decl_kind">{kind_text or kind}</span>\n'
        f'<span class="decl_name"><a class="break_within" href="./M.html#{name}">{name}</a></span>'
        f'<span class="decl_args"> :</span><div class="decl_type">{type_html}</div></div>'
    )
    return {
        "info": {
            "name": name, "kind": kind, "doc": "", "docLink": f"./M.html#{name}", "line": 1,
            "sourceLink": f"https://github.com/leanprover/lean4/blob/{COMMIT}/src/M.lean#L1-L2",
        },
        "header": head,
    }


def write(folder: Path, module: str, declarations: list[dict], imports: list[str] = (), instances: list[dict] = ()) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    body = {"name": module, "imports": list(imports), "instances": list(instances), "declarations": declarations}
    (folder / f"declaration-data-{module}.bmp").write_text(json.dumps(body))


def project(folder: Path) -> Path:
    """Lean core (`Init.Core`), a package `Pkg` importing it and a missing `Init.Gone`, and a
    host project `Host` importing `Pkg`; signatures link into `Init.Gone` and `Init.Lost`
    (no file, imported by nobody)."""
    write(folder, "Init.Core", [decl("Eq"), decl("instDecEq", "instance", link("Decidable", "Init.Core"))],
          instances=[{"name": "instDecEq", "className": "Decidable", "typeNames": []}])
    write(folder, "Init.Core2", [decl("Decidable", "class")], imports=["Init.Core"])
    write(folder, "Pkg.A", [
        decl("Pkg.a", type_html=link("Gone.x", "Init.Gone") + " " + link("Gone.b", "Init.Gone") + " " + link("Eq", "Init.Core")),
        decl("Pkg.b", type_html=link("Gone.a", "Init.Gone")),
        decl("Pkg.c", type_html=link("Lost.f", "Init.Lost")),
        decl("Pkg.inst", "instance", link("Decidable", "Init.Core")),
        decl("Pkg.inst2", "instance", link("Decidable", "Init.Core")),
    ], imports=["Init.Core", "Init.Gone"], instances=[
        {"name": "Pkg.inst", "className": "Decidable", "typeNames": []},
        {"name": "Pkg.inst2", "className": "Pkg.Cls", "typeNames": []},
    ])
    write(folder, "Host", [decl("Host.h"), decl("Host.g")], imports=["Pkg.A"])
    write(folder, "Host.Empty", [], imports=["Host"])
    return folder


def test_missing_modules_are_the_imported_and_linked_modules_without_a_file(tmp_path: Path) -> None:
    manifest = import_docgen(project(tmp_path / "docs"), tmp_path / "root", "p").manifest
    assert manifest.gaps.missing_modules == [
        # linked names in Name.lt order (`Gone.a` < `Gone.b` < `Gone.x`), counted once per declaration
        MissingModule(module="Init.Gone", imported_by=["Pkg.A"], linked_names=["Gone.a", "Gone.b", "Gone.x"], linking_declarations=2),
        MissingModule(module="Init.Lost", imported_by=[], linked_names=["Lost.f"], linking_declarations=1),
    ]
    # Without package roots every module is the profile's.
    assert manifest.gaps.host_modules == []


def test_host_modules_are_those_outside_the_packages_the_profile_imports(tmp_path: Path) -> None:
    docs = project(tmp_path / "docs")
    manifest = import_docgen(docs, tmp_path / "root", "p", package_roots=["Pkg"]).manifest
    assert manifest.gaps.host_modules == [HostModule(module="Host", declarations=2), HostModule(module="Host.Empty", declarations=0)]
    # Lean core always belongs to the profile; `Host` does when it is named.
    assert import_docgen(docs, tmp_path / "core", "c", package_roots=["Init"]).manifest.gaps.host_modules[0].module == "Host"
    assert import_docgen(docs, tmp_path / "all", "a", package_roots=["Host"]).manifest.gaps.host_modules == []


@pytest.mark.parametrize("roots", [["Pkg.A"], ["3"], ["Nowhere"]])
def test_bad_package_roots_are_refused_before_anything_is_written(tmp_path: Path, roots: list[str]) -> None:
    with pytest.raises(LeanIndexError) as caught:
        import_docgen(project(tmp_path / "docs"), tmp_path / "root", "p", package_roots=roots)
    assert caught.value.code == ErrorCode.INVALID_REQUEST and caught.value.details["field"] == "package_roots"
    assert not (tmp_path / "root" / "manifests").exists()


def test_absent_facts_of_docgen_are_hidden_recursors_and_deprecation(tmp_path: Path) -> None:
    manifest = import_docgen(project(tmp_path / "docs"), tmp_path / "root", "p").manifest
    assert manifest.source.absent_facts == ["flag:deprecated", "hidden", "kind:recursor"]
    # The flag keys are those of the search `flags` filter.
    assert {flag_fact(field) for field in SEARCH_FLAGS.values()} == {f"flag:{key}" for key in SEARCH_FLAGS}
    assert kind_fact(Kind.RECURSOR) == "kind:recursor"
    assert "type_fallback" in FLAG_FIELDS  # a boolean of the record, but no flag of the search
    with pytest.raises(ValueError):
        flag_fact("type_fallback")


def test_the_instance_table_gives_each_instance_its_class(tmp_path: Path) -> None:
    root = tmp_path / "root"
    import_docgen(project(tmp_path / "docs"), root, "p")
    index = SearchIndex.load(CatalogPaths.of(root, "p").catalog_dir)
    assert instances_recorded(index)
    assert instance_counts(index) == {"Decidable": 2, "Pkg.Cls": 1}
    names = joined_strings(index.names, index.name_starts)
    assert [names[int(p)] for p in instance_positions(index, "Decidable")] == ["instDecEq", "Pkg.inst"]
    # `Pkg.inst2`'s signature links `Decidable`, but the table says `Pkg.Cls`.
    assert [names[int(p)] for p in instance_positions(index, "Pkg.Cls")] == ["Pkg.inst2"]
    assert len(instance_positions(index, "Nowhere")) == 0


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"name": "Eq", "className": "Decidable"}, "names no instance"),
        ({"name": "instDecEq", "className": "not a name."}, "not a Lean name"),
    ],
)
def test_a_bad_instance_table_entry_stops_the_import(tmp_path: Path, entry: dict, problem: str) -> None:
    docs = tmp_path / "docs"
    write(docs, "Init.Core", [decl("Eq"), decl("instDecEq", "instance")], instances=[{**entry, "typeNames": []}])
    with pytest.raises(LeanIndexError, match=problem) as caught:
        import_docgen(docs, tmp_path / "root", "p")
    assert caught.value.code == ErrorCode.INVALID_STREAM


def test_an_instance_without_a_table_entry_is_not_recorded(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "Init.Core", [decl("instDecEq", "instance")])
    root = tmp_path / "root"
    import_docgen(docs, root, "p")
    assert not instances_recorded(SearchIndex.load(CatalogPaths.of(root, "p").catalog_dir))


def test_a_stream_refuses_an_instance_class_on_a_non_instance(tmp_path: Path) -> None:
    lines = stream([stream_declaration(["Foo"], instance_class="Decidable")])
    with pytest.raises(LeanIndexError, match="instance_class") as caught:
        build_catalog(lines, tmp_path, "s")
    assert caught.value.code == ErrorCode.INVALID_STREAM


def _sum_type(linked: bool) -> str:
    shown = link("Finset.sum", "Mathlib.Algebra.BigOperators", "∑ x ∈ s, f x") if linked else "∑ x ∈ s, f x"
    return shown + " = " + link("Nat", "Init.Prelude")


def test_a_big_operator_linked_in_under_nine_tenths_of_its_signatures_is_a_blind_spot(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    # 10 signatures show `∑ ` and 8 link Finset.sum: 80 % < 90 %; `∑'` is another notation.
    write(docs, "Init.Sums", [decl(f"s{i}", type_html=_sum_type(i < 8)) for i in range(10)] + [decl("t", type_html="∑' x, f x")])
    manifest = import_docgen(docs, tmp_path / "root", "p").manifest
    assert manifest.source.blind_spots == [
        BlindSpot(field="type_constants", notation="∑ x ∈ s, f x", constant="Finset.sum", signatures=10, linked=8)
    ]
    assert manifest.source.blind_spots[0].description == (
        "`∑ x ∈ s, f x` is not linked to `Finset.sum` in type_constants (8 of 10 signatures showing it link it)"
    )
    write(docs, "Init.Sums", [decl(f"s{i}", type_html=_sum_type(i < 9)) for i in range(10)])
    assert import_docgen(docs, tmp_path / "root", "p").manifest.source.blind_spots == []


def test_blind_spots_follow_the_marks_of_every_operator() -> None:
    marks = [0b01, 0b11, 0b01 << 10, 0]  # ∑ shown twice, linked once; ⋂ shown once
    assert [(b.constant, b.signatures, b.linked) for b in blind_spots(marks)] == [("Finset.sum", 2, 1), ("Set.iInter", 1, 0)]
    assert [op.constant for op in BIG_OPERATORS] == ["Finset.sum", "Finset.prod", "iSup", "iInf", "Set.iUnion", "Set.iInter"]


def test_gaps_are_digested_but_not_part_of_the_environment_identity(tmp_path: Path) -> None:
    root = tmp_path / "root"
    manifest = import_docgen(project(tmp_path / "docs"), root, "p", package_roots=["Pkg"]).manifest
    assert "gaps" not in manifest.identity() and "gaps" in manifest.content()
    emptied = json.loads(manifest.to_json())
    emptied["gaps"]["missing_modules"] = []
    with pytest.raises(LeanIndexError) as caught:
        parse_manifest(json.dumps(emptied), "edited")
    assert caught.value.code == ErrorCode.DIGEST_MISMATCH and caught.value.details["field"] == "manifest_digest"
    resealed = Manifest.model_validate(emptied).sealed()
    assert resealed.environment_digest == manifest.environment_digest
    assert resealed.manifest_digest != manifest.manifest_digest
    # Absent facts and blind spots are part of the source, hence of the identity.
    no_facts = manifest.model_copy(update={"source": manifest.source.model_copy(update={"absent_facts": []})}).sealed()
    assert no_facts.environment_digest != manifest.environment_digest
    assert read_manifest(CatalogPaths.of(root, "p").manifest) == manifest


def test_a_manifest_without_the_new_fields_keeps_its_digests(tmp_path: Path) -> None:
    """A catalog built from a stream records no gaps: its digests are those of a manifest written
    before `gaps`, `absent_facts` and `blind_spots` existed (the fields are left out of the
    digested data while empty)."""
    manifest = build_catalog(stream([stream_declaration(["Foo"])]), tmp_path, "s")
    assert manifest.gaps == CatalogGaps() and manifest.source == SourceInfo(kind="stream", commits={})
    older = json.loads(manifest.to_json())
    del older["gaps"]
    del older["source"]["absent_facts"], older["source"]["blind_spots"]
    assert parse_manifest(json.dumps(older), "older") == manifest

    def sha256(data: dict) -> str:  # the digest rule, written out independently
        return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()

    identity = {k: v for k, v in older.items() if k not in ("catalog", "environment_digest", "manifest_digest")}
    assert manifest.environment_digest == sha256(identity)
    assert manifest.manifest_digest == sha256({k: v for k, v in older.items() if k != "manifest_digest"})
