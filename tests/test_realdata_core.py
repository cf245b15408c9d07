"""The CORE catalog built from real doc-gen4 output of Lean core v4.33.0
(`../shared/realdata/docgen-core-v4.33.0.tar.xz`, 2,463 modules), checked against facts a Lean
user knows and against counts taken from the archive independently of the importer.

That archive is byte for byte the one leanindex ships (checked first), so the catalog is the one
the session's first `leanindex demo` imports (`embedded_demo`, shared with the newcomer and diff
tests): one import of those 86,957 declarations per session, not two.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import verify_catalog
from leanindex.catalog.manifest import Manifest
from leanindex.embedded import EMBEDDED_PROFILE, embedded_archive
from leanindex.engine import Engine
from leanindex.models import InspectRequest, SearchRequest

from embedded_support import DemoRun
from realdata_support import CORE_ARCHIVE, archive_declaration_names, realdata_path

pytestmark = pytest.mark.realdata

ENVIRONMENT = EMBEDDED_PROFILE.upper()
LEAN_COMMIT = "d8b18978322de05a8f3dba51ef03cf5461676c17"


@pytest.fixture(scope="session")
def core_archive() -> Path:
    return realdata_path(CORE_ARCHIVE)


@pytest.fixture(scope="session")
def core_build(core_archive: Path, embedded_demo: DemoRun) -> tuple[Path, Manifest, str]:
    """The root, verified manifest and import summary (the demo's output) of the catalog of
    `core_archive`, which the first `leanindex demo` of the session imported."""
    assert core_archive.read_bytes() == embedded_archive().read_bytes()
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    return embedded_demo.root, verify_catalog(CatalogPaths.of(embedded_demo.root, EMBEDDED_PROFILE)), embedded_demo.stdout


@pytest.fixture(scope="session")
def core_names(core_archive: Path) -> list[str]:
    return archive_declaration_names(core_archive)


@pytest.fixture(scope="session")
def engine(core_build: tuple[Path, Manifest, str]):
    engine = Engine(core_build[0])
    yield engine
    engine.close()


def _all_results(engine: Engine, **filters) -> tuple[list, int]:
    """Every result of a search, following cursors; and the `total_matches` of the first page."""
    results, after, total = [], None, None
    while True:
        response = engine.search(SearchRequest(environment=ENVIRONMENT, result_limit=50, after=after, **filters))
        total = response.total_matches if total is None else total
        results.extend(response.results)
        if response.next_cursor is None:
            return results, total
        after = response.next_cursor


def test_declaration_count_equals_the_declarations_in_the_files(core_build, core_names: list[str]) -> None:
    _, manifest, summary = core_build
    assert len(core_names) == 86_957  # the README's figure
    assert len(set(core_names)) == len(core_names)  # no name twice in core
    read = re.search(r"^read +([\d,]+) files, ([\d,]+) declarations$", summary, re.M)
    assert read is not None, summary
    assert int(read.group(2).replace(",", "")) == len(core_names)
    assert "merged" not in summary  # no name documented twice
    assert manifest.catalog.declaration_count == len(core_names)
    assert manifest.catalog.visible_count == len(core_names)  # doc-gen4 has no private/internal ones


def test_manifest_states_doc_gen4_its_commits_and_approximations(core_build) -> None:
    _, manifest, _ = core_build
    assert manifest.source.kind == "doc-gen4"
    assert manifest.extractor.name == "leanindex-docgen-import"
    assert (manifest.lean.version, manifest.lean.githash) == ("4.33.0", LEAN_COMMIT)
    assert manifest.source.commits["leanprover/lean4"] == LEAN_COMMIT
    assert manifest.mathlib_commit is None
    assert {"type", "type_constants", "range", "is_private", "is_internal"} <= set(manifest.source.approximate_fields)
    assert manifest.imports == ["Lake", "Lean", "UnicodeBasic", "UnicodeData"]
    assert manifest.module_count == 2463


def test_nat_add_comm(engine: Engine) -> None:
    found = engine.inspect(InspectRequest(environment=ENVIRONMENT, declaration_name="Nat.add_comm"))
    assert found.kind.value == "theorem"
    assert found.module is not None and found.module.startswith("Init.")
    assert {"Eq", "HAdd.hAdd", "Nat"} <= set(found.type_constants)
    assert found.type == "(n m : Nat) : n + m = m + n"
    assert found.range is not None and found.range.start.column is None


def test_add_comm_in_namespace_nat(engine: Engine, core_names: list[str]) -> None:
    results, total = _all_results(engine, name_contains="add_comm", namespace_prefixes=["Nat"])
    names = [r.name for r in results]
    assert "Nat.add_comm" in names
    assert all(name.startswith("Nat.") for name in names)
    # Counted from the archive: names under Nat (no «» in these) containing `add_comm`.
    expected = sorted(n for n in core_names if n.startswith("Nat.") and "add_comm" in n)
    assert sorted(names) == expected and total == len(expected)
    assert len(expected) > 1


def test_constants_list_length_and_happend(engine: Engine) -> None:
    results, total = _all_results(engine, type_pattern={"constants": ["List.length", "HAppend.hAppend"]})
    names = {r.name for r in results}
    assert {"List.length_append", "List.append_inj", "List.append_inj_left"} <= names
    assert len(names) == total
    for name in ("List.length_append", "List.append_inj"):
        found = engine.inspect(InspectRequest(environment=ENVIRONMENT, declaration_name=name))
        assert {"List.length", "HAppend.hAppend"} <= set(found.type_constants)


@pytest.mark.parametrize(
    ("name", "kind", "flags"),
    [
        ("instAddNat", "definition", {"is_instance"}),
        ("Inhabited", "inductive", {"is_class", "is_structure"}),
        ("Decidable", "inductive", {"is_class"}),
        ("Prod", "inductive", {"is_structure"}),
        ("Nat", "inductive", set()),
        ("Nat.succ", "constructor", set()),
        ("Quot", "quotient", set()),
        ("propext", "axiom", set()),
        ("Array.ugetBorrowed", "opaque", {"is_unsafe"}),
    ],
)
def test_kinds_and_flags_a_lean_user_knows(engine: Engine, name: str, kind: str, flags: set[str]) -> None:
    found = engine.inspect(InspectRequest(environment=ENVIRONMENT, declaration_name=name))
    assert found.kind.value == kind
    assert {flag for flag, value in found.flags.model_dump().items() if value} == flags


def test_browsing_by_flag_and_instances_of_a_class(engine: Engine) -> None:
    instances, total = _all_results(engine, flags={"instance": True}, namespace_prefixes=["Nat"])
    assert total == len(instances) > 5
    assert all(engine.inspect(InspectRequest(environment=ENVIRONMENT, declaration_name=r.name)).flags.is_instance for r in instances)
    adds, _ = _all_results(engine, instances_of="Add")
    assert "instAddNat" in {r.name for r in adds}
    add = engine.inspect(InspectRequest(environment=ENVIRONMENT, declaration_name="Add"))
    assert add.instance_count == len(adds)


def test_partly_qualified_constants(engine: Engine) -> None:
    ambiguous = engine.search(SearchRequest(environment=ENVIRONMENT, type_pattern={"constants": ["HAppend.hAppend", "length"]}))
    [unknown] = ambiguous.unknown_constants
    assert unknown.name == "length" and ambiguous.total_matches == 0
    candidates = [s for s in unknown.suggestions if s.endswith(".length")]
    assert {"List.length", "String.length"} <= set(candidates) and unknown.suggestions[: len(candidates)] == candidates


def test_unknown_names_are_answered_from_the_core_catalog(engine: Engine) -> None:
    """What a checker diagnostic "Unknown identifier" carries (`Engine.close_names`): the
    namespaced lemmas an unqualified name stands for, the fix of a typo, nothing for a local."""
    digest, (unqualified, typo, local) = engine.close_names(EMBEDDED_PROFILE, ["mul_comm", "Nat.add_com", "h"])
    assert digest == engine.catalog(EMBEDDED_PROFILE).manifest.environment_digest
    assert "Nat.mul_comm" in unqualified and "Int.mul_comm" in unqualified and len(unqualified) <= 8
    assert typo[0] == "Nat.add_comm"
    assert local == []


#: A `text` match reason: the words typed that a field has, quoted, and the field.
_TEXT_REASON = re.compile(r'((?:"[^"]+", )*"[^"]+") in the (name|namespace|docstring|type)')


def _text_words(reasons) -> set[str]:
    """The typed words a result's `text` reasons name (every reason must be such a sentence)."""
    words: set[str] = set()
    for reason in (m.value for m in reasons if m.filter == "text"):
        said = _TEXT_REASON.fullmatch(reason)
        assert said, reason
        words |= set(re.findall(r'"([^"]+)"', said.group(1)))
    return words


def test_text_search_finds_nat_add_comm_from_words(engine: Engine) -> None:
    """Issue 12 and 29: "commutativity addition natural" finds `Nat.add_comm` (no docstring:
    the words come from its name's abbreviations, its namespace and the `+` of its type) in the
    first 5; the answer is ordered by `text_score`, and each result's reasons say, in the words
    typed (never the index's stems), where those words are; `Nat.add_comm` has all three."""
    typed = {"commutativity", "addition", "natural"}
    response = engine.search(SearchRequest(environment=ENVIRONMENT, text="commutativity addition natural", result_limit=5))
    names = [r.name for r in response.results]
    assert "Nat.add_comm" in names, names
    assert response.total_matches >= len(names) and response.stop_reason.value == "RESULT_LIMIT"
    assert response.unmatched_words == []
    scores = [float(next(m.value for m in r.match_reasons if m.value.startswith("text_score="))[len("text_score="):]) for r in response.results]
    assert scores == sorted(scores, reverse=True)
    assert all(_text_words(r.match_reasons) and _text_words(r.match_reasons) <= typed for r in response.results)
    lemma = response.results[names.index("Nat.add_comm")]
    assert _text_words(lemma.match_reasons) == typed
    assert '"commutativity", "addition" in the name' in [m.value for m in lemma.match_reasons]
    # Every word must occur (`text_match: "all"`, the rule before issue 29): fewer matches, the lemma still among the first 5.
    every = engine.search(SearchRequest(environment=ENVIRONMENT, text="commutativity addition natural", text_match="all", result_limit=5))
    assert 0 < every.total_matches < response.total_matches
    assert "Nat.add_comm" in [r.name for r in every.results]
    assert all(_text_words(r.match_reasons) == typed for r in every.results)


def test_a_symbol_in_a_text_counts_as_its_words(engine: Engine) -> None:
    """`≤ succ`, `le succ` and `less than or equal succ` ask the same (the one table reads `≤`,
    `le` and the phrase as one word, in queries and in types alike): the same matches, in the
    same name order, each result's reasons naming the words as typed; the two spelled in words
    rank alike too (the symbol's version ranks by the documented rule that a symbol spells no
    name, docs/ranking.md). `+` alone is `addition`: the same matches, ranked alike."""
    spellings = ("≤ succ", "le succ", "less than or equal succ")
    answers = {}
    for text in spellings:
        by_name = engine.search(SearchRequest(environment=ENVIRONMENT, text=text, namespace_prefixes=["Nat"], order="name", result_limit=50))
        ranked = engine.search(SearchRequest(environment=ENVIRONMENT, text=text, namespace_prefixes=["Nat"], result_limit=5))
        answers[text] = (by_name.total_matches, [r.name for r in by_name.results], ranked)
        assert ranked.total_matches == by_name.total_matches > 0 and ranked.unmatched_words == []
    assert len({(total, tuple(names)) for total, names, _ in answers.values()}) == 1
    assert [r.name for r in answers["le succ"][2].results] == [r.name for r in answers["less than or equal succ"][2].results]
    first = {text: answers[text][2].results[0] for text in spellings}
    assert len({result.name for result in first.values()}) == 1
    for text, result in first.items():
        assert _text_words(result.match_reasons) == {text.removesuffix(" succ"), "succ"}, (text, result.match_reasons)
    plus = engine.search(SearchRequest(environment=ENVIRONMENT, text="+", result_limit=5))
    addition = engine.search(SearchRequest(environment=ENVIRONMENT, text="addition", result_limit=5))
    assert plus.total_matches == addition.total_matches > 0
    assert [r.name for r in plus.results] == [r.name for r in addition.results]


def test_relevance_puts_the_exact_last_component_first(engine: Engine) -> None:
    """Name order starts `add_comm` hits alphabetically; relevance puts the declarations whose
    last component is exactly `add_comm` first, shortest name first, with the same total."""
    by_name = engine.search(SearchRequest(environment=ENVIRONMENT, name_contains="add_comm", result_limit=50))
    ranked = engine.search(SearchRequest(environment=ENVIRONMENT, name_contains="add_comm", order="relevance", result_limit=5))
    assert ranked.total_matches == by_name.total_matches
    first = ranked.results[0]
    assert first.name.endswith(".add_comm") and "name_hit=last_component" in [m.value for m in first.match_reasons]
    assert len(first.name) <= min(len(r.name) for r in by_name.results if r.name.endswith(".add_comm"))
