"""Answers carry exactly the doubt their data leaves (issue 28): assurance follows the fields the
filters read, facts the source never had are refused, hidden counts it cannot know are null,
missing modules in scope make an answer PARTIAL, and a name of a missing module is
`missing_module` on inspect. Checked on two small catalogs built from one stream: `GAPPY`,
whose manifest records approximate fields with blind spots, absent facts and missing modules,
and `EXACT`, whose manifest records none (a Lean-extracted catalog's case). The property test
draws filter combinations and predicts the signals with its own table of which request field
reads what (not the engine's `reads`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gappy_support import INTER_SPOT, KIND_SPOT, SUM_SPOT, build_gappy
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.engine.filters import FILTERS
from leanindex.errors import EXIT_STATUS, HTTP_STATUS, ErrorCode, LeanIndexError
from leanindex.models import ApproximateFilter, InspectRequest, SearchRequest, SearchResponse
from leanindex.records import DeclarationRecord
from leanindex.render import render_search
from leanindex.service.http import create_app
from service_support import live_server


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="leanindex-assurance-") as folder:
        built = Path(folder)
        build_gappy(built)
        yield built


@pytest.fixture(scope="module")
def engine(root: Path) -> Iterator[Engine]:
    engine = Engine(root)
    yield engine
    engine.close()


def search(engine: Engine, environment: str = "GAPPY", **fields: Any) -> SearchResponse:
    return engine.search(SearchRequest(environment=environment, result_limit=50, **fields))


def refusal(engine: Engine, environment: str = "GAPPY", **fields: Any) -> LeanIndexError:
    with pytest.raises(LeanIndexError) as raised:
        search(engine, environment, **fields)
    return raised.value


# --- which fields each filter reads -------------------------------------------------------------

SAMPLE_REQUESTS: list[dict[str, Any]] = [
    {"name_contains": "bar"},
    {"text": "injective"},
    {"type_pattern": {"constants": ["Sum"]}},
    {"namespace_prefixes": ["Foo"]},
    {"kinds": ["theorem"]},
    {"module_prefixes": ["A"]},
    {"flags": {"unsafe": True, "instance": False}},
]


def test_every_filter_declares_the_record_fields_it_reads(engine: Engine) -> None:
    """Each `SearchFilter` class states its own `reads` (record fields, none inherited), and what
    one request's use of it reads is among them; a filter without the declaration would leave
    its answer's assurance to chance."""
    for kind in FILTERS:
        assert "reads" in vars(kind), f"{kind.__name__} declares no `reads`"
        assert kind.reads and set(kind.reads) <= set(DeclarationRecord.model_fields), kind.__name__
    catalog = engine.catalog("GAPPY")
    used = set()
    for fields in SAMPLE_REQUESTS:
        request = SearchRequest(environment="GAPPY", **fields)
        for kind in FILTERS:
            if kind.active(request):
                used.add(kind)
                assert set(kind(catalog, request).read()) <= set(kind.reads), (kind.__name__, fields)
    # `instances_of` and `uses_constants` need records this stream has not (`not_recorded`).
    assert {k.__name__ for k in FILTERS} - {k.__name__ for k in used} == {"InstancesOf", "UsesConstants"}


# --- assurance ----------------------------------------------------------------------------------


def test_name_namespace_and_module_filters_stay_computed_on_an_approximate_catalog(engine: Engine) -> None:
    answer = search(engine, name_contains="ba", namespace_prefixes=["Foo", "Bar"], module_prefixes=["A.Core", "A.Data"])
    assert [r.name for r in answer.results] == ["Foo.bar"]
    assert (answer.assurance.value, answer.approximate_filters) == ("COMPUTED", [])


def test_a_type_constant_filter_is_approximate_naming_the_blind_spot_of_its_constant(engine: Engine) -> None:
    answer = search(engine, type_pattern={"constants": ["Sum"]})
    assert answer.assurance.value == "APPROXIMATE"
    assert answer.approximate_filters == [
        ApproximateFilter(filter="type_pattern", fields=["type_constants"], blind_spots=[SUM_SPOT.description])
    ]
    # A constant without a known blind spot: still approximate, no blind spot named.
    plain = search(engine, type_pattern={"constants": ["Nat"]}, module_prefixes=["A"])
    assert plain.approximate_filters == [ApproximateFilter(filter="type_pattern", fields=["type_constants"], blind_spots=[])]
    # A constant no type links at all (the 0-of-3 `⋂` case) is unknown, and its blind spot is named.
    unlinked = search(engine, type_pattern={"constants": ["Inter"]})
    assert [u.name for u in unlinked.unknown_constants] == ["Inter"]
    assert unlinked.approximate_filters[0].blind_spots == [INTER_SPOT.description]
    # The same data without approximate fields in its manifest: exact.
    exact = search(engine, "EXACT", type_pattern={"constants": ["Sum"]})
    assert (exact.assurance.value, exact.approximate_filters, exact.total_matches) == ("COMPUTED", [], answer.total_matches)


def test_a_filter_asking_no_constant_names_every_blind_spot_of_its_field(engine: Engine) -> None:
    answer = search(engine, kinds=["definition"], flags={"unsafe": True})
    assert [r.name for r in answer.results] == ["Foo.bar"]
    assert answer.approximate_filters == [
        ApproximateFilter(filter="kinds", fields=["kind"], blind_spots=[KIND_SPOT.description]),
        ApproximateFilter(filter="flags", fields=["is_unsafe"], blind_spots=[]),
    ]
    # `instance` is exact there: only the flags read decide.
    assert search(engine, flags={"instance": True}, module_prefixes=["B"]).assurance.value == "COMPUTED"


# --- absent facts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "fact"),
    [
        ({"kinds": ["recursor"]}, "kinds", "kind:recursor"),
        ({"kinds": ["theorem", "recursor"], "name_contains": "Foo"}, "kinds", "kind:recursor"),
        ({"flags": {"deprecated": True}}, "flags", "flag:deprecated"),
        ({"flags": {"deprecated": False}, "namespace_prefixes": ["Foo"]}, "flags", "flag:deprecated"),
    ],
)
def test_a_filter_on_a_fact_the_source_never_had_is_not_recorded(engine: Engine, fields: dict[str, Any], field: str, fact: str) -> None:
    refused = refusal(engine, **fields)
    assert refused.code is ErrorCode.NOT_RECORDED
    assert (refused.details["field"], refused.details["fact"]) == (field, fact)
    assert fact.replace(":", " ") in refused.message  # `declarations of kind recursor`, `flag deprecated`
    # Where the source records it, the same filter answers.
    assert search(engine, "EXACT", **fields).completeness.value == "COMPLETE"


def test_hidden_matches_is_null_where_the_source_omits_hidden_declarations(engine: Engine) -> None:
    assert search(engine, name_contains="Foo").hidden_matches is None
    assert search(engine, "EXACT", name_contains="Foo").hidden_matches == 0
    body = json.loads(search(engine, name_contains="Foo").model_dump_json())
    assert body["hidden_matches"] is None


# --- missing modules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefixes", "missing"),
    [
        (None, ["A.Gone", "C.Lost"]),
        (["A"], ["A.Gone"]),
        (["A.Gone"], ["A.Gone"]),
        (["C", "B"], ["C.Lost"]),
        (["A.Core", "B"], []),
        (["A.Go"], []),  # a prefix is whole components: A.Go does not cover A.Gone
    ],
)
def test_missing_modules_in_scope_make_an_exhausted_answer_partial(engine: Engine, prefixes: list[str] | None, missing: list[str]) -> None:
    answer = search(engine, name_contains="a", module_prefixes=prefixes)
    assert answer.stop_reason.value == "EXHAUSTED" and answer.next_cursor is None
    assert answer.missing_modules == missing
    assert answer.completeness.value == ("PARTIAL" if missing else "COMPLETE")
    exact = search(engine, "EXACT", name_contains="a", module_prefixes=prefixes)
    assert (exact.missing_modules, exact.completeness.value) == ([], "COMPLETE")


def test_a_module_that_is_missing_answers_partial_not_an_empty_complete(engine: Engine) -> None:
    answer = search(engine, module_prefixes=["A.Gone"])
    assert (answer.total_matches, answer.stop_reason.value, answer.completeness.value) == (0, "EXHAUSTED", "PARTIAL")
    made_up = search(engine, module_prefixes=["A.Nowhere"])
    assert (made_up.total_matches, made_up.completeness.value, made_up.missing_modules) == (0, "COMPLETE", [])


def test_inspect_of_a_name_of_a_missing_module_is_missing_module(engine: Engine) -> None:
    with pytest.raises(LeanIndexError) as raised:
        engine.inspect(InspectRequest(environment="GAPPY", declaration_name="Gone.lemma"))
    assert raised.value.code is ErrorCode.MISSING_MODULE
    assert raised.value.details["module"] == "A.Gone" and raised.value.details["linked_from"] == ["Bar.baz"]
    with pytest.raises(LeanIndexError) as both:
        engine.inspect(InspectRequest(environment="GAPPY", declaration_name="Lost.b"))
    assert (both.value.details["module"], both.value.details["linked_from"]) == ("C.Lost", ["Bar.lost"])
    # A name nothing links stays not_found, naming the modules that could declare it; in a
    # catalog without gaps, the linked name too, naming none.
    for environment, name, missing in (("GAPPY", "Gone.other", ["A.Gone", "C.Lost"]), ("EXACT", "Gone.lemma", [])):
        with pytest.raises(LeanIndexError) as unknown:
            engine.inspect(InspectRequest(environment=environment, declaration_name=name))
        assert unknown.value.code is ErrorCode.NOT_FOUND
        assert unknown.value.details["missing_modules"] == missing
        assert ("lacks 2 module(s)" in unknown.value.message) is bool(missing)


def test_missing_module_has_its_own_exit_status_and_http_404(root: Path, engine: Engine) -> None:
    done = CliRunner().invoke(main, ["inspect", "-e", "GAPPY", "Gone.lemma", "--root", str(root), "--json"])
    # Its own status: a script can tell "not in this catalog's modules" from `not_found` (5).
    assert [code for code, status in EXIT_STATUS.items() if status == done.exit_code] == [ErrorCode.MISSING_MODULE]
    assert json.loads(done.stdout)["error"]["details"]["module"] == "A.Gone"
    with live_server(create_app(engine)) as url:
        answer = httpx.get(f"{url}/v1/declarations/Gone.lemma", params={"environment": "GAPPY"})
    assert answer.status_code == HTTP_STATUS[ErrorCode.MISSING_MODULE] == 404
    assert answer.json()["error"]["code"] == "missing_module"


# --- what each surface shows ----------------------------------------------------------------------


def test_text_renderings_show_only_the_caveats_of_the_answer(root: Path, engine: Engine) -> None:
    quiet = render_search(search(engine, name_contains="Foo", module_prefixes=["A.Core", "A.Data"]))
    assert "approximate" not in quiet and "missing" not in quiet and "hidden_matches unknown" in quiet
    gapped = render_search(search(engine, name_contains="Foo"))
    assert "A.Gone, C.Lost" in gapped and "approximate" not in gapped
    noted = render_search(search(engine, type_pattern={"constants": ["Sum"]}, module_prefixes=["B"]))
    assert noted.startswith("EXHAUSTED COMPLETE APPROXIMATE: ")
    [line] = [line for line in noted.splitlines() if line.startswith("approximate:")]
    assert "type_pattern" in line and "type_constants" in line and SUM_SPOT.description in line
    exact = render_search(search(engine, "EXACT", name_contains="Foo"))
    assert "hidden_matches 0" in exact and "approximate" not in exact and "missing" not in exact

    cli = CliRunner()
    printed = cli.invoke(main, ["search", "-e", "GAPPY", "-c", "Sum", "--root", str(root)]).stdout
    assert "APPROXIMATE" in printed and SUM_SPOT.description in printed and "A.Gone" in printed
    assert "unknown private/internal hidden" in printed
    plain = cli.invoke(main, ["search", "-e", "GAPPY", "-n", "Foo", "--module", "A.Core", "--module", "A.Data", "--root", str(root)]).stdout
    assert "note:" not in plain and "EXHAUSTED · COMPLETE · 3 shown of 3 matches" in plain and "APPROXIMATE" not in plain


def test_the_search_page_shows_the_caveats_of_the_answer(engine: Engine) -> None:
    with live_server(create_app(engine)) as url:
        gapped = httpx.get(url + "/", params={"env": "GAPPY", "q": "c:Sum"}).text
        quiet = httpx.get(url + "/", params={"env": "GAPPY", "q": "Foo mod:A.Core mod:A.Data"}).text
    assert "· incomplete · approximate" in gapped and "A.Gone, C.Lost" in gapped
    assert SUM_SPOT.description.replace("`", "") in gapped.replace("`", "").replace("&#39;", "'").replace("&#x27;", "'")
    assert "· complete<" in quiet and "approximate" not in quiet and "missing" not in quiet
    assert "Private or internal declarations matched: unknown" in quiet


# --- the property ---------------------------------------------------------------------------------

# The oracle's own table: which request fields read a field the GAPPY source approximates, which
# ask a fact it never had. Written from the manifest above, not from the engine's `reads`.
APPROXIMATE_FLAGS = {"unsafe"}
ABSENT_FLAGS = {"deprecated"}
ABSENT_KINDS = {"recursor"}
MISSING = ["A.Gone", "C.Lost"]
KINDS = ["theorem", "definition", "recursor"]


def _covers(prefix: str, module: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if draw(st.booleans()):
        fields["name_contains"] = draw(st.sampled_from(["a", "Foo", "bar", "z"]))
    if draw(st.booleans()):
        fields["namespace_prefixes"] = draw(st.lists(st.sampled_from(["Foo", "Bar", "Nope"]), min_size=1, max_size=2))
    if draw(st.booleans()):
        fields["module_prefixes"] = draw(st.lists(st.sampled_from(["A", "A.Core", "A.Gone", "B", "C", "C.Lost.X", "Z"]), min_size=1, max_size=3))
    if draw(st.booleans()):
        fields["type_pattern"] = {"constants": draw(st.lists(st.sampled_from(["Sum", "Nat", "Inter", "True"]), min_size=1, max_size=2))}
    if draw(st.booleans()):
        fields["kinds"] = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=2))
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(["instance", "unsafe", "deprecated", "class"]), min_size=1, max_size=3, unique=True))
        fields["flags"] = {key: draw(st.booleans()) for key in keys}
    if draw(st.booleans()):
        fields["text"] = draw(st.sampled_from(["injective", "not injective", "nat"]))
    if not fields:
        fields["name_contains"] = "a"
    return fields


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(environment=st.sampled_from(["GAPPY", "EXACT"]), fields=requests(), limit=st.integers(1, 4))
def test_computed_and_complete_exactly_when_nothing_approximate_absent_or_missing_is_touched(
    engine: Engine, environment: str, fields: dict[str, Any], limit: int
) -> None:
    gappy = environment == "GAPPY"
    flags = fields.get("flags", {})
    absent = gappy and (bool(ABSENT_KINDS & set(fields.get("kinds", []))) or bool(ABSENT_FLAGS & set(flags)))
    approximate = gappy and ("type_pattern" in fields or "kinds" in fields or bool(APPROXIMATE_FLAGS & set(flags)))
    prefixes = fields.get("module_prefixes")
    missing = [m for m in MISSING if prefixes is None or any(_covers(p, m) for p in prefixes)] if gappy else []
    if absent:
        with pytest.raises(LeanIndexError) as raised:
            engine.search(SearchRequest(environment=environment, result_limit=limit, **fields))
        assert raised.value.code is ErrorCode.NOT_RECORDED
        event("refused: absent fact")
        return
    pages, after = [], None
    while True:
        page = engine.search(SearchRequest(environment=environment, result_limit=limit, after=after, **fields))
        pages.append(page)
        if page.next_cursor is None:
            break
        after = page.next_cursor
    for i, page in enumerate(pages):
        last = i == len(pages) - 1
        assert (page.assurance.value == "COMPUTED") is (not approximate), fields
        assert bool(page.approximate_filters) is approximate
        assert page.missing_modules == missing, fields
        assert page.stop_reason.value == ("EXHAUSTED" if last else "RESULT_LIMIT")
        assert (page.completeness.value == "COMPLETE") is (last and not missing), fields
        assert (page.hidden_matches is None) is gappy
    event(f"{'approximate' if approximate else 'computed'}, {'partial' if missing else 'complete'}")


def test_a_module_prefix_is_read_as_lean_prints_it_and_a_malformed_one_is_refused(engine: Engine) -> None:
    """`«A».Gone` is the module `A.Gone` (so its missing module is in scope); `A.Gone.` names
    no module and is `invalid_request`, not an empty scope answered COMPLETE."""
    answer = search(engine, module_prefixes=["«A».Gone"])
    assert answer.missing_modules == ["A.Gone"] and answer.completeness.value == "PARTIAL"
    with pytest.raises(ValidationError):
        SearchRequest(environment="GAPPY", module_prefixes=["A.Gone."])
