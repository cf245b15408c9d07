"""Contract tests of the query engine and its CLI (DESIGN.md "Search contract", "Inspect
contract", "Errors"; issue 2, items 6 and 7).

They pin the public JSON shapes, walk every error path of search and inspect through the library
and the CLI, and check the filter semantics DESIGN.md states in words (namespaces, module
prefixes, hidden declarations, unknown constants, canonical names).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from leanindex.catalog.layout import CatalogPaths
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from leanindex.models import InspectRequest, InspectResponse, SearchRequest, SearchResponse
from leanindex.sample import sample_stream_path
from lean_oracle import lean_order_key
from streamkit import build, declaration, stream

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()
SAMPLE_RECORDS = [r for r in map(json.loads, SAMPLE_LINES) if r["record"] == "declaration"]

SEMANTICS_MODULES = ["Init.Prelude", "Mathlib.Analysis", "Mathlib.Analysis.Normed.Group", "Mathlib.AnalysisX", "Mathlib.AnalysisX.Y"]
SEMANTICS = [
    declaration(["Nat"], kind="inductive", module="Init.Prelude", type_constants=["Nat"]),
    declaration(["Nat", "match_1"], kind="definition", module="Init.Prelude", type_constants=["Nat"], is_internal=True),
    declaration(["Nat", "succ_le"], module="Mathlib.Analysis.Normed.Group", type_constants=["Nat"]),
    declaration(["NatCast", "foo"], module="Mathlib.AnalysisX", type_constants=["Nat"]),
    declaration(["Natural", "foo"], module="Mathlib.AnalysisX.Y", type_constants=["Nat"]),
    declaration(["Nat", "Linear", "foo"], module="Mathlib.Analysis", type_constants=["Nat"]),
    declaration(["Nat", "foo", "_proof_1"], module="Mathlib.Analysis", type_constants=["Nat"], is_internal=True),
    declaration(["Nat", "Linear", "foo", "bar"], module=None, type_constants=["Nat"]),
    declaration(["_private", "Init", "Core", 0, "Nat", "secret"], module="Init.Prelude", type_constants=["Nat"], is_private=True),
]
SEMANTICS.sort(key=lambda r: lean_order_key(r["components"]))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("engine")
    build(folder, "sample", SAMPLE_LINES)
    build(folder, "semantics", stream(SEMANTICS, SEMANTICS_MODULES))
    return folder


@pytest.fixture(scope="module")
def engine(root: Path) -> Engine:
    served = Engine(root)
    yield served
    served.close()


def search(engine: Engine, **fields: Any) -> SearchResponse:
    fields.setdefault("environment", "SAMPLE")
    return engine.search(SearchRequest(**fields))


def names(response: SearchResponse) -> list[str]:
    return [r.name for r in response.results]


def refused(call: Any, code: ErrorCode) -> LeanIndexError:
    with pytest.raises(LeanIndexError) as caught:
        call()
    assert caught.value.code is code, caught.value
    return caught.value


def cli(root: Path, *args: str) -> Any:
    return CliRunner().invoke(main, [*args, "--root", str(root)])


# --- shapes ---------------------------------------------------------------------------------------

IDENTITY_KEYS = {"environment", "environment_digest", "lean_version", "lean_commit", "mathlib_commit", "source", "approximate_fields"}
SEARCH_KEYS = IDENTITY_KEYS | {
    "results",
    "stop_reason",
    "completeness",
    "assurance",
    "approximate_filters",
    "missing_modules",
    "next_cursor",
    "total_matches",
    "hidden_matches",
    "unknown_constants",
    "resolved_constants",
    "suggestions",
    "unmatched_words",
}
RESULT_KEYS = {"name", "kind", "type", "namespace", "module", "range", "source_url", "doc_url", "match_reasons"}
INSPECT_KEYS = IDENTITY_KEYS | {
    "name",
    "components",
    "kind",
    "type",
    "namespace",
    "module",
    "range",
    "doc",
    "level_params",
    "type_constants",
    "value_constants",
    "flags",
    "conclusion_constants",
    "conclusion_head",
    "source_url",
    "doc_url",
    "deprecated_to",
    "deprecated_since",
    "instance_class",
    "uses",
    "used_by_count",
    "instance_count",
}
FLAG_KEYS = {"is_private", "is_internal", "is_instance", "is_class", "is_structure", "is_unsafe", "is_deprecated", "type_fallback"}


def test_search_response_shape(engine: Engine, root: Path) -> None:
    body = json.loads(search(engine, name_contains="add_comm", namespace_prefixes=["Nat"]).model_dump_json())
    assert set(body) == SEARCH_KEYS
    assert body["environment"] == "SAMPLE"
    assert body["lean_version"] == "4.35.0"
    assert body["mathlib_commit"] is None
    assert body["source"] == "stream" and body["approximate_fields"] == []
    manifest = json.loads(CatalogPaths.of(root, "sample").manifest.read_text())
    assert body["environment_digest"] == manifest["environment_digest"]
    [result] = body["results"]
    assert set(result) == RESULT_KEYS
    assert result == {
        "name": "Nat.add_comm",
        "kind": "theorem",
        "type": "∀ (n m : Nat), n + m = m + n",
        "namespace": "Nat",
        "module": "Init.Data.Nat.Basic",
        "range": next(r["range"] for r in SAMPLE_RECORDS if r["name"] == "Nat.add_comm"),
        # Built from a stream alone: no Lake project, so no source link, and no doc site.
        "source_url": None,
        "doc_url": None,
        "match_reasons": [
            {"filter": "name_contains", "value": "add_comm"},
            {"filter": "namespace_prefix", "value": "Nat"},
        ],
    }
    assert (body["stop_reason"], body["completeness"], body["assurance"]) == ("EXHAUSTED", "COMPLETE", "COMPUTED")
    assert (body["next_cursor"], body["total_matches"], body["hidden_matches"]) == (None, 1, 0)



def test_a_repeated_prefix_gives_a_reason_each_time(engine: Engine) -> None:
    """Reasons follow the request as given: a prefix named twice matches twice."""
    [result] = search(engine, name_contains="add_comm", namespace_prefixes=["Nat", "Nat"]).results
    assert [(r.filter, r.value) for r in result.match_reasons] == [
        ("name_contains", "add_comm"),
        ("namespace_prefix", "Nat"),
        ("namespace_prefix", "Nat"),
    ]

def test_inspect_response_shape(engine: Engine) -> None:
    body = json.loads(engine.inspect(InspectRequest(environment="sample", declaration_name="Nat.add_comm")).model_dump_json())
    assert set(body) == INSPECT_KEYS
    assert set(body["flags"]) == FLAG_KEYS
    record = next(r for r in SAMPLE_RECORDS if r["name"] == "Nat.add_comm")
    for key in ("name", "components", "kind", "type", "module", "range", "doc", "level_params", "type_constants"):
        assert body[key] == record[key], key
    assert body["namespace"] == "Nat"
    assert body["value_constants"] is None
    assert (body["source_url"], body["doc_url"]) == (None, None)
    assert body["flags"] == {flag: record.get(flag, False) for flag in FLAG_KEYS}
    assert body["environment"] == "SAMPLE"


def test_root_names_have_no_namespace(engine: Engine) -> None:
    assert engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat")).namespace is None
    [result] = search(engine, name_contains="propext").results
    assert result.namespace is None and result.kind.value == "axiom"


# --- environments ---------------------------------------------------------------------------------


def test_unknown_environment_lists_the_known_ids(engine: Engine, root: Path) -> None:
    error = refused(lambda: search(engine, environment="MATHLIB", name_contains="a"), ErrorCode.UNKNOWN_ENVIRONMENT)
    assert error.details["known"] == ["SAMPLE", "SEMANTICS"]
    refused(lambda: engine.inspect(InspectRequest(environment="mathlib", declaration_name="Nat")), ErrorCode.UNKNOWN_ENVIRONMENT)
    result = cli(root, "search", "--environment", "MATHLIB", "--name-contains", "a", "--json")
    assert result.exit_code == EXIT_STATUS[ErrorCode.UNKNOWN_ENVIRONMENT]
    assert json.loads(result.stdout)["error"]["details"]["known"] == ["SAMPLE", "SEMANTICS"]


@pytest.mark.parametrize("environment", ["SAMPLE", "sample", "Sample", "sAmPlE"])
def test_environment_ids_are_case_insensitive(engine: Engine, environment: str) -> None:
    response = search(engine, environment=environment, name_contains="add")
    assert response.environment == "SAMPLE"
    assert names(response) == names(search(engine, name_contains="add"))
    assert engine.inspect(InspectRequest(environment=environment, declaration_name="Nat.succ")).environment == "SAMPLE"


@pytest.mark.parametrize("environment", ["", "../sample", "sample/..", "a b", "x" * 65, "-sample"])
def test_malformed_environment_id_is_invalid(environment: str) -> None:
    with pytest.raises(ValidationError):
        SearchRequest(environment=environment, name_contains="a")


def test_catalog_unavailable_when_only_the_manifest_exists(tmp_path: Path) -> None:
    build(tmp_path, "sample", SAMPLE_LINES)
    link = CatalogPaths.of(tmp_path, "sample").catalog_dir
    shutil.rmtree(link.resolve())
    link.unlink()
    refused(lambda: search(Engine(tmp_path), name_contains="a"), ErrorCode.CATALOG_UNAVAILABLE)
    result = cli(tmp_path, "search", "-e", "sample", "-n", "a", "--json")
    assert result.exit_code == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE]
    assert json.loads(result.stdout)["error"]["code"] == "catalog_unavailable"
    result = cli(tmp_path, "inspect", "-e", "sample", "Nat")
    assert result.exit_code == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE]
    assert "catalog_unavailable" in result.stderr


# --- invalid requests -----------------------------------------------------------------------------


@pytest.mark.parametrize("fields", [{}, {"case_sensitive": False}, {"result_limit": 3}])
def test_a_search_without_any_filter_is_refused(engine: Engine, fields: dict[str, Any]) -> None:
    error = refused(lambda: search(engine, **fields), ErrorCode.INVALID_REQUEST)
    assert "name_contains" in error.message and "namespace_prefixes" in error.message


@pytest.mark.parametrize("flags", [{}, {"instance": None}])
def test_a_flag_filter_names_some_flag_true_or_false(flags: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchRequest(environment="SAMPLE", flags=flags)


@pytest.mark.parametrize(
    "fields",
    [
        {"name_contains": "a", "result_limit": 0},
        {"name_contains": "a", "result_limit": 51},
        {"name_contains": "a", "result_limit": -1},
        {"type_pattern": {"constants": [f"C{i}" for i in range(9)]}},
        {"type_pattern": {"constants": []}},
        {"type_pattern": {"constants": [""]}},
        {"name_contains": ""},
        {"name_contains": "a\x00b"},
        {"name_contains": "a", "namespace_prefixes": []},
        {"name_contains": "a", "namespace_prefixes": [""]},
        {"name_contains": "a", "module_prefixes": [""]},
        {"name_contains": "a", "kinds": ["lemma"]},
        {"name_contains": "a", "after": ""},
        {"name_contains": "a", "limit": 5},
    ],
    ids=repr,
)
def test_request_model_refuses(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchRequest(environment="SAMPLE", **fields)


@pytest.mark.parametrize("prefix", ["Nat..succ", "«Nat", "Nat»", "Nat.", ".Nat", "«a»b"])
def test_bad_name_syntax_in_namespace_prefixes(engine: Engine, prefix: str) -> None:
    error = refused(lambda: search(engine, name_contains="a", namespace_prefixes=[prefix]), ErrorCode.INVALID_REQUEST)
    assert error.details["field"] == "namespace_prefixes"


def test_bad_name_syntax_in_inspect(engine: Engine) -> None:
    refused(lambda: engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat..succ")), ErrorCode.INVALID_REQUEST)


def _b64(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "!!!",
        "abc",
        _b64(b"not json"),
        _b64(b"[1, 2]"),
        _b64(b'{"v": 1}'),
        _b64(b'{"v": 2, "c": "x", "q": "y", "p": 1}'),
        _b64(b'{"v": 1, "c": "x", "q": "y", "p": -1}'),
        _b64(b'{"v": 1, "c": "x", "q": "y", "p": true}'),
        _b64(b'{"v": 1, "c": "x", "q": "y", "p": "3"}'),
    ],
)
def test_malformed_cursor(engine: Engine, cursor: str) -> None:
    error = refused(lambda: search(engine, name_contains="a", after=cursor), ErrorCode.INVALID_REQUEST)
    assert error.details["field"] == "after"


def _with_key(cursor: str, key: int) -> str:
    """`cursor` with its sort key replaced by `key` (a forged cursor)."""
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    return _b64(json.dumps({**payload, "p": key}).encode())


def test_relevance_cursor_keys_lie_below_the_bound_of_their_query(engine: Engine) -> None:
    """A relevance key is `hit * size + static rank`; without a name fragment there is no hit,
    so a key of `size` or more is no cursor this engine wrote: refused, not answered with an
    empty last page. With a fragment, keys run up to `4 * size - 1`."""
    size = engine.catalog("sample").index.size
    for fields, bound in (({"kinds": ["theorem"]}, size), ({"kinds": ["theorem"], "name_contains": "a"}, 4 * size)):
        cursor = search(engine, order="relevance", result_limit=1, **fields).next_cursor
        assert cursor is not None
        error = refused(lambda: search(engine, order="relevance", after=_with_key(cursor, bound), **fields), ErrorCode.INVALID_REQUEST)
        assert error.details["field"] == "after" and "malformed" in error.message
        assert search(engine, order="relevance", after=_with_key(cursor, bound - 1), **fields).results == []


def test_cursor_from_another_catalog(engine: Engine) -> None:
    first = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, result_limit=1)
    assert first.next_cursor
    error = refused(
        lambda: search(engine, environment="SAMPLE", type_pattern={"constants": ["Nat"]}, after=first.next_cursor),
        ErrorCode.INVALID_REQUEST,
    )
    assert "another catalog" in error.message


def test_cursor_after_a_rebuild_with_other_records(tmp_path: Path) -> None:
    build(tmp_path, "sample", SAMPLE_LINES)
    served = Engine(tmp_path)
    cursor = search(served, name_contains="add", result_limit=1).next_cursor
    assert cursor
    build(tmp_path, "sample", stream([declaration(["Nat", "add_comm"]), declaration(["Nat", "add_zero"])], ["Init.Core"]))
    refused(lambda: search(served, name_contains="add", result_limit=1, after=cursor), ErrorCode.INVALID_REQUEST)
    served.close()


def test_cursor_from_another_query(engine: Engine) -> None:
    first = search(engine, name_contains="add", result_limit=1)
    assert first.next_cursor
    for other in (
        {"name_contains": "add_"},
        {"name_contains": "add", "kinds": ["theorem"]},
        {"name_contains": "add", "namespace_prefixes": ["Nat"]},
        {"name_contains": "add", "type_pattern": {"constants": ["Nat"]}},
    ):
        error = refused(lambda: search(engine, after=first.next_cursor, **other), ErrorCode.INVALID_REQUEST)
        assert "different query" in error.message


def test_cursor_survives_naming_the_default_order_and_names_the_other_order_a_different_query(engine: Engine) -> None:
    first = search(engine, name_contains="add", result_limit=1)
    named = search(engine, name_contains="add", order="name", result_limit=1)
    assert first.next_cursor and named.next_cursor
    # Leaving the order out and naming the default are one query: each cursor serves both.
    assert search(engine, name_contains="add", order="name", result_limit=50, after=first.next_cursor).results == \
        search(engine, name_contains="add", result_limit=50, after=named.next_cursor).results
    ranked = search(engine, name_contains="add", order="relevance", result_limit=1)
    assert ranked.next_cursor
    for cursor, order in ((ranked.next_cursor, None), (first.next_cursor, "relevance")):
        error = refused(lambda: search(engine, name_contains="add", order=order, after=cursor), ErrorCode.INVALID_REQUEST)
        assert "different query" in error.message and error.details == {"field": "after"}


def test_cursor_survives_a_new_limit_and_another_spelling_of_the_id(engine: Engine) -> None:
    first = search(engine, name_contains="add", result_limit=2)
    rest = search(engine, environment="sample", name_contains="add", result_limit=50, after=first.next_cursor)
    everything = search(engine, name_contains="add", result_limit=50)
    assert names(first) + names(rest) == names(everything)
    assert rest.stop_reason.value == "EXHAUSTED" and rest.next_cursor is None


# --- not found ------------------------------------------------------------------------------------


def test_inspect_missing_name_suggests_close_names(engine: Engine) -> None:
    error = refused(lambda: engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_com")), ErrorCode.NOT_FOUND)
    assert error.details["suggestions"][0] == "Nat.add_comm"
    assert error.details["declaration_name"] == "Nat.add_com"
    error = refused(lambda: engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Lsit.length")), ErrorCode.NOT_FOUND)
    assert "List.length" in error.details["suggestions"]


def test_suggestions_never_name_hidden_declarations(engine: Engine) -> None:
    # One edit from the internal `Nat.recOn`; `Nat.rec` (visible) shares its first word.
    error = refused(lambda: engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.recOnn")), ErrorCode.NOT_FOUND)
    hidden = {r["name"] for r in SAMPLE_RECORDS if r["is_private"] or r["is_internal"]}
    assert error.details["suggestions"] and not hidden & set(error.details["suggestions"])


# --- semantics ------------------------------------------------------------------------------------


def test_private_and_internal_never_returned(engine: Engine) -> None:
    hidden = {r["name"] for r in SAMPLE_RECORDS if r["is_private"] or r["is_internal"]}
    for substring in ("Nat", "List", "_", ".", "a"):
        response = search(engine, name_contains=substring, result_limit=50)
        shown = set(names(response))
        assert not shown & hidden
        matching = [r for r in SAMPLE_RECORDS if substring in r["name"]]
        assert response.total_matches == sum(1 for r in matching if r["name"] not in hidden)
        assert response.hidden_matches == sum(1 for r in matching if r["name"] in hidden)
    assert search(engine, name_contains="_proof_1").hidden_matches == 1
    assert search(engine, name_contains="lengthTRAux").total_matches == 0


def test_hidden_declarations_can_still_be_inspected_by_exact_name(engine: Engine) -> None:
    found = engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.casesOn"))
    assert found.flags.is_internal and not found.flags.is_private


def test_namespace_is_a_proper_leading_part_of_the_components(engine: Engine) -> None:
    response = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, namespace_prefixes=["Nat"], result_limit=50)
    assert names(response) == ["Nat.succ_le", "Nat.Linear.foo", "Nat.Linear.foo.bar"]
    assert response.hidden_matches == 2  # Nat.match_1, Nat.foo._proof_1; not the _private one
    escaped = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, namespace_prefixes=["«Nat»"], result_limit=50)
    assert names(escaped) == names(response)
    deeper = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, namespace_prefixes=["Nat.Linear"])
    assert names(deeper) == ["Nat.Linear.foo", "Nat.Linear.foo.bar"]
    both = search(engine, environment="SEMANTICS", name_contains="foo", namespace_prefixes=["NatCast", "Natural"])
    assert names(both) == ["NatCast.foo", "Natural.foo"]
    assert [r.match_reasons[-1].value for r in both.results] == ["NatCast", "Natural"]
    private = search(engine, environment="SEMANTICS", name_contains="secret", namespace_prefixes=["_private.Init.Core.0.Nat"])
    assert (private.total_matches, private.hidden_matches) == (0, 1)


def test_module_prefix_matches_the_module_or_below(engine: Engine) -> None:
    response = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, module_prefixes=["Mathlib.Analysis"], result_limit=50)
    assert names(response) == ["Nat.succ_le", "Nat.Linear.foo"]
    assert response.hidden_matches == 1
    assert [r.module for r in response.results] == ["Mathlib.Analysis.Normed.Group", "Mathlib.Analysis"]
    x = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, module_prefixes=["Mathlib.AnalysisX"])
    assert names(x) == ["NatCast.foo", "Natural.foo"]
    partial_component = search(engine, environment="SEMANTICS", type_pattern={"constants": ["Nat"]}, module_prefixes=["Mathlib.Anal"])
    assert partial_component.total_matches == 0


def test_exactly_result_limit_matches_is_exhausted(engine: Engine) -> None:
    total = search(engine, name_contains="add_", result_limit=50).total_matches
    exact = search(engine, name_contains="add_", result_limit=total)
    assert (exact.stop_reason.value, exact.completeness.value, exact.next_cursor) == ("EXHAUSTED", "COMPLETE", None)
    one_less = search(engine, name_contains="add_", result_limit=total - 1)
    assert (one_less.stop_reason.value, one_less.completeness.value) == ("RESULT_LIMIT", "PARTIAL")
    assert one_less.next_cursor and one_less.total_matches == total


def test_results_follow_name_lt_not_string_order(engine: Engine) -> None:
    response = search(engine, name_contains="Nat.", result_limit=50)
    shown = names(response)
    assert shown.index("Nat.zero_add") < shown.index("Nat.Linear.Context")  # two components before three
    assert shown.index("Nat.le.refl") > shown.index("Nat.zero")


def test_unknown_type_constants_reported_with_suggestions(engine: Engine) -> None:
    response = search(engine, type_pattern={"constants": ["Nat", "List.lenght"]})
    assert response.results == [] and response.total_matches == 0
    assert (response.stop_reason.value, response.completeness.value) == ("EXHAUSTED", "COMPLETE")
    [unknown] = response.unknown_constants
    assert unknown.name == "List.lenght"
    assert unknown.suggestions[0] == "List.length"


def test_type_constants_all_must_occur(engine: Engine) -> None:
    for wanted in (["List.length", "HAppend.hAppend"], ["Eq", "Nat"], ["HAdd.hAdd", "Nat", "OfNat.ofNat"], ["List", "Nat"]):
        response = search(engine, type_pattern={"constants": wanted}, result_limit=50)
        expected = [
            r["name"]
            for r in SAMPLE_RECORDS
            if set(wanted) <= set(r["type_constants"]) and not (r["is_private"] or r["is_internal"])
        ]
        assert sorted(names(response)) == sorted(expected) and expected, wanted
        for result in response.results:
            assert [m.model_dump() for m in result.match_reasons] == [{"filter": "type_constant", "value": c} for c in wanted]


def test_type_constant_in_another_spelling(engine: Engine) -> None:
    plain = search(engine, type_pattern={"constants": ["Nat.succ"]}, result_limit=50)
    escaped = search(engine, type_pattern={"constants": ["«Nat».succ"]}, result_limit=50)
    assert names(escaped) == names(plain) and plain.total_matches > 0
    assert escaped.unknown_constants == []


def test_kinds_filter(engine: Engine) -> None:
    response = search(engine, name_contains="Quot", kinds=["axiom", "quotient"], result_limit=50)
    assert names(response) == ["Quot", "Quot.ind", "Quot.lift", "Quot.mk", "Quot.sound"]
    assert [r.match_reasons[-1].value for r in response.results] == ["quotient"] * 4 + ["axiom"]


def test_name_contains_is_case_sensitive_and_unicode(engine: Engine) -> None:
    assert search(engine, name_contains="nat").total_matches == 0
    assert names(search(engine, name_contains="«term_+_")) == ["«term_+_»"]
    assert names(search(engine, name_contains="«term_+")) == ["«term_++_»", "«term_+_»"]
    assert names(search(engine, name_contains="<;>")) == ["Lean.Parser.Tactic.«tactic_<;>_»"]


def test_inspect_by_canonical_form(engine: Engine) -> None:
    assert engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="«Nat».succ")).name == "Nat.succ"
    assert engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.«add_comm»")).name == "Nat.add_comm"
    tactic = engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Lean.Parser.Tactic.«tactic_<;>_»"))
    assert tactic.components == ["Lean", "Parser", "Tactic", "tactic_<;>_"]
    private = engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="_private.Init.Data.List.Basic.0.List.lengthTRAux"))
    assert private.components[5] == 0 and private.flags.is_private


# --- CLI ------------------------------------------------------------------------------------------


def test_cli_search_json_is_exactly_the_model(engine: Engine, root: Path) -> None:
    result = cli(root, "search", "-e", "sample", "-n", "add", "--namespace", "Nat", "--kind", "theorem", "--limit", "2", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    expected = search(engine, name_contains="add", namespace_prefixes=["Nat"], kinds=["theorem"], result_limit=2)
    assert body == expected.model_dump(mode="json")
    SearchResponse.model_validate(body)
    follow = cli(root, "search", "-e", "sample", "-n", "add", "--namespace", "Nat", "--kind", "theorem", "--after", body["next_cursor"], "--json")
    assert follow.exit_code == 0
    assert json.loads(follow.stdout)["results"][0]["name"] == "Nat.add_zero"


def test_cli_search_with_constants_and_modules(engine: Engine, root: Path) -> None:
    result = cli(root, "search", "-e", "SAMPLE", "-c", "Nat", "-c", "Eq", "--module", "Init.Data", "--limit", "50", "--json")
    assert result.exit_code == 0
    expected = search(engine, type_pattern={"constants": ["Nat", "Eq"]}, module_prefixes=["Init.Data"], result_limit=50)
    assert json.loads(result.stdout) == expected.model_dump(mode="json")


def test_cli_inspect_json_is_exactly_the_model(engine: Engine, root: Path) -> None:
    result = cli(root, "inspect", "-e", "sample", "Nat.add_comm", "--json")
    assert result.exit_code == 0
    body = json.loads(result.stdout)
    assert body == engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_comm")).model_dump(mode="json")
    InspectResponse.model_validate(body)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["search", "-e", "sample"], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "sample", "-n", "a", "--limit", "0"], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "sample", "-n", "a", "--limit", "51"], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "sample", *[a for i in range(9) for a in ("-c", f"C{i}")]], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "sample", "-n", ""], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "sample", "-n", "a", "--after", "garbage"], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "sample", "-n", "a", "--namespace", "Nat..x"], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "../sample", "-n", "a"], ErrorCode.INVALID_REQUEST),
        (["search", "-e", "nope", "-n", "a"], ErrorCode.UNKNOWN_ENVIRONMENT),
        (["inspect", "-e", "sample", "Nat.add_com"], ErrorCode.NOT_FOUND),
        (["inspect", "-e", "sample", "«Nat"], ErrorCode.INVALID_REQUEST),
        (["inspect", "-e", "nope", "Nat"], ErrorCode.UNKNOWN_ENVIRONMENT),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v.value,
)
def test_cli_errors(root: Path, args: list[str], code: ErrorCode) -> None:
    result = cli(root, *args, "--json")
    assert result.exit_code == EXIT_STATUS[code]
    body = json.loads(result.stdout)
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code.value
    human = cli(root, *args)
    assert human.exit_code == EXIT_STATUS[code]
    assert human.stdout == ""
    assert f"({code.value})" in human.stderr


def test_exit_statuses_are_distinct_per_outcome() -> None:
    """Every outcome has its own status, and no error code shares one with an outcome (1 is the
    interpreter's crash, 12 a check left incomplete, ...)."""
    outcomes = list(OUTCOME_EXIT.values())
    assert set(OUTCOME_EXIT) == set(Outcome)
    assert len(set(outcomes)) == len(outcomes)
    assert set(EXIT_STATUS) == set(ErrorCode)
    assert not set(outcomes) & set(EXIT_STATUS.values())


def test_cli_exit_codes_are_distinct() -> None:
    codes = [ErrorCode.INVALID_REQUEST, ErrorCode.NOT_FOUND, ErrorCode.UNKNOWN_ENVIRONMENT, ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH]
    statuses = [EXIT_STATUS[c] for c in codes]
    assert len(set(statuses)) == len(statuses)
    assert all(s not in (0, 1, 2) for s in statuses)


def test_cli_not_found_prints_suggestions(root: Path) -> None:
    result = cli(root, "inspect", "-e", "sample", "Nat.add_com")
    assert "close names: Nat.add_comm" in result.stderr


def test_cli_human_output(root: Path) -> None:
    result = cli(root, "search", "-e", "sample", "-n", "add", "--kind", "theorem", "--limit", "3")
    assert result.exit_code == 0
    assert "RESULT_LIMIT" in result.stdout and "Nat.add_assoc" in result.stdout and "next page: --after" in result.stdout
    result = cli(root, "inspect", "-e", "sample", "Nat.add_comm")
    assert result.exit_code == 0
    assert "Nat.add_comm" in result.stdout and "commutative" in result.stdout


def test_demo_and_search_as_real_processes(tmp_path: Path) -> None:
    """The installed console script, run the way a user runs it."""
    script = Path(sys.executable).with_name("leanindex")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "leanindex"]
    demo = subprocess.run([*command, "demo", "--sample", "--root", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0, demo.stderr
    assert "Nat.add_comm" in demo.stdout and "List.length_append" in demo.stdout
    assert "List.lenght" in demo.stdout and "List.length" in demo.stdout  # the misspelt constant, with a suggestion
    found = subprocess.run(
        [*command, "search", "-e", "SAMPLE", "-n", "add_comm", "--root", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 0
    assert [r["name"] for r in json.loads(found.stdout)["results"]] == ["Nat.add_comm"]
    missing = subprocess.run([*command, "inspect", "-e", "SAMPLE", "Nat.nope", "--root", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120)
    assert missing.returncode == EXIT_STATUS[ErrorCode.NOT_FOUND]
    assert json.loads(missing.stdout)["error"]["code"] == "not_found"
