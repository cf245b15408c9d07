"""Honest answers on the real doc-gen4 catalogs (issue 28): the shipped core catalog (the
session's `leanindex demo` import of `docgen-core-v4.33.0.tar.xz`, which lacks four Std modules
that its own modules import) and the Mathlib sample (`docgen-mathlib-0cc1f97-sample`, 36
modules, whose signatures show big operators doc-gen4 does not link). Expected values are read
off the archive with plain `tarfile` + `json` where they are counts (never from the importer).
"""

from __future__ import annotations

import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_support import DemoRun
from leanindex.docgen import import_docgen
from leanindex.embedded import EMBEDDED_PROFILE
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import InspectRequest, SearchRequest, SearchResponse
from leanindex.render import render_search
from realdata_support import CORE_ARCHIVE, MATHLIB_SAMPLE, realdata_path

pytestmark = pytest.mark.realdata

CORE = EMBEDDED_PROFILE.upper()
#: The modules the core archive lacks (its README: "Four modules over 4 MiB are missing").
CORE_MISSING = [
    "Std.Data.DTreeMap.Internal.Lemmas",
    "Std.Data.DTreeMap.Lemmas",
    "Std.Data.DTreeMap.Raw.Lemmas",
    "Std.Data.Internal.List.Associative",
]


@pytest.fixture(scope="module")
def core(embedded_demo: DemoRun) -> Iterator[Engine]:
    realdata_path(CORE_ARCHIVE)
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    engine = Engine(embedded_demo.root)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def raw_core() -> list[dict]:
    """Every declaration file of the core archive as doc-gen4 wrote it (JSON objects)."""
    files = []
    with tarfile.open(realdata_path(CORE_ARCHIVE), "r:xz") as tar:
        for member in tar:
            if member.isfile() and Path(member.name).name.startswith("declaration-data-") and member.name.endswith(".bmp"):
                handle = tar.extractfile(member)
                assert handle is not None
                files.append(json.load(handle))
    return files


def search(engine: Engine, environment: str = CORE, **fields) -> SearchResponse:
    return engine.search(SearchRequest(environment=environment, result_limit=50, **fields))


def refused(engine: Engine, request: SearchRequest | InspectRequest) -> LeanIndexError:
    with pytest.raises(LeanIndexError) as raised:
        engine.search(request) if isinstance(request, SearchRequest) else engine.inspect(request)
    return raised.value


# --- missing modules ------------------------------------------------------------------------------


def test_the_core_catalog_records_the_modules_its_archive_lacks(core: Engine, raw_core: list[dict]) -> None:
    held = {data["name"] for data in raw_core}
    imported = {module for data in raw_core for module in data["imports"]}
    assert sorted(imported - held) == CORE_MISSING  # read off the archive
    gaps = core.catalog(CORE).manifest.gaps
    assert [gap.module for gap in gaps.missing_modules] == CORE_MISSING


def test_a_missing_module_is_not_answered_as_an_empty_complete_module(core: Engine) -> None:
    answer = search(core, module_prefixes=["Std.Data.DTreeMap.Lemmas"])
    assert (answer.total_matches, answer.stop_reason.value, answer.completeness.value) == (0, "EXHAUSTED", "PARTIAL")
    assert answer.missing_modules == ["Std.Data.DTreeMap.Lemmas"]
    made_up = search(core, module_prefixes=["Std.Data.DTreeMap.NoSuchModule"])
    assert (made_up.total_matches, made_up.completeness.value, made_up.missing_modules) == (0, "COMPLETE", [])
    # A module that is there and covers no missing one: its last page is complete.
    held = search(core, module_prefixes=["Std.Data.DTreeMap.Basic"])
    while held.next_cursor is not None:
        assert (held.completeness.value, held.missing_modules) == ("PARTIAL", [])
        held = core.search(SearchRequest(environment=CORE, module_prefixes=["Std.Data.DTreeMap.Basic"], result_limit=50, after=held.next_cursor))
    assert (held.stop_reason.value, held.completeness.value, held.missing_modules) == ("EXHAUSTED", "COMPLETE", [])


def test_a_namespace_search_names_every_missing_module_it_could_reach(core: Engine) -> None:
    answer = search(core, namespace_prefixes=["Std.DTreeMap"])
    assert answer.total_matches == 1578 and answer.completeness.value == "PARTIAL"
    assert answer.missing_modules == CORE_MISSING
    text = render_search(answer)
    assert "4 module(s) in scope are missing" in text and "Std.Data.DTreeMap.Lemmas" in text
    scoped = search(core, namespace_prefixes=["Std.DTreeMap"], module_prefixes=["Std.Data.DTreeMap"])
    assert scoped.missing_modules == CORE_MISSING[:3]


def _linking(raw_core: list[dict], module: str, name: str) -> list[str]:
    """Declarations whose signature links `name` in `module`'s page, read off the archive."""
    href = f'href="./{module.replace(".", "/")}.html#{name}"'
    return [d["info"]["name"] for data in raw_core for d in data["declarations"] if href in d["header"]]


def test_inspect_of_a_linked_name_of_a_missing_module_is_missing_module(core: Engine, raw_core: list[dict]) -> None:
    error = refused(core, InspectRequest(environment=CORE, declaration_name="Std.Internal.List.alterKey"))
    assert error.code is ErrorCode.MISSING_MODULE
    assert error.details["module"] == "Std.Data.Internal.List.Associative"
    linking = _linking(raw_core, "Std.Data.Internal.List.Associative", "Std.Internal.List.alterKey")
    assert len(linking) == 7 and sorted(error.details["linked_from"]) == sorted(linking)
    # The same declarations as the search for the constant (which finds them, in Name.lt order).
    found = search(core, type_pattern={"constants": ["Std.Internal.List.alterKey"]})
    assert error.details["linked_from"] == [r.name for r in found.results]
    setoid = refused(core, InspectRequest(environment=CORE, declaration_name="Std.DTreeMap.isSetoid"))
    assert (setoid.code, setoid.details["module"]) == (ErrorCode.MISSING_MODULE, "Std.Data.DTreeMap.Lemmas")


def test_a_name_no_signature_links_stays_not_found_naming_the_missing_modules(core: Engine, raw_core: list[dict]) -> None:
    """`Std.DTreeMap.contains_insert` is a lemma of the missing `Std.Data.DTreeMap.Lemmas`, but no
    signature of the archive links it, so the catalog cannot know it: `not_found`, saying which
    modules it lacks."""
    assert not [d for data in raw_core for d in data["declarations"] if "#Std.DTreeMap.contains_insert\"" in d["header"]]
    error = refused(core, InspectRequest(environment=CORE, declaration_name="Std.DTreeMap.contains_insert"))
    assert error.code is ErrorCode.NOT_FOUND
    assert error.details["missing_modules"] == CORE_MISSING and "lacks 4 module(s)" in error.message


# --- assurance and absent facts -------------------------------------------------------------------


def test_name_namespace_and_module_filters_are_computed_type_constants_approximate(core: Engine) -> None:
    exact = search(core, name_contains="add_comm", namespace_prefixes=["Nat"], module_prefixes=["Init"])
    assert (exact.assurance.value, exact.approximate_filters, exact.completeness.value) == ("COMPUTED", [], "COMPLETE")
    assert "approximate" not in render_search(exact)
    typed = search(core, type_pattern={"constants": ["Nat.succ"]}, module_prefixes=["Init"])
    assert typed.assurance.value == "APPROXIMATE"
    # Lean core's signatures show no big operator: type_constants has no known blind spot there.
    assert [(f.filter, f.fields, f.blind_spots) for f in typed.approximate_filters] == [("type_pattern", ["type_constants"], [])]
    assert [line for line in render_search(typed).splitlines() if line.startswith("approximate:")] == [
        "approximate: type_pattern reads type_constants, which doc-gen4 only approximates"
    ]


def test_facts_doc_gen4_never_had_are_refused_or_unknown(core: Engine) -> None:
    for fields, fact in (({"kinds": ["recursor"]}, "kind:recursor"), ({"flags": {"deprecated": True}}, "flag:deprecated")):
        error = refused(core, SearchRequest(environment=CORE, **fields))
        assert (error.code, error.details["fact"]) == (ErrorCode.NOT_RECORDED, fact)
    assert search(core, name_contains="add_comm").hidden_matches is None


def test_instances_of_reads_the_instance_table_and_is_computed(core: Engine, raw_core: list[dict]) -> None:
    listed = sorted(i["name"] for data in raw_core for i in data["instances"] if i["className"] == "Decidable")
    answer = search(core, instances_of="Decidable", module_prefixes=["Init", "Lean", "Lake"])
    names, after = [r.name for r in answer.results], answer.next_cursor
    while after is not None:
        page = core.search(SearchRequest(environment=CORE, instances_of="Decidable", module_prefixes=["Init", "Lean", "Lake"], result_limit=50, after=after))
        names, after = names + [r.name for r in page.results], page.next_cursor
    in_scope = [name for data in raw_core if re.match(r"(Init|Lean|Lake)(\.|$)", data["name"]) for i in data["instances"]
                if i["className"] == "Decidable" for name in [i["name"]]]
    assert sorted(names) == sorted(in_scope) and len(in_scope) < len(listed)
    assert (answer.assurance.value, answer.approximate_filters) == ("COMPUTED", [])


def test_instances_of_an_abbreviation_class_reads_conclusions_and_says_approximate(core: Engine, raw_core: list[dict]) -> None:
    """doc-gen4 files `instance : DecidableEq Nat` under `Decidable` (the class `DecidableEq`
    unfolds to), so its table lists no `DecidableEq`: the answer reads the printed conclusions
    instead, and says so, rather than a confident zero."""
    assert not any(i["className"] == "DecidableEq" for data in raw_core for i in data["instances"])
    listed = {i["name"] for data in raw_core for i in data["instances"]}
    answer = search(core, instances_of="DecidableEq", module_prefixes=["Init"])
    assert answer.total_matches > 0 and all(r.name in listed and "DecidableEq" in r.type for r in answer.results)
    assert answer.assurance.value == "APPROXIMATE"
    assert [f.filter for f in answer.approximate_filters] == ["instances_of"]


# --- negation -------------------------------------------------------------------------------------


def test_not_injective_is_not_injective(core: Engine) -> None:
    # With every word required, `not` narrows the answer (it is a word, never a dropped stop word).
    plain = search(core, text="injective", text_match="all", module_prefixes=["Init"])
    negated = search(core, text="not injective", text_match="all", module_prefixes=["Init"])
    assert 0 < negated.total_matches < plain.total_matches
    assert all(any(reason.filter == "text" and '"not"' in reason.value for reason in result.match_reasons) for result in negated.results)


# --- blind spots (the Mathlib sample) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def mathlib_sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("docgen-mathlib-sample")
    import_docgen(realdata_path(MATHLIB_SAMPLE), root, "msample")
    engine = Engine(root)
    yield engine
    engine.close()


def _showing(folder: Path, symbol: str, constant: str) -> tuple[int, int]:
    """(signatures showing `symbol` followed by a space, of those how many link `constant`),
    read off the sample's files (tags stripped, entities as doc-gen4 writes them)."""
    shown = linked = 0
    for path in folder.glob("declaration-data-*.bmp"):
        for declaration in json.loads(path.read_text(encoding="utf-8"))["declarations"]:
            header = declaration["header"]
            if f"{symbol} " in re.sub(r"<[^>]*>", "", header):
                shown += 1
                linked += f'#{constant}"' in header
    return shown, linked


def test_a_constant_behind_an_unlinked_operator_names_its_blind_spot(mathlib_sample: Engine) -> None:
    shown, linked = _showing(realdata_path(MATHLIB_SAMPLE), "∑", "Finset.sum")
    assert shown > 0 and linked < shown
    answer = search(mathlib_sample, "MSAMPLE", type_pattern={"constants": ["Finset.sum", "Finset.range"]})
    assert answer.assurance.value == "APPROXIMATE"
    [approximate] = answer.approximate_filters
    assert (approximate.filter, approximate.fields) == ("type_pattern", ["type_constants"])
    [spot] = approximate.blind_spots
    assert "`Finset.sum`" in spot and f"{linked} of {shown} signatures" in spot and "∏" not in spot
    # A filter asking another constant names none of these; one asking `Finset.prod` names `∏`.
    assert search(mathlib_sample, "MSAMPLE", type_pattern={"constants": ["Nat"]}).approximate_filters[0].blind_spots == []
    [prod] = search(mathlib_sample, "MSAMPLE", type_pattern={"constants": ["Finset.prod"]}).approximate_filters[0].blind_spots
    assert "`Finset.prod`" in prod
    assert spot in render_search(answer)


def test_inspect_of_a_recursor_doc_gen4_leaves_out_is_not_recorded(core: Engine) -> None:
    """`Nat.rec` is mentioned in a core signature but doc-gen4 lists no recursors: the answer
    is `not_recorded` naming the absent facts, not `not_found` blaming missing modules; a name
    nothing mentions stays `not_found`, with the absent facts among its doubts."""
    with pytest.raises(LeanIndexError) as raised:
        core.inspect(InspectRequest(environment=CORE, declaration_name="Nat.rec"))
    assert raised.value.code is ErrorCode.NOT_RECORDED
    assert "kind:recursor" in raised.value.details["absent_facts"] and raised.value.details["linked_from"]
    with pytest.raises(LeanIndexError) as raised:
        core.inspect(InspectRequest(environment=CORE, declaration_name="Nat.no_such_lemma"))
    assert raised.value.code is ErrorCode.NOT_FOUND and "kind:recursor" in raised.value.details["absent_facts"]


def test_a_conclusion_filter_names_the_blind_spot_of_its_constant(mathlib_sample: Engine) -> None:
    """A notation doc-gen4 does not link hides its constant from every field read from the
    links, conclusions included: `conclusion: Finset.sum` names the `∑` blind spot too."""
    answer = search(mathlib_sample, "MSAMPLE", type_pattern={"conclusion": ["Finset.sum"]})
    assert answer.assurance.value == "APPROXIMATE"
    spots = [spot for f in answer.approximate_filters for spot in f.blind_spots]
    assert any("`Finset.sum`" in spot for spot in spots), answer.approximate_filters
