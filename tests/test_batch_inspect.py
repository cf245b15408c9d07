"""Batch look-ups (issue 30, item 4): `lean.declaration.inspect_many` and `lean.declaration.exists`
answer 1-100 names in the order asked, each with its declaration or its own `not_found` /
`missing_module` / `invalid_request` and the catalog's closest names; a name's error never fails
the call, an unknown environment or a 101st name does.

The oracle is the stream the catalogs were built from (the raw record dicts) and the gaps the
test wrote into the manifest: which names exist, with which kind and module, which are linked
names of a missing module, which strings are no names. Two profiles are built from one stream:
`GAPPED` (its manifest records two missing modules) and `WHOLE` (none).
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from collections.abc import Iterator
from functools import cmp_to_key
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import CatalogGaps, MissingModule
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.client import Client
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from leanindex.models import LOOKUP_COUNT_KEYS, MAX_LOOKUP_NAMES, ExistsRequest, ExistsResponse, InspectManyRequest, InspectRequest
from leanindex.names import name_cmp
from leanindex.service.http import create_app
from leanindex.tools import tool_named
from streamkit import build, declaration, encode, footer, header

MODULES = ["Alpha.Core", "Alpha.Data", "Beta.Main", "Beta.Util"]
KINDS = ["theorem", "definition", "axiom", "inductive", "opaque"]
WORDS = ["add", "comm", "mul", "zero", "succ", "le", "lt", "assoc", "map", "foo", "bar", "ι"]
NAMESPACES = ["Alpha", "Beta", "Nat", "List", "Gamma"]

#: The missing modules of `GAPPED`, each with the names the catalog's signatures link in it.
GAPS = [
    MissingModule(module="Gone.Lemmas", imported_by=["Alpha.Core"], linked_names=["Gone.first", "Gone.second"], linking_declarations=2),
    MissingModule(module="Lost.Basic", imported_by=["Beta.Main"], linked_names=["Lost.thing"], linking_declarations=1),
]
LINKED = {name: gap.module for gap in GAPS for name in gap.linked_names}
#: Strings that are no Lean name (`names.parse_name` refuses each).
INVALID = ["", "Alpha..add", ".add", "add.", "«open", "Nat.«a»b"]


def _records() -> list[dict[str, Any]]:
    """About 300 declarations with random two- or three-component names (fixed seed), some
    private, some whose types link the missing modules' names."""
    rng = random.Random(30)
    names: set[tuple[str, ...]] = set()
    while len(names) < 300:
        parts = [rng.choice(NAMESPACES)] + ["_".join(rng.sample(WORDS, rng.randint(1, 2))) for _ in range(rng.randint(1, 2))]
        names.add(tuple(parts))
    # A name that needs escapes, so its canonical printing differs from a looser spelling.
    names.add(("Gamma", "with space"))
    records = []
    linked = list(LINKED)
    # The builder takes records in Lean's `Name.lt` order.
    for i, parts in enumerate(sorted(names, key=cmp_to_key(name_cmp))):
        constants = sorted(["Nat", *([linked[i % len(linked)]] if i % 50 == 0 else [])])
        records.append(
            declaration(
                list(parts), kind=rng.choice(KINDS), module=rng.choice(MODULES), type=" → ".join(constants), type_constants=constants,
                doc=f"doc {i}" if i % 3 else None, is_private=i % 17 == 0,
            )
        )
    return records


RECORDS = _records()
BY_NAME = {record["name"]: record for record in RECORDS}
#: A looser spelling of some names (every component escaped) -> the name it is read as.
ESCAPED = {".".join(f"«{c}»" for c in record["components"]): record["name"] for record in RECORDS[::37]}
#: Names close names are drawn from: the visible ones (private names are never suggested).
VISIBLE = {record["name"] for record in RECORDS if not record["is_private"]}
#: A typo (last letter changed) of some visible names -> the name meant, which `closest` offers.
TYPOS = {
    record["name"][:-1] + ("q" if record["name"][-1] != "q" else "z"): record["name"]
    for record in RECORDS[3::11]
    if record["name"] in VISIBLE and len(str(record["components"][-1])) >= 5
}
assert not set(TYPOS) & set(BY_NAME)


def _reseal(root: Path, profile: str) -> None:
    """Record `GAPS` in `profile`'s manifest (both copies), sealed again as an importer would."""
    paths = CatalogPaths.of(root, profile)
    manifest = verify_catalog(paths)
    changed = manifest.model_copy(update={"gaps": CatalogGaps(missing_modules=GAPS)}).sealed()
    for path in (paths.served_manifest, paths.manifest):
        path.write_text(changed.to_json(), encoding="utf-8")


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="leanindex-batch-") as folder:
        built = Path(folder)
        lines = [encode(header(MODULES)), *map(encode, RECORDS), encode(footer(len(RECORDS)))]
        build(built, "gapped", lines)
        _reseal(built, "gapped")
        build(built, "whole", lines)
        yield built


@pytest.fixture(scope="module")
def engine(root: Path) -> Iterator[Engine]:
    engine = Engine(root)
    yield engine
    engine.close()


def expected(name: str, environment: str) -> tuple[bool, str | None, str | None, str | None]:
    """(exists, kind, module, error_code) of `name` by the oracle (the raw records and `GAPS`)."""
    record = BY_NAME.get(name) or BY_NAME.get(ESCAPED.get(name, ""))
    if record is not None:
        return True, record["kind"], record["module"], None
    if name in INVALID:
        return False, None, None, "invalid_request"
    if environment == "GAPPED" and name in LINKED:
        return False, None, LINKED[name], "missing_module"
    return False, None, None, "not_found"


def _unknown_names() -> st.SearchStrategy[str]:
    """Readable names that are mostly not in the catalog (the oracle decides either way)."""
    part = st.sampled_from(WORDS + ["x", "y_1", "comm'"])
    return st.builds(lambda ns, parts: ".".join([ns, *parts]), st.sampled_from(NAMESPACES + ["Zeta"]), st.lists(part, min_size=1, max_size=2))


NAMES = st.one_of(
    st.sampled_from(sorted(BY_NAME)),
    st.sampled_from(sorted(ESCAPED)),
    st.sampled_from(sorted(TYPOS)),
    st.sampled_from(sorted(LINKED)),
    st.sampled_from(INVALID),
    _unknown_names(),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=MAX_LOOKUP_NAMES), environment=st.sampled_from(["GAPPED", "WHOLE"]))
def test_exists_answers_every_name_in_order_as_the_raw_records_say(engine: Engine, names: list[str], environment: str) -> None:
    answer = engine.exists(ExistsRequest(environment=environment, names=names))
    assert [r.name for r in answer.results] == names
    for result in answer.results:
        exists, kind, module, code = expected(result.name, environment)
        assert (result.exists, result.kind, result.module, result.error_code) == (exists, kind, module, code), result.name
        assert set(result.closest) <= VISIBLE and len(result.closest) <= 8
        assert result.closest == [] if exists else (result.name not in TYPOS or TYPOS[result.name] in result.closest), result.name
    codes = [expected(name, environment)[3] for name in names]
    assert answer.counts == {key: codes.count(None if key == "found" else key) for key in LOOKUP_COUNT_KEYS}
    gapped = environment == "GAPPED"
    assert answer.missing_modules == ([gap.module for gap in GAPS] if gapped else [])
    assert answer.completeness.value == ("PARTIAL" if gapped and "not_found" in codes else "COMPLETE")
    assert answer.environment == environment and answer.environment_digest == engine.catalog(environment).manifest.environment_digest


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=40), environment=st.sampled_from(["GAPPED", "WHOLE"]))
def test_inspect_many_answers_each_name_as_a_single_inspect_does(engine: Engine, names: list[str], environment: str) -> None:
    """Each entry is the single inspect's answer (or its error, word for word but for the field
    an unreadable name is blamed on and a `not_found`'s suggestions, which are the batch's close
    names), the records' fields are the raw records', and the close names are those `exists`
    gives."""
    many = engine.inspect_many(InspectManyRequest(environment=environment, names=names))
    compact = engine.exists(ExistsRequest(environment=environment, names=names))
    assert [r.name for r in many.results] == names
    assert (many.counts, many.completeness, many.missing_modules) == (compact.counts, compact.completeness, compact.missing_modules)
    for result, short in zip(many.results, compact.results, strict=True):
        exists, kind, module, code = expected(result.name, environment)
        assert result.closest == short.closest
        if exists:
            record = BY_NAME.get(result.name) or BY_NAME[ESCAPED[result.name]]
            assert result.error is None and result.response is not None
            got = result.response
            assert (got.name, got.kind.value, got.module, got.type, got.doc) == (record["name"], kind, module, record["type"], record["doc"])
            assert got.flags.is_private is record["is_private"]
            assert got == engine.inspect(InspectRequest(environment=environment, declaration_name=result.name))
            continue
        assert result.response is None and result.error is not None and result.error.code == code
        if code == "invalid_request":
            assert result.error.details["field"] == "names"
            continue
        with pytest.raises(LeanIndexError) as single:
            engine.inspect(InspectRequest(environment=environment, declaration_name=result.name))
        suggested = {"suggestions": result.closest} if code == "not_found" else {}
        assert (result.error.code, result.error.message, result.error.details) == (
            single.value.code.value, single.value.message, {**single.value.details, **suggested}
        )
        if code == "missing_module":
            assert result.error.details["module"] == module


def test_exists_finds_every_catalog_name_and_no_part_or_join_of_two(engine: Engine) -> None:
    """The name index's exact look-up (`SearchIndex.position_of`) finds each stored name at its
    position, and neither a prefix or suffix of one nor two neighbouring names joined by the
    NUL that separates them in the index."""
    catalog = engine.catalog("WHOLE")
    stored = catalog.all_names()
    assert sorted(stored) == sorted(BY_NAME)
    assert [catalog.index.position_of(name) for name in stored] == list(range(len(stored)))
    first, second = stored[10], stored[11]
    for made_up in (first[:-1], first[1:], f"{first}\x00{second}", f"{first}\x00", "\x00" + second, "\ud800"):
        assert catalog.index.position_of(made_up) is None, repr(made_up)
    answer = engine.exists(ExistsRequest(environment="WHOLE", names=[f"{first}\x00{second}"]))
    assert answer.results[0].exists is False


def test_exists_reads_no_record(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """`exists` answers from the name index: with the record read broken, found names are still
    answered, with the records' kind and module."""
    import leanindex.engine.inspect as inspect_module

    def no_record(*_: object) -> None:
        raise AssertionError("exists read a record")

    monkeypatch.setattr(inspect_module, "_stored_row", no_record)
    names = sorted(BY_NAME)[:MAX_LOOKUP_NAMES]
    answer = engine.exists(ExistsRequest(environment="GAPPED", names=names))
    assert [(r.exists, r.kind, r.module) for r in answer.results] == [(True, BY_NAME[n]["kind"], BY_NAME[n]["module"]) for n in names]


def test_a_failure_that_is_not_the_names_own_fails_the_whole_call(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only `not_found`, `missing_module` and `invalid_request` become entries: a catalog that
    fails while a batch reads it fails the call, not one name."""
    import leanindex.engine.inspect as inspect_module

    def unavailable(*_: object) -> None:
        raise LeanIndexError(ErrorCode.CATALOG_UNAVAILABLE, "gone", {})

    monkeypatch.setattr(inspect_module, "_stored_row", unavailable)
    with pytest.raises(LeanIndexError) as failed:
        engine.inspect_many(InspectManyRequest(environment="GAPPED", names=["Zeta.nothing", sorted(BY_NAME)[0]]))
    assert failed.value.code is ErrorCode.CATALOG_UNAVAILABLE


def test_a_name_over_the_limit_or_an_unknown_environment_fails_the_whole_call(engine: Engine) -> None:
    names = sorted(BY_NAME)
    for model in (ExistsRequest, InspectManyRequest):
        assert len(model(environment="WHOLE", names=names[:MAX_LOOKUP_NAMES]).names) == 100
        for refused in (names[: MAX_LOOKUP_NAMES + 1], [], ["x" * 1025]):
            with pytest.raises(ValidationError):
                model(environment="WHOLE", names=refused)
    for model, call in ((ExistsRequest, engine.exists), (InspectManyRequest, engine.inspect_many)):
        with pytest.raises(LeanIndexError) as unknown:
            call(model(environment="NOPE", names=["Nat"]))
        assert unknown.value.code is ErrorCode.UNKNOWN_ENVIRONMENT


# --- the surfaces -----------------------------------------------------------------------------------

MIX = [sorted(BY_NAME)[5], "Gone.first", "Zeta.nothing", "Alpha..add", sorted(BY_NAME)[5]]


def test_http_answers_per_name_errors_with_200_and_refuses_101_names(engine: Engine) -> None:
    app = create_app(engine)

    async def ask() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as web:
            return [
                await web.post("/v1/declarations/exists", json={"environment": "GAPPED", "names": MIX}),
                await web.post("/v1/declarations/inspect_many", json={"environment": "GAPPED", "names": MIX}),
                await web.post("/v1/declarations/exists", json={"environment": "GAPPED", "names": ["Nat"] * 101}),
                await web.post("/v1/declarations/inspect_many", json={"environment": "NOPE", "names": ["Nat"]}),
            ]

    exists, many, too_many, unknown = asyncio.run(ask())
    assert exists.status_code == 200 and [r["error_code"] for r in exists.json()["results"]] == [None, "missing_module", "not_found", "invalid_request", None]
    assert ExistsResponse.model_validate(exists.json()) == engine.exists(ExistsRequest(environment="GAPPED", names=MIX))
    assert many.status_code == 200 and [r["error"] and r["error"]["code"] for r in many.json()["results"]] == [None, "missing_module", "not_found", "invalid_request", None]
    assert (too_many.status_code, too_many.json()["error"]["code"]) == (400, "invalid_request")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "unknown_environment")


def test_client_takes_names_positionally_and_refuses_101_before_sending(root: Path, engine: Engine) -> None:
    with Client.local(root) as client:
        answer = client.exists("GAPPED", MIX)
        assert answer == engine.exists(ExistsRequest(environment="GAPPED", names=MIX))
        assert [r.name for r in client.exists("GAPPED", MIX[0]).results] == [MIX[0]]  # one plain string is one name
        assert client.call("lean_declaration_exists", environment="GAPPED", names=MIX) == answer
        many = client.inspect_many("GAPPED", MIX)
        assert many == engine.inspect_many(InspectManyRequest(environment="GAPPED", names=MIX))
        with pytest.raises(LeanIndexError) as refused:
            client.exists("GAPPED", ["Nat"] * 101)
        assert refused.value.code is ErrorCode.INVALID_REQUEST


def test_mcp_answers_exists_with_structured_content_its_output_schema_admits(engine: Engine) -> None:
    """Over MCP (the SDK's client, streamable HTTP): the exists tool lists an output schema, and its
    answer (per-name errors included) validates against it; 101 names are a tool error."""
    import anyio
    from mcp import Client as McpClient

    from service_support import live_server

    with live_server(create_app(engine)) as url:

        async def main() -> None:
            async with McpClient(f"{url}/mcp", cache=None) as client:
                listed = {tool.name: tool for tool in (await client.list_tools()).tools}
                tool = next(listed[name] for name in tool_named("lean.declaration.exists").names() if name in listed)
                assert tool.output_schema is not None
                result = await client.call_tool(tool.name, {"environment": "GAPPED", "names": MIX})
                assert not result.is_error
                jsonschema.Draft202012Validator(tool.output_schema).validate(result.structured_content)
                assert [r["exists"] for r in result.structured_content["results"]] == [True, False, False, False, True]
                assert "not complete" in result.content[0].text
                many = next(name for name in tool_named("lean.declaration.inspect_many").names() if name in listed)
                answer = await client.call_tool(many, {"environment": "GAPPED", "names": MIX})
                assert not answer.is_error and answer.structured_content["counts"]["found"] == 2
                refused = await client.call_tool(tool.name, {"environment": "GAPPED", "names": ["Nat"] * 101})
                assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_request"

        anyio.run(main)


def test_cli_inspects_several_names_and_checks_existence(root: Path) -> None:
    runner = CliRunner()
    found = sorted(BY_NAME)[5]
    single = runner.invoke(main, ["inspect", "-e", "GAPPED", found, "--root", str(root), "--json"])
    assert single.exit_code == 0 and json.loads(single.stdout)["name"] == found  # one name: the single answer, as before
    missing = runner.invoke(main, ["inspect", "-e", "GAPPED", "Zeta.nothing", "--root", str(root), "--json"])
    assert missing.exit_code == EXIT_STATUS[ErrorCode.NOT_FOUND] and json.loads(missing.stdout)["error"]["code"] == "not_found"
    several = runner.invoke(main, ["inspect", "-e", "GAPPED", *MIX, "--root", str(root), "--json"])
    assert several.exit_code == OUTCOME_EXIT[Outcome.ITEM_ERRORS]
    assert [r["name"] for r in json.loads(several.stdout)["results"]] == MIX
    text = runner.invoke(main, ["exists", "-e", "GAPPED", *MIX, "--root", str(root)])
    assert text.exit_code == OUTCOME_EXIT[Outcome.ITEM_ERRORS]
    assert text.stdout.splitlines()[1] == f"{found}: yes | {BY_NAME[found]['kind']} | {BY_NAME[found]['module']}"
    assert "Gone.first: no (missing_module, module Gone.Lemmas)" in text.stdout and "not complete" in text.stdout
    every = runner.invoke(main, ["exists", "-e", "WHOLE", found, "--root", str(root), "--json"])
    assert every.exit_code == 0 and json.loads(every.stdout)["completeness"] == "COMPLETE"
    over = runner.invoke(main, ["exists", "-e", "WHOLE", *(["Nat"] * 101), "--root", str(root), "--json"])
    assert over.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and json.loads(over.stdout)["error"]["code"] == "invalid_request"
