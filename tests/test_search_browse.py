"""Browsing, flag filters, several name fragments, case-insensitive names, suggestions for
empty name searches, and the CLI's rendering of them (issue 11, items 1, 2, 6, 7 and the CLI
part of 8), on the embedded sample of Lean core and a small hand-made catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import InspectRequest, SearchRequest, SearchResponse
from leanindex.sample import sample_stream_path
from lean_oracle import lean_order_key
from streamkit import build, declaration, stream

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()
SAMPLE = [r for r in map(json.loads, SAMPLE_LINES) if r["record"] == "declaration"]
VISIBLE = [r for r in SAMPLE if not (r["is_private"] or r["is_internal"])]

# A signature with `[...]` spans, as Mathlib's `List.getElem_map` prints (the CLI once ate them).
BRACKETS_TYPE = "∀ {α β} (f : α → β) {l : List α} {i : Nat} (h : i < (map f l).length), (map f l)[i] = f l[i]"
MARKUP = [
    declaration(["List", "getElem_map"], type=BRACKETS_TYPE, type_constants=["List"]),
    declaration(["Real", "sqrt"], kind="definition", type_constants=["Real"]),
    declaration(["Real", "sqrt_nonneg"], type_constants=["Real", "Real.sqrt"]),
    declaration(["NNReal", "sqrt_le"], type_constants=["NNReal.sqrt"]),
    declaration(["MeasureTheory", "Measure", "map_map"], type_constants=["MeasureTheory.Measure.map"]),
]
MARKUP.sort(key=lambda r: lean_order_key(r["components"]))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browse")
    build(folder, "sample", SAMPLE_LINES)
    build(folder, "markup", stream(MARKUP))
    return folder


@pytest.fixture(scope="module")
def engine(root: Path) -> Engine:
    served = Engine(root)
    yield served
    served.close()


def search(engine: Engine, **fields: Any) -> SearchResponse:
    fields.setdefault("environment", "SAMPLE")
    fields.setdefault("result_limit", 50)
    return engine.search(SearchRequest(**fields))


def names(response: SearchResponse) -> list[str]:
    return [r.name for r in response.results]


def test_browsing_by_namespace_and_kind_alone(engine: Engine) -> None:
    response = search(engine, namespace_prefixes=["Nat"], kinds=["theorem"])
    want = [r["name"] for r in VISIBLE if r["name"].startswith("Nat.") and r["kind"] == "theorem"]
    assert len(want) >= 5
    assert names(response) == want and response.total_matches == len(want)


def test_browsing_by_kind_alone_pages_through_everything(engine: Engine) -> None:
    want = [r["name"] for r in VISIBLE if r["kind"] == "definition"]
    got, after = [], None
    while True:
        page = search(engine, kinds=["definition"], result_limit=3, after=after)
        assert page.total_matches == len(want)
        got += names(page)
        after = page.next_cursor
        if after is None:
            break
    assert got == want


@pytest.mark.parametrize(
    ("flags", "keep"),
    [
        ({"instance": True}, lambda r: r["is_instance"]),
        ({"class": True}, lambda r: r["is_class"]),
        ({"class": True, "structure": False}, lambda r: r["is_class"] and not r["is_structure"]),
        ({"instance": False, "unsafe": True}, lambda r: not r["is_instance"] and r["is_unsafe"]),
    ],
)
def test_flag_filters_require_or_exclude(engine: Engine, flags: dict[str, bool], keep: Any) -> None:
    response = search(engine, flags=flags)
    want = [r["name"] for r in VISIBLE if keep(r)]
    assert want, "the sample has such declarations"
    assert names(response) == want
    assert {(m.filter, m.value) for m in response.results[0].match_reasons} == {
        ("flag", f"{k}={'true' if v else 'false'}") for k, v in flags.items()
    }


def test_several_name_fragments_must_all_occur(engine: Engine) -> None:
    response = search(engine, name_contains=["add", "comm"])
    assert names(response) == [r["name"] for r in VISIBLE if "add" in r["name"] and "comm" in r["name"]] == ["Nat.add_comm"]
    assert [(m.filter, m.value) for m in response.results[0].match_reasons] == [("name_contains", "add"), ("name_contains", "comm")]


def test_case_insensitive_names_fold_ascii_letters(engine: Engine) -> None:
    assert search(engine, name_contains="ADD_COMM").total_matches == 0
    response = search(engine, name_contains="ADD_COMM", case_sensitive=False)
    assert names(response) == ["Nat.add_comm"]
    folded = [r["name"] for r in VISIBLE if "list" in r["name"].lower()]
    assert names(search(engine, name_contains="LiSt", case_sensitive=False)) == folded and len(folded) > 5


def test_an_empty_name_search_suggests_close_names(engine: Engine) -> None:
    response = search(engine, environment="MARKUP", name_contains="sqrrt")
    assert response.total_matches == 0
    assert response.suggestions[:1] == ["Real.sqrt"]
    assert search(engine, environment="MARKUP", name_contains="sqrt").suggestions == []


def cli(root: Path, *args: str) -> Any:
    return CliRunner().invoke(main, [*args, "--root", str(root)], terminal_width=60)


def test_cli_repeated_name_option_means_all(root: Path) -> None:
    result = cli(root, "search", "-e", "SAMPLE", "-n", "add", "-n", "comm", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert [r["name"] for r in body["results"]] == ["Nat.add_comm"]


def test_cli_flag_and_ignore_case_options(root: Path) -> None:
    result = cli(root, "search", "-e", "SAMPLE", "--flag", "instance", "--flag", "unsafe=false", "-n", "INST", "-i", "--json")
    assert result.exit_code == 0, result.output
    want = [r["name"] for r in VISIBLE if r["is_instance"] and not r["is_unsafe"] and "inst" in r["name"].lower()]
    assert [r["name"] for r in json.loads(result.output)["results"]] == want and want
    assert cli(root, "search", "-e", "SAMPLE", "--flag", "instance=maybe").exit_code == 2


def test_cli_table_prints_signatures_as_plain_text_and_whole_names(root: Path) -> None:
    result = cli(root, "search", "-e", "MARKUP", "-n", "getElem_map")
    assert result.exit_code == 0, result.output
    # the table may fold the type column; its text, spaces aside, keeps every `[...]`
    assert "(mapfl)[i]=fl[i]" in "".join(result.output.split())
    assert any("List.getElem_map" in line for line in result.output.splitlines())


def test_cli_prints_suggestions_of_an_empty_name_search(root: Path) -> None:
    result = cli(root, "search", "-e", "MARKUP", "-n", "sqrrt")
    assert result.exit_code == 0, result.output
    assert "close names: Real.sqrt" in result.output


def test_a_partly_qualified_constant_resolves_when_one_constant_ends_with_it(engine: Engine) -> None:
    response = search(engine, environment="MARKUP", type_pattern={"constants": ["Measure.map"]})
    assert names(response) == ["MeasureTheory.Measure.map_map"] and response.unknown_constants == []
    assert [(r.given, r.resolved) for r in response.resolved_constants] == [("Measure.map", "MeasureTheory.Measure.map")]
    assert [(m.filter, m.value) for m in response.results[0].match_reasons] == [
        ("resolved_constant", "Measure.map -> MeasureTheory.Measure.map"),
        ("type_constant", "MeasureTheory.Measure.map"),
    ]


def test_an_ambiguous_partly_qualified_constant_lists_every_candidate_first(engine: Engine) -> None:
    response = search(engine, environment="MARKUP", type_pattern={"constants": ["sqrt"]})
    assert response.total_matches == 0 and response.resolved_constants == []
    [unknown] = response.unknown_constants
    assert unknown.name == "sqrt" and unknown.suggestions[:2] == ["NNReal.sqrt", "Real.sqrt"]


# A small catalog with conclusions and value constants, as the Lean extractor records them.
DEPS = [
    declaration(["Group"], kind="inductive", type_constants=[], conclusion_constants=[], is_class=True, is_structure=True, value_constants=[]),
    declaration(["Monoid"], kind="inductive", type_constants=[], conclusion_constants=[], is_class=True, value_constants=[]),
    declaration(["Int", "instGroup"], kind="definition", type_constants=["Group", "Int"], conclusion_constants=["Group", "Int"],
                conclusion_head="Group", is_instance=True, value_constants=["Group", "Int.add"]),
    declaration(["Int", "instMonoid"], kind="definition", type_constants=["Int", "Monoid"], conclusion_constants=["Int", "Monoid"],
                conclusion_head="Monoid", is_instance=True, value_constants=["Int.add", "Monoid"]),
    declaration(["Int", "add"], kind="definition", type_constants=["Int"], conclusion_constants=["Int"], conclusion_head="Int", value_constants=[]),
    declaration(["Int", "add_comm"], type_constants=["Eq", "HAdd.hAdd", "Int"], conclusion_constants=["Eq", "HAdd.hAdd", "Int"],
                conclusion_head="Eq", value_constants=["Int.add"]),
    declaration(["Int", "le_of_add"], type_constants=["Eq", "HAdd.hAdd", "Int", "LE.le"], conclusion_constants=["Int", "LE.le"],
                conclusion_head="LE.le", value_constants=["Int.add", "Int.add_comm"]),
]
DEPS.sort(key=lambda r: lean_order_key(r["components"]))


@pytest.fixture(scope="module")
def deps(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    folder = tmp_path_factory.mktemp("deps")
    build(folder, "deps", stream(DEPS))
    build(folder, "sample", SAMPLE_LINES)
    served = Engine(folder)
    yield served
    served.close()


def test_conclusion_constants_and_type_constants_together(deps: Engine) -> None:
    only_type = search(deps, environment="DEPS", type_pattern={"constants": ["HAdd.hAdd"]})
    assert names(only_type) == ["Int.add_comm", "Int.le_of_add"]
    response = search(deps, environment="DEPS", type_pattern={"constants": ["Int"], "conclusion": ["HAdd.hAdd"]})
    assert names(response) == ["Int.add_comm"]
    assert ("conclusion_constant", "HAdd.hAdd") in [(m.filter, m.value) for m in response.results[0].match_reasons]


def test_instances_of_a_class_and_its_instance_count(deps: Engine) -> None:
    assert names(search(deps, environment="DEPS", instances_of="Group")) == ["Int.instGroup"]
    group = deps.inspect(InspectRequest(environment="DEPS", declaration_name="Group"))
    assert group.instance_count == 1
    assert deps.inspect(InspectRequest(environment="DEPS", declaration_name="Int.add")).instance_count is None


def test_uses_constants_and_inspect_dependencies(deps: Engine) -> None:
    assert names(search(deps, environment="DEPS", uses_constants=["Int.add"])) == ["Int.add_comm", "Int.instGroup", "Int.instMonoid", "Int.le_of_add"]
    assert names(search(deps, environment="DEPS", uses_constants=["Int.add", "add_comm"])) == ["Int.le_of_add"]
    add = deps.inspect(InspectRequest(environment="DEPS", declaration_name="Int.add"))
    assert add.used_by_count == 4 and add.uses == ["Int"]
    lemma = deps.inspect(InspectRequest(environment="DEPS", declaration_name="Int.le_of_add"))
    assert lemma.uses == ["Eq", "HAdd.hAdd", "Int", "Int.add", "Int.add_comm", "LE.le"] and lemma.used_by_count == 0


@pytest.mark.parametrize(
    "fields",
    [{"uses_constants": ["Nat.add"]}, {"type_pattern": {"conclusion": ["Eq"]}}, {"instances_of": "Add"}],
)
def test_a_catalog_without_the_data_answers_not_recorded_never_an_empty_success(deps: Engine, fields: dict) -> None:
    with pytest.raises(LeanIndexError) as caught:
        search(deps, environment="SAMPLE", **fields)
    assert caught.value.code is ErrorCode.NOT_RECORDED
    assert caught.value.details["field"] in {"uses_constants", "type_pattern.conclusion", "instances_of"}
    sample = deps.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_comm"))
    assert sample.uses is None and sample.used_by_count is None


def test_the_python_client_takes_the_new_filters(deps: Engine) -> None:
    import leanindex

    client = leanindex.Client.local(deps.root)
    try:
        assert [r.name for r in client.search("DEPS", ("Int", "add"), uses_constants=("Int.add",)).results] == ["Int.add_comm", "Int.le_of_add"]
        assert [r.name for r in client.search("DEPS", instances_of="Monoid").results] == ["Int.instMonoid"]
        assert [e.environment for e in client.environments().environments] == ["DEPS", "SAMPLE"]
    finally:
        client.close()
