"""The MATHLIB catalog built from real doc-gen4 output of Mathlib at commit 0cc1f97 with its
dependencies (`../shared/realdata/docgen-mathlib-0cc1f97.tar.xz`, 7,927 modules, 306,809
declarations), checked against facts a Lean user knows and counts taken from the archive
independently of the importer.

The whole archive is imported once per session in a temporary folder (about 90 s here, the
longest single step of these tests).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import verify_catalog
from leanindex.docgen import DocgenImport, import_docgen
from leanindex.engine import Engine
from leanindex.models import InspectRequest, SearchRequest

from instances_support import archive_instance_table, catalog_instance_table
from realdata_support import MATHLIB_ARCHIVE, archive_declaration_names, realdata_path

pytestmark = pytest.mark.realdata

MATHLIB_COMMIT_PREFIX = "0cc1f97"
LEAN_COMMIT = "045d07d2349b9989278991fbcd79a6430032930d"


@pytest.fixture(scope="session")
def mathlib_archive() -> Path:
    return realdata_path(MATHLIB_ARCHIVE)


@pytest.fixture(scope="session")
def mathlib_build(mathlib_archive: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DocgenImport]:
    root = tmp_path_factory.mktemp("docgen-mathlib")
    return root, import_docgen(mathlib_archive, root, "mathlib", package_roots=["Mathlib"])


@pytest.fixture(scope="session")
def mathlib_names(mathlib_archive: Path) -> list[str]:
    return archive_declaration_names(mathlib_archive)


@pytest.fixture(scope="session")
def engine(mathlib_build: tuple[Path, DocgenImport]):
    engine = Engine(mathlib_build[0])
    yield engine
    engine.close()


def test_declaration_count_equals_the_distinct_declarations_in_the_files(mathlib_build, mathlib_names: list[str]) -> None:
    _, result = mathlib_build
    assert len(mathlib_names) == 306_809  # the README's figure
    twice = sorted(name for name, seen in Counter(mathlib_names).items() if seen > 1)
    # doc-gen4 documents these theorems in two modules each; Lean keeps one constant.
    assert twice == ["List.take_one_drop_eq_of_lt_length", "Subtype.ext_val_iff"]
    assert result.declarations_read == len(mathlib_names)
    assert sorted(m.name for m in result.merged) == twice
    assert result.manifest.catalog.declaration_count == len(set(mathlib_names))


def test_manifest_names_mathlib_and_lean_commits(mathlib_build) -> None:
    root, result = mathlib_build
    manifest = verify_catalog(CatalogPaths.of(root, "mathlib"))
    assert manifest == result.manifest
    assert manifest.source.kind == "doc-gen4"
    assert manifest.mathlib_commit is not None and manifest.mathlib_commit.startswith(MATHLIB_COMMIT_PREFIX)
    assert manifest.source.commits["leanprover-community/mathlib4"] == manifest.mathlib_commit
    assert manifest.lean.githash == LEAN_COMMIT
    assert manifest.lean.version == "unknown"  # doc-gen4's data names the commit only
    assert {"type", "type_constants", "range", "is_private", "is_internal", "module"} <= set(manifest.source.approximate_fields)
    assert manifest.module_count == 7927


def test_mathlib_facts(engine: Engine) -> None:
    prime = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Nat.Prime"))
    assert (prime.kind.value, prime.module) == ("definition", "Mathlib.Data.Nat.Prime.Defs")
    add_comm = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="add_comm"))
    assert add_comm.kind.value == "theorem" and add_comm.namespace is None
    assert add_comm.module == "Mathlib.Algebra.Group.Defs"
    assert {"AddCommMagma", "Eq", "HAdd.hAdd"} <= set(add_comm.type_constants)
    group = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Group"))
    assert group.flags.is_class and group.flags.is_structure
    core = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Nat.add_comm"))
    assert core.module is not None and core.module.startswith("Init.")


def test_search_prime_theorems_under_nat(engine: Engine) -> None:
    response = engine.search(
        SearchRequest(environment="MATHLIB", name_contains="prime", namespace_prefixes=["Nat"], kinds=["theorem"], result_limit=10)
    )
    assert response.total_matches > 100
    assert len(response.results) == 10 and response.next_cursor is not None
    assert all(r.name.startswith("Nat.") and "prime" in r.name and r.kind.value == "theorem" for r in response.results)


# --- issue 11: browsing, flags, conclusions, instances, partly qualified names ------------------


def search_all(engine: Engine, **fields) -> tuple[list, int]:
    """Every result of a search (following cursors) and its total."""
    results, after = [], None
    while True:
        page = engine.search(SearchRequest(environment="MATHLIB", result_limit=50, after=after, **fields))
        results += page.results
        after = page.next_cursor
        if after is None:
            return results, page.total_matches


def test_browsing_a_namespace_by_kind_alone(engine: Engine) -> None:
    results, total = search_all(engine, namespace_prefixes=["Nat.Prime"], kinds=["theorem"])
    assert total == len(results) == 91  # the figure
    assert all(r.name.startswith("Nat.Prime.") and r.kind.value == "theorem" for r in results)


def test_instances_of_group_and_the_class_instance_count(engine: Engine) -> None:
    results, total = search_all(engine, instances_of="Group")
    assert total == len(results) > 50
    # doc-gen4 signatures: every such instance's type (after a binder's ` : `) is `Group ...`
    assert all(" : Group " in r.type for r in results), [r.type for r in results if " : Group " not in r.type][:3]
    group = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Group"))
    assert group.instance_count == total
    assert {"conclusion_constants", "conclusion_head"} <= set(group.approximate_fields)


def test_partly_qualified_constants(engine: Engine) -> None:
    response = engine.search(SearchRequest(environment="MATHLIB", type_pattern={"constants": ["Measure.map"]}))
    assert [(r.given, r.resolved) for r in response.resolved_constants] == [("Measure.map", "MeasureTheory.Measure.map")]
    assert response.total_matches > 100 and response.unknown_constants == []
    exact = engine.search(SearchRequest(environment="MATHLIB", type_pattern={"constants": ["MeasureTheory.Measure.map"]}))
    assert exact.total_matches == response.total_matches
    sqrt = engine.search(SearchRequest(environment="MATHLIB", type_pattern={"constants": ["sqrt"]}))
    [unknown] = sqrt.unknown_constants
    candidates = [s for s in unknown.suggestions if s.endswith(".sqrt")]
    assert {"Real.sqrt", "NNReal.sqrt", "Nat.sqrt"} <= set(candidates)
    assert unknown.suggestions[: len(candidates)] == candidates  # the candidates come first


def test_notation_blind_spot_and_suggestions_of_an_empty_name_search(engine: Engine) -> None:
    # `∑ x ∈ s, f x` links no Finset.sum in doc-gen4's signatures (README's figure)
    assert engine.search(SearchRequest(environment="MATHLIB", type_pattern={"constants": ["Finset.sum"]})).total_matches == 52
    empty = engine.search(SearchRequest(environment="MATHLIB", name_contains="sqrrt"))
    assert empty.total_matches == 0 and any("sqrt" in s for s in empty.suggestions)


def test_flags_fragments_case_and_conclusions(engine: Engine) -> None:
    classes, total = search_all(engine, flags={"class": True}, namespace_prefixes=["MeasureTheory"])
    assert total > 10 and all(engine.inspect(InspectRequest(environment="MATHLIB", declaration_name=r.name)).flags.is_class for r in classes[:20])
    both = engine.search(SearchRequest(environment="MATHLIB", name_contains=["sum", "range"], result_limit=50))
    assert both.total_matches > 0 and all("sum" in r.name and "range" in r.name for r in both.results)
    folded = engine.search(SearchRequest(environment="MATHLIB", name_contains="SUM_RANGE", case_sensitive=False))
    plain = engine.search(SearchRequest(environment="MATHLIB", name_contains="sum_range"))
    assert folded.total_matches >= plain.total_matches > 0
    concluding = engine.search(SearchRequest(environment="MATHLIB", type_pattern={"conclusion": ["Real.sqrt"]}))
    anywhere = engine.search(SearchRequest(environment="MATHLIB", type_pattern={"constants": ["Real.sqrt"]}))
    assert 0 < concluding.total_matches < anywhere.total_matches


def test_dependencies_are_not_recorded_by_doc_gen4(engine: Engine) -> None:
    from leanindex.errors import ErrorCode, LeanIndexError

    with pytest.raises(LeanIndexError) as caught:
        engine.search(SearchRequest(environment="MATHLIB", uses_constants=["Nat.Prime"]))
    assert caught.value.code is ErrorCode.NOT_RECORDED
    prime = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Nat.Prime"))
    assert prime.uses is None and prime.used_by_count is None


def test_cli_prints_brackets_of_signatures(mathlib_build) -> None:
    from click.testing import CliRunner

    from leanindex.cli import main

    root, _ = mathlib_build
    result = CliRunner().invoke(main, ["search", "-e", "MATHLIB", "-n", "List.getElem_map", "--root", str(root)], terminal_width=400)
    assert result.exit_code == 0, result.output
    # the table may fold the type column; its text, spaces aside, keeps every `[...]`
    assert "(mapfl)[i]=fl[i]" in "".join(result.output.split())


def test_unknown_names_are_answered_from_the_mathlib_catalog(engine: Engine) -> None:
    """Suggestions for names Lean does not know, from the whole Mathlib catalog: a partly
    qualified name finds its full name first, a misspelt one its fix first."""
    _digest, (partly, misspelt, unqualified) = engine.close_names("mathlib", ["Measure.map", "Finset.sum_cnost", "mul_comm"])
    assert partly[0] == "MeasureTheory.Measure.map"
    assert misspelt[0] == "Finset.sum_const"
    assert unqualified[0] == "mul_comm" and "Nat.mul_comm" in unqualified


def test_text_search_pushforward_measure(engine: Engine) -> None:
    """Issues 12 and 29: "pushforward measure", and the same as a phrase, "pushforward of a
    measure", find `MeasureTheory.Measure.map` (its docstring: "The pushforward of a
    measure...") in the first 5 with every word, and in the first 10 ranked on any word (the
    default, which puts the concepts the words name first: `MeasureTheory.Measure`); a cursor
    continues the scored order, and walked to the end it gives each match once, as many as
    `total_matches` says."""
    for text in ("pushforward measure", "pushforward of a measure"):
        for match, within in (("any", 10), ("all", 5)):
            first = engine.search(SearchRequest(environment="MATHLIB", text=text, text_match=match, result_limit=5))
            names = [r.name for r in first.results]
            top = engine.search(SearchRequest(environment="MATHLIB", text=text, text_match=match, result_limit=within))
            assert "MeasureTheory.Measure.map" in [r.name for r in top.results], (text, match, names)
            assert first.unmatched_words == []
            rest = engine.search(SearchRequest(environment="MATHLIB", text=text, text_match=match, result_limit=50, after=first.next_cursor))
            assert rest.total_matches == first.total_matches
            names += [r.name for r in rest.results]
            assert len(names) == len(set(names)) == min(55, first.total_matches)
    walked, after = [], None
    while True:
        page = engine.search(SearchRequest(environment="MATHLIB", text="pushforward measure", text_match="all", result_limit=50, after=after))
        walked += [r.name for r in page.results]
        if page.next_cursor is None:
            break
        after = page.next_cursor
    assert len(walked) == len(set(walked)) == page.total_matches


def test_every_class_has_exactly_the_instances_of_docgens_table(mathlib_build, mathlib_archive: Path) -> None:
    root, _ = mathlib_build
    table = archive_instance_table(mathlib_archive)
    assert (len(table), sum(map(len, table.values()))) == (1724, 29281)
    assert catalog_instance_table(root, "mathlib") == table
    # The figures: what the conclusion heads missed.
    assert (len(table["Decidable"]), len(table["DFunLike"]), len(table["CoeFun"])) == (848, 209, 79)


def test_gaps_blind_spots_and_absent_facts(mathlib_build) -> None:
    _, result = mathlib_build
    manifest = result.manifest
    assert manifest.gaps.missing_modules == []
    # The project the documentation was built in (`--package-root Mathlib`: Mathlib, its dependencies, Lean core).
    assert [(h.module, h.declarations) for h in manifest.gaps.host_modules] == [("KMTT", 0), ("KMTT.Basic", 1)]
    assert manifest.source.absent_facts == ["flag:deprecated", "hidden", "kind:recursor"]
    # A signature shows an operator when its symbol is followed by a space (`∏ᶜ`, `∑'`, `⋃₀` are other notations).
    assert [(b.constant, b.linked, b.signatures) for b in manifest.source.blind_spots] == [
        ("Finset.sum", 14, 2613), ("Finset.prod", 6, 1333), ("iSup", 79, 1244),
        ("iInf", 98, 1022), ("Set.iUnion", 12, 1338), ("Set.iInter", 0, 686),
    ]
