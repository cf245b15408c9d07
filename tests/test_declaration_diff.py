"""`catalog diff OLDER NEWER`: per-declaration changes between two catalogs, checked against a
brute-force oracle over the two record lists, with pages, cursors and refusals."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leanindex.cli import main
from leanindex.engine.diff import DIFF_CATEGORIES, DIFF_LIMIT_MAX, diff_declarations, open_verified
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from leanindex.names import name_sort_key
from streamkit import build, declaration, encode, footer, header

POOL = [["A"], ["A", "b"], ["A", "c"], ["B"], ["B", "x"], ["B", "x", "y"], ["C"], ["C", 1], ["D", "e"], ["E"]]
TYPES = ["True", "True ", "  True", "Nat → Nat", "Nat  →\n  Nat", "False", "(n : Nat) : Nat", "(n m : Nat) : Nat"]
# The binders of each type above (whitespace normalized), counted by hand.
BINDERS = {"True": 0, "False": 0, "Nat → Nat": 1, "(n : Nat) : Nat": 1, "(n m : Nat) : Nat": 2}


def constants_of(type_: str) -> list[str]:
    """The test's type constants: the capitalised words of the printed type, sorted, unique."""
    return sorted(set(re.findall(r"[A-Z][A-Za-z]*", type_)))


def record(components: list, type_: str = "True", deprecated: bool = False, to: str | None = None,
           since: str | None = None) -> dict[str, Any]:
    fields: dict[str, Any] = {"type": type_, "type_constants": constants_of(type_), "is_deprecated": deprecated}
    if deprecated:
        fields.update(deprecated_to=to, deprecated_since=since)
    return declaration(components, **fields)


def catalog(root: Path, profile: str, records: list[dict[str, Any]], **header_fields: Any) -> tuple:
    ordered = sorted(records, key=lambda r: name_sort_key(r["components"]))
    lines = [encode(header(**header_fields)), *map(encode, ordered), encode(footer(len(ordered)))]
    build(root, profile, lines)
    return open_verified(root, profile)


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def oracle(old: list[dict], new: list[dict]) -> dict[str, list[str]]:
    """The rules of `diff_declarations`, written out over the two record lists (no host
    modules; a name under a module the other side does not hold is a gap, not added or removed)."""
    before, after = {r["name"]: r for r in old}, {r["name"]: r for r in new}
    held_before, held_after = {r["module"] for r in old}, {r["module"] for r in new}
    added = {n for n in after if n not in before and after[n]["module"] in held_before}
    both = [n for n in after if n in before]
    newly = [n for n in both if after[n]["is_deprecated"] and not before[n]["is_deprecated"]]
    renamed = [n for n in newly if after[n].get("deprecated_to") in after.keys() - before.keys()]
    in_order = lambda names, side: sorted(names, key=lambda n: name_sort_key(side[n]["components"]))  # noqa: E731
    differ = [n for n in both if normalize(before[n]["type"]) != normalize(after[n]["type"])]
    reprinted = [n for n in differ if before[n]["type_constants"] == after[n]["type_constants"]
                 and BINDERS[normalize(before[n]["type"])] == BINDERS[normalize(after[n]["type"])]]
    return {
        "added": in_order(added, after),
        "removed": in_order([n for n in before if n not in after and before[n]["module"] in held_after], before),
        "retyped": in_order([n for n in differ if n not in reprinted], after),
        "reprinted": in_order(reprinted, after),
        "deprecated": in_order([n for n in newly if n not in renamed], after),
        "renamed": in_order(renamed, after),
    }


def every_page(older, newer, limit: int, categories: list[str] | None = None) -> tuple[Any, list]:
    first = diff_declarations(older, newer, categories, limit)
    changes, page = list(first.changes), first
    while page.next_cursor is not None:
        assert len(page.changes) == limit
        page = diff_declarations(older, newer, categories, limit, page.next_cursor)
        changes.extend(page.changes)
    return first, changes


def side_records(draw_names: list[int], draw: Any, pool_names: list[str]) -> list[dict]:
    records = []
    for index in draw_names:
        deprecated = draw(st.booleans())
        to = draw(st.sampled_from([None, *pool_names])) if deprecated else None
        if to == POOL_NAMES[index]:
            to = None  # Lean refuses deprecating a name in favour of itself
        since = draw(st.sampled_from([None, "2025-01-01", "v4.20.0"])) if deprecated else None
        records.append(record(POOL[index], draw(st.sampled_from(TYPES)), deprecated, to, since))
    return records


POOL_NAMES = [".".join(map(str, c)) for c in POOL]


@st.composite
def catalog_pair(draw: Any) -> tuple[list[dict], list[dict]]:
    old = draw(st.lists(st.integers(0, len(POOL) - 1), unique=True, max_size=len(POOL)))
    new = draw(st.lists(st.integers(0, len(POOL) - 1), unique=True, max_size=len(POOL)))
    return side_records(old, draw, POOL_NAMES), side_records(new, draw, POOL_NAMES)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=catalog_pair(), limit=st.integers(1, 4))
def test_counts_and_pages_equal_the_oracle(pair: tuple[list[dict], list[dict]], limit: int) -> None:
    old, new = pair
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        older, newer = catalog(root, "old", old), catalog(root, "new", new)
        expected = oracle(old, new)
        first, changes = every_page(older, newer, limit)
        assert first.counts == {c: len(expected[c]) for c in DIFF_CATEGORIES}
        assert first.compared == len({r["name"] for r in old} & {r["name"] for r in new})
        gaps = first.module_gaps
        assert (gaps.declarations_only_in_older, gaps.declarations_only_in_newer) == (
            len(old) if not new else 0, len(new) if not old else 0)  # one module: a gap only when a side is empty
        assert first.not_recorded == {}
        assert [(c.category, c.name) for c in changes] == [(c, n) for c in DIFF_CATEGORIES for n in expected[c]]
        by_name = {r["name"]: r for r in new}
        for change in changes:
            if change.category in ("deprecated", "renamed"):
                assert (change.deprecated_to, change.deprecated_since) == (
                    by_name[change.name]["deprecated_to"], by_name[change.name]["deprecated_since"])
        # One category alone lists exactly that category.
        _, renamed = every_page(older, newer, limit, ["renamed"])
        assert [c.name for c in renamed] == expected["renamed"]


def test_lean_rename_pattern_is_renamed_and_a_plain_deprecation_is_deprecated(tmp_path: Path) -> None:
    old = [record(["Nat", "foo"], "Nat → Nat"), record(["Nat", "bar"]), record(["Nat", "baz"]), record(["Nat", "keep"])]
    new = [
        record(["Nat", "foo"], "Nat → Nat", True, "Nat.foo'", "2025-03-01"),  # @[deprecated Nat.foo'] theorem Nat.foo := Nat.foo'
        record(["Nat", "foo'"], "Nat → Nat"),
        record(["Nat", "bar"], "True", True, "Nat.keep", "2025-04-01"),  # replacement existed before: deprecated
        record(["Nat", "baz"], "True", True, None, None),  # no replacement
        record(["Nat", "keep"]),
    ]
    report = diff_declarations(catalog(tmp_path, "old", old), catalog(tmp_path, "new", new), limit=10)
    assert report.counts == {"added": 1, "removed": 0, "retyped": 0, "reprinted": 0, "deprecated": 2, "renamed": 1}
    listed = {(c.category, c.name): c for c in report.changes}
    renamed = listed["renamed", "Nat.foo"]
    assert (renamed.deprecated_to, renamed.deprecated_since, renamed.kind) == ("Nat.foo'", "2025-03-01", "theorem")
    assert listed["deprecated", "Nat.bar"].deprecated_to == "Nat.keep"
    assert listed["deprecated", "Nat.baz"].deprecated_to is None
    assert report.complete and report.next_cursor is None


def test_a_side_without_deprecation_gives_null_counts_and_refuses_those_lists(tmp_path: Path) -> None:
    old = [record(["A"]), record(["B"])]
    new = [record(["A"], "False"), record(["C"])]
    older = catalog(tmp_path, "old", old, approximate_fields=["is_deprecated"])
    newer = catalog(tmp_path, "new", new)
    report = diff_declarations(older, newer)
    assert report.counts == {"added": 1, "removed": 1, "retyped": 1, "reprinted": 0, "deprecated": None, "renamed": None}
    assert set(report.not_recorded) == {"deprecated", "renamed"}
    assert "OLD" in report.not_recorded["deprecated"] and "does not record deprecation" in report.not_recorded["deprecated"]
    assert report.older.deprecation_recorded is False and report.newer.deprecation_recorded is True
    assert report.categories == ["added", "removed", "retyped", "reprinted"]
    with pytest.raises(LeanIndexError) as refused:
        diff_declarations(older, newer, ["retyped", "renamed"])
    assert refused.value.code == ErrorCode.NOT_RECORDED and refused.value.details["categories"] == ["renamed"]


def test_bad_limits_categories_and_cursors_are_refused(tmp_path: Path) -> None:
    older = catalog(tmp_path, "old", [record(["A"]), record(["B"])])
    newer = catalog(tmp_path, "new", [record(["C"]), record(["D"]), record(["E"])])
    other = catalog(tmp_path, "other", [record(["C"])])
    for limit in (0, DIFF_LIMIT_MAX + 1):
        with pytest.raises(LeanIndexError) as bad:
            diff_declarations(older, newer, limit=limit)
        assert bad.value.details == {"field": "limit"}
    with pytest.raises(LeanIndexError) as bad:
        diff_declarations(older, newer, ["moved"])
    assert bad.value.details["field"] == "categories"
    cursor = diff_declarations(older, newer, limit=1).next_cursor
    assert cursor is not None
    for wrong, message in (
        ("!!", "malformed"),
        (cursor[:-3], "malformed"),
        ("eyJ2IjoxfQ", "malformed"),  # {"v":1}
    ):
        with pytest.raises(LeanIndexError, match=message) as bad:
            diff_declarations(older, newer, limit=1, after=wrong)
        assert bad.value.code == ErrorCode.INVALID_REQUEST and bad.value.details == {"field": "after"}
    with pytest.raises(LeanIndexError, match="other catalogs"):
        diff_declarations(older, other, limit=1, after=cursor)
    with pytest.raises(LeanIndexError, match="other categories"):
        diff_declarations(older, newer, ["added"], limit=1, after=cursor)


def invoke(*args: str):
    return CliRunner().invoke(main, ["catalog", "diff", *args], catch_exceptions=False)


def test_cli_json_text_folders_and_exit_status(tmp_path: Path) -> None:
    catalog(tmp_path, "old", [record(["A"]), record(["B"], "Nat")])
    catalog(tmp_path, "new", [record(["B"], "Nat  "), record(["B", "c"]), record(["D"], "True", True, "B.c", "2025-05-05")])
    catalog(tmp_path, "same", [record(["A"]), record(["B"], "Nat")])
    result = invoke("old", "new", "--root", str(tmp_path), "--json", "--limit", "1")
    assert result.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    report = json.loads(result.stdout)
    assert report["counts"] == {"added": 2, "removed": 1, "retyped": 0, "reprinted": 0, "deprecated": 0, "renamed": 0}
    assert [c["name"] for c in report["changes"]] == ["D"]  # Name.lt: a shorter prefix first
    following = json.loads(invoke("old", "new", "--root", str(tmp_path), "--json", "--after", report["next_cursor"]).stdout)
    assert [c["name"] for c in following["changes"]] == ["B.c", "A"] and following["complete"] is True
    # A catalog folder works as well as a profile id.
    text = invoke(str(tmp_path / "catalog" / "old"), "new", "--root", str(tmp_path), "--category", "removed")
    assert "removed       1" in text.stdout and "- removed    A" in text.stdout and "added         2" in text.stdout
    assert invoke("old", "same", "--root", str(tmp_path)).exit_code == 0
    assert invoke("old", "--root", str(tmp_path)).exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert invoke("old", "new", "--profile", "old", "--root", str(tmp_path)).exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert invoke("old", "nope", "--root", str(tmp_path)).exit_code == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE]
    assert invoke(str(tmp_path), "new", "--root", str(tmp_path)).exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    bad = invoke("old", "new", "--root", str(tmp_path), "--after", "xyz", "--json")
    assert bad.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and json.loads(bad.stdout)["error"]["details"] == {"field": "after"}


def test_a_catalog_that_fails_verification_is_not_diffed(tmp_path: Path) -> None:
    catalog(tmp_path, "old", [record(["A"])])
    catalog(tmp_path, "new", [record(["B"])])
    parquet = tmp_path / "catalog" / "new" / "declarations.parquet"
    parquet.write_bytes(parquet.read_bytes() + b"x")
    assert invoke("old", "new", "--root", str(tmp_path)).exit_code == EXIT_STATUS[ErrorCode.DIGEST_MISMATCH]


def test_deprecation_fields_on_a_declaration_that_is_not_deprecated_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LeanIndexError) as refused:
        catalog(tmp_path, "bad", [declaration(["A"], deprecated_to="B")])
    assert refused.value.code == ErrorCode.INVALID_STREAM and not (tmp_path / "catalog" / "bad").exists()


def test_http_mcp_and_client_give_the_engine_answer(tmp_path: Path) -> None:
    """The same diff through a real HTTP server (`Client`), MCP over streamable HTTP and the
    local `Client`; refusals keep their codes."""
    import anyio
    from mcp import Client as McpClient

    from leanindex import Client
    from leanindex.engine import Engine
    from leanindex.service.http import create_app
    from service_support import live_server

    old = [record(["A"]), record(["B"], "Nat"), record(["C"])]
    new = [record(["B"], "Int"), record(["C"], "True", True, "C'", "2025-06-01"), record(["C'"]), record(["E"])]
    older, newer = catalog(tmp_path, "old", old), catalog(tmp_path, "new", new)
    expected = [diff_declarations(older, newer, limit=2)]
    expected.append(diff_declarations(older, newer, limit=2, after=expected[0].next_cursor))
    engine = Engine(tmp_path)
    try:
        with live_server(create_app(engine)) as url, Client(url) as http_client:
            for client in (http_client, Client.local(tmp_path)):
                first = client.diff("OLD", "new", limit=2)
                assert [first, client.diff("old", "NEW", limit=2, after=first.next_cursor)] == expected
                assert [c.name for c in client.diff("old", "new", ["renamed"]).changes] == ["C"]
                assert client.diff("old", "new", "renamed") == client.diff("old", "new", ["renamed"])  # one category, not its letters
                with pytest.raises(LeanIndexError) as bad:
                    client.diff("old", "new", after="x" + expected[0].next_cursor)
                assert bad.value.code == ErrorCode.INVALID_REQUEST
                with pytest.raises(LeanIndexError) as unknown:
                    client.diff("old", "nope")
                assert unknown.value.code == ErrorCode.UNKNOWN_ENVIRONMENT
            # A parameter the route does not take is refused with its close names, never dropped (it would list every category).
            import httpx

            refused = httpx.get(f"{url}/v1/environments/old/diff/new", params={"categorys": "renamed"})
            assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_request"
            assert refused.json()["error"]["details"] == {"field": "categorys", "suggestions": ["categories"]}
            for key in ("categories", "category"):  # the field's name, and its older spelling
                assert httpx.get(f"{url}/v1/environments/old/diff/new", params={key: "renamed"}).json()["changes"][0]["name"] == "C"

            async def over_mcp() -> None:
                async with McpClient(f"{url}/mcp", cache=None) as mcp:
                    result = await mcp.call_tool("lean.catalog.diff", {"older": "old", "newer": "new", "limit": 2})
                    assert not result.is_error
                    assert result.structured_content == expected[0].model_dump(mode="json")
                    assert result.content[0].text.splitlines()[0].startswith("OLD (lean 4.35.0) -> NEW (lean 4.35.0): added 2, removed 1")

            anyio.run(over_mcp)
    finally:
        engine.close()


def test_import_docgen_module_prefixes_keep_those_modules_and_those_under_them(tmp_path: Path) -> None:
    from leanindex.docgen import import_docgen
    from test_docgen import declaration as docgen_declaration
    from test_docgen import write_module

    data = tmp_path / "data"
    for module in ("Init", "Init.Core", "Initial", "Std.Data", "Mathlib.X"):
        write_module(data, module, [docgen_declaration(f"{module}.thm")])
    result = CliRunner().invoke(
        main,
        ["catalog", "import-docgen", str(data), "--profile", "core", "--root", str(tmp_path / "root"),
         "--module-prefix", "Init", "--module-prefix", "Std", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stdout
    manifest = json.loads(result.stdout)["manifest"]
    assert manifest["module_count"] == 3 and manifest["catalog"]["declaration_count"] == 3
    _, verified = open_verified(tmp_path / "root", "core")
    assert sorted(verified.imports) == ["Init", "Init.Core", "Std.Data"]
    with pytest.raises(LeanIndexError) as refused:
        import_docgen(data, tmp_path / "other", "core", module_prefixes=["Init", "Lake"])
    assert refused.value.code == ErrorCode.INVALID_REQUEST and refused.value.details == {"module_prefixes": ["Lake"]}
    for malformed in ("", "Init.", "Init..Data", "Init.3"):
        with pytest.raises(LeanIndexError) as refused:
            import_docgen(data, tmp_path / "other", "core", module_prefixes=["Init", malformed])
        assert refused.value.code == ErrorCode.INVALID_REQUEST
        assert refused.value.details == {"field": "module_prefixes", "value": malformed}
    assert not (tmp_path / "other" / "catalog").exists()
