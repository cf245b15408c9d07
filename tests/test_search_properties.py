"""Search against a brute-force oracle on generated catalogs (DESIGN.md "Search contract").

Hypothesis generates small catalogs of Lean-like declarations (shallow and deep names, numeric
components, `_private.<Module>.0.<name>`, internal names, unicode and `«»`-escaped components,
random kinds, modules, type constants and flags), builds each through the real builder into a
temporary root, and runs random queries through `Engine.search`, following every `next_cursor`
to the end, with the search planner's thresholds drawn so that every path it can take (sorted
positions or masks, binary searches or masks, names read or occurrences looked up, posting masks
kept or not) answers. The oracle below filters the generated records directly, in `Name.lt` order as
given by the transcription of Lean's `Name.cmp` in `lean_oracle.py`; it shares no code with the
engine. It checks the results and their order, `stop_reason`, `completeness`, `next_cursor`,
`total_matches`, `hidden_matches`, `match_reasons`, `unknown_constants` and the environment
identity.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lean_oracle import lean_order_key
from leanindex.catalog import index as index_module
from leanindex.engine import Engine, filters, relevance
from leanindex.models import SearchRequest
from leanindex.names import format_name
from streamkit import build, declaration, encode, footer, header

# Building a catalog costs ~0.1 s; 30 catalogs with 15 queries each keep this file to seconds.
# Under CI=true hypothesis's derandomized `ci` profile is the parent of these settings.
CATALOGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

KINDS = ["axiom", "definition", "theorem", "opaque", "quotient", "inductive", "constructor", "recursor"]
MODULES = [
    "Init.Core",
    "Init.Data.Nat.Basic",
    "Init.Data.Nat",
    "Init.DataX",
    "Mathlib.Analysis",
    "Mathlib.Analysis.Normed.Group",
    "Mathlib.AnalysisX",
    "Über.Modul",
]
CONSTANTS = ["Eq", "HAdd.hAdd", "List", "List.length", "Nat", "Nat.succ", "True", "α", "Foo.«bar baz»", "ℕ", "Int.succ"]
UNKNOWN_CONSTANTS = ["Nat.lenght", "Zzz", "List.len"]
VALUE_ONLY = ["Nat.rec", "propext"]  # constants that only values use
# Partly qualified: one known constant ends with `length`, `hAdd`, `«bar baz»`; `succ` with two.
PARTIAL_CONSTANTS = ["length", "hAdd", "«bar baz»", "succ"]

# Namespaces names are built under, and the printed prefixes queries use with the components
# the oracle takes them to mean (written out by hand, not parsed by the code under test).
NAMESPACES: list[tuple[Any, ...]] = [
    (),
    ("Nat",),
    ("Nat", "Linear"),
    ("NatCast",),
    ("Natural",),
    ("List",),
    ("α",),
    ("Foo", "bar baz"),
    ("_private", "Init", "Core", 0, "Nat"),
    ("_private", "Mathlib", "Analysis", 0),
    ("Nat", "add"),
]
PREFIXES: dict[str, tuple[Any, ...]] = {
    "Nat": ("Nat",),
    "Nat.Linear": ("Nat", "Linear"),
    "NatCast": ("NatCast",),
    "Nat.add": ("Nat", "add"),
    "«Nat»": ("Nat",),
    "List": ("List",),
    "α": ("α",),
    "Foo.«bar baz»": ("Foo", "bar baz"),
    "_private.Init.Core.0.Nat": ("_private", "Init", "Core", 0, "Nat"),
    "_private": ("_private",),
    "Nope": ("Nope",),
}
MODULE_PREFIXES = ["Init", "Init.Data", "Init.Data.Nat", "Mathlib.Analysis", "Mathlib", "Init.DataX", "Über", "Init.Core.X"]
LAST = st.one_of(
    st.sampled_from(
        ["add_comm", "add", "succ_le", "zero_add", "match_1", "proof_2", "_aux", "eq_1", "Nat", "α_mul", "ℕ", "bar baz", "a.b", "1x", "foo'", "casesOn"]
    ),
    st.integers(0, 12),
    st.text(alphabet="abzAZ_ä𝔸", min_size=1, max_size=4),
)


def is_internal_name(components: tuple[Any, ...]) -> bool:
    """Lean's `Name.isInternal` (a `_`-prefixed string component) plus `match_N`/`proof_N`/`eq_N`."""
    return any(
        isinstance(c, str) and (c.startswith("_") or re.fullmatch(r"(match|proof|eq)_\d+", c) is not None)
        for c in components
    )


@st.composite
def names(draw: st.DrawFn) -> tuple[Any, ...]:
    base = draw(st.sampled_from(NAMESPACES))
    if base and draw(st.integers(0, 4)) == 0:
        return base  # a namespace that is itself a declaration (`Nat`, `Nat.add`)
    middle = draw(st.lists(st.one_of(st.sampled_from(["Linear", "Basic", "foo", "x"]), st.integers(0, 3)), max_size=3))
    return (*base, *middle, draw(LAST))


@st.composite
def records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """1-60 declaration records in `Name.lt` order, unique names."""
    size = draw(st.integers(1, 60))  # drawn first: a plain list strategy stays near a handful
    all_names = draw(st.lists(names(), min_size=size, max_size=size, unique=True))
    all_names.sort(key=lean_order_key)
    out = []
    for components in all_names:
        private = components[0] == "_private"
        type_constants = sorted(set(draw(st.lists(st.sampled_from(CONSTANTS), max_size=6))))
        conclusion = sorted(set(draw(st.lists(st.sampled_from(type_constants), max_size=3)))) if type_constants else []
        internal = is_internal_name(components) and not private
        out.append(
            declaration(
                list(components),
                kind=draw(st.sampled_from(KINDS)),
                module=draw(st.sampled_from([*MODULES, None])),
                type=draw(st.sampled_from(sorted(BINDERS))),
                type_constants=type_constants,
                conclusion_constants=conclusion,
                conclusion_head=draw(st.sampled_from([None, *conclusion])),
                value_constants=sorted(set(draw(st.lists(st.sampled_from(CONSTANTS + VALUE_ONLY), max_size=4)))),
                is_private=private,
                is_internal=internal or draw(st.integers(0, 9)) == 0,  # ~10% marked internal by the source
                is_instance=draw(st.booleans()),
                is_class=draw(st.integers(0, 3)) == 0,
                is_structure=draw(st.integers(0, 3)) == 0,
                is_deprecated=draw(st.integers(0, 3)) == 0,
                is_unsafe=draw(st.integers(0, 5)) == 0,
                range=draw(st.one_of(st.none(), st.just({"start": {"line": 3, "column": 2}, "end": {"line": 4, "column": None}}))),
            )
        )
    return out


@st.composite
def queries(draw: st.DrawFn, recs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, tuple[Any, ...]]]:
    """Filters of one search (without environment, limit and cursor), and the components of
    each namespace prefix it uses.

    Filters are mostly drawn around one anchor record, so that queries match something and
    the near misses around it (the namespace itself, `Init.DataX` next to `Init.Data`, a
    sibling name) are exercised; the rest are drawn from fixed pools.
    """
    anchor = draw(st.sampled_from(recs))
    query: dict[str, Any] = {}
    prefixes: dict[str, tuple[Any, ...]] = {}
    choice = draw(st.sampled_from(["substring", "substring", "substring", "random", "none", "browse"]))
    fragments = []
    for _ in range(draw(st.integers(1, 2))):
        if choice == "substring":
            name = anchor["name"]
            start = draw(st.integers(0, len(name) - 1))
            end = draw(st.integers(start + 1, min(len(name), start + 3)))
            fragment = name[start:end]
            fragments.append(fragment.swapcase() if draw(st.integers(0, 3)) == 0 else fragment)
        elif choice == "random":
            fragments.append(draw(st.text(alphabet="adNA._ℕ«»𝔸1", min_size=1, max_size=2)))
    if fragments:
        query["name_contains"] = fragments[0] if len(fragments) == 1 and draw(st.booleans()) else fragments
        if draw(st.integers(0, 2)) == 0:
            query["case_sensitive"] = False
    if choice != "browse" and (draw(st.booleans()) or "name_contains" not in query):
        pool = anchor["type_constants"] if anchor["type_constants"] and draw(st.booleans()) else CONSTANTS[:6]
        constants = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))
        if draw(st.integers(0, 5)) == 0:
            constants.append(draw(st.sampled_from(CONSTANTS + UNKNOWN_CONSTANTS + PARTIAL_CONSTANTS)))
        where = draw(st.sampled_from(["constants", "constants", "conclusion", "both"]))
        if where == "both":
            query["type_pattern"] = {"constants": constants, "conclusion": draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))}
        else:
            query["type_pattern"] = {where: constants}
    if draw(st.integers(0, 5)) == 0:
        query["instances_of"] = draw(st.sampled_from([*(anchor["conclusion_constants"] or ["Nat"]), "Zzz", "length"]))
    if draw(st.integers(0, 4)) == 0:
        pool = anchor["value_constants"] or VALUE_ONLY
        query["uses_constants"] = draw(st.lists(st.sampled_from([*pool, *VALUE_ONLY, "rec", "Zzz"]), min_size=1, max_size=2))
    if draw(st.integers(0, 2)) == 0:
        chosen = []
        for _ in range(draw(st.integers(1, 2))):
            if draw(st.booleans()):
                components = tuple(anchor["components"][: draw(st.integers(1, len(anchor["components"])))])
                printed = format_name(components)
            else:
                printed = draw(st.sampled_from(sorted(PREFIXES)))
                components = PREFIXES[printed]
            prefixes[printed] = components
            chosen.append(printed)
        query["namespace_prefixes"] = chosen
    if draw(st.integers(0, 2)) == 0:
        kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4))
        query["kinds"] = [anchor["kind"], *kinds] if draw(st.booleans()) else kinds
    if draw(st.integers(0, 2)) == 0:
        modules = draw(st.lists(st.sampled_from(MODULE_PREFIXES), min_size=1, max_size=2))
        if anchor["module"] is not None and draw(st.booleans()):
            parts = anchor["module"].split(".")
            cut = ".".join(parts[: draw(st.integers(1, len(parts)))])
            # a dotted prefix matches; the same text cut inside a component does not
            modules.append(cut if draw(st.booleans()) else cut[:-1] or cut)
        query["module_prefixes"] = modules
    if draw(st.integers(0, 2)) == 0 or choice == "browse":
        keys = draw(st.lists(st.sampled_from(sorted(FLAG_KEYS)), min_size=1, max_size=3, unique=True))
        query["flags"] = {key: draw(st.booleans()) for key in keys}
    if not set(query) - {"case_sensitive"}:  # browsing needs some filter: the kind, at least
        query["kinds"] = [anchor["kind"]]
    return query, prefixes


# Printed types the records carry, with their binders counted by hand (the relevance oracle).
BINDERS = {
    "T": 0,
    "(a : α) : T": 1,
    "∀ (n m : Nat), n = m": 2,
    "Nat → Nat → Nat": 2,
    "{α : Type u} [Group α] (a b : α) : a = b": 4,
    "∀ x y z : ℕ, x = z → True": 4,
}

# Written out by hand: the flag keys of a search and the record fields they read.
FLAG_KEYS = {"instance": "is_instance", "class": "is_class", "structure": "is_structure", "deprecated": "is_deprecated", "unsafe": "is_unsafe"}


def ascii_lower(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


# --- the oracle -----------------------------------------------------------------------------------


@dataclass
class Expected:
    visible: list[dict[str, Any]]
    hidden: int
    reasons: dict[str, list[dict[str, str]]]
    unknown: list[str]
    resolved: list[dict[str, str]]


def module_under(module: str | None, prefix: str) -> bool:
    return module is not None and (module == prefix or module.startswith(prefix + "."))


def expected(recs: list[dict[str, Any]], query: dict[str, Any], prefixes: dict[str, tuple[Any, ...]]) -> Expected:
    """Scan every record in order and keep those matching every filter; `prefixes` gives the
    components of each namespace prefix."""
    in_types = {c for r in recs for c in r["type_constants"]}
    in_values = {c for r in recs for c in r["value_constants"]}
    unknown: list[str] = []
    resolved: list[dict[str, str]] = []

    def lookup(given: list[str], known: set[str]) -> list[str]:
        wanted: list[str] = []
        for c in dict.fromkeys(given):
            ending = sorted(k for k in known if k.endswith("." + c))
            found = c if c in known else ending[0] if len(ending) == 1 else None
            if found is None:
                unknown.append(c)
                continue
            if found != c:
                resolved.append({"given": c, "resolved": found})
            if found not in wanted:
                wanted.append(found)
        return wanted

    pattern = query.get("type_pattern", {})
    wanted = lookup(pattern.get("constants", []), in_types)
    wanted_conclusion = lookup(pattern.get("conclusion", []), in_types)
    resolved_type = list(resolved)
    instance_class = lookup([query["instances_of"]], in_types) if "instances_of" in query else []
    resolved_class = resolved[len(resolved_type) :]
    uses = lookup(query.get("uses_constants", []), in_values)
    resolved_uses = resolved[len(resolved_type) + len(resolved_class) :]
    visible, hidden, reasons = [], 0, {}
    for r in recs:
        why: list[dict[str, str]] = []
        components = tuple(r["components"])
        if "name_contains" in query:
            given = query["name_contains"]
            fragments = list(dict.fromkeys([given] if isinstance(given, str) else given))
            fold = ascii_lower if query.get("case_sensitive") is False else (lambda text: text)
            if not all(fold(f) in fold(r["name"]) for f in fragments):
                continue
            why += [{"filter": "name_contains", "value": f} for f in fragments]
        if unknown:
            continue
        if "type_pattern" in query:
            if not all(c in r["type_constants"] for c in wanted) or not all(c in r["conclusion_constants"] for c in wanted_conclusion):
                continue
            why += [{"filter": "resolved_constant", "value": f"{x['given']} -> {x['resolved']}"} for x in resolved_type]
            why += [{"filter": "type_constant", "value": c} for c in wanted]
            why += [{"filter": "conclusion_constant", "value": c} for c in wanted_conclusion]
        if "instances_of" in query:
            if not (r["is_instance"] and r["conclusion_head"] == instance_class[0]):
                continue
            why += [{"filter": "resolved_constant", "value": f"{x['given']} -> {x['resolved']}"} for x in resolved_class]
            why.append({"filter": "instance_of", "value": instance_class[0]})
        if "uses_constants" in query:
            if not all(c in r["value_constants"] for c in uses):
                continue
            why += [{"filter": "resolved_constant", "value": f"{x['given']} -> {x['resolved']}"} for x in resolved_uses]
            why += [{"filter": "uses_constant", "value": c} for c in uses]
        if "namespace_prefixes" in query:
            hits = [
                p
                for p in query["namespace_prefixes"]  # a repeated prefix gives its reason each time
                if len(components) > len(prefixes[p]) and components[: len(prefixes[p])] == prefixes[p]
            ]
            if not hits:
                continue
            why += [{"filter": "namespace_prefix", "value": p} for p in hits]
        if "kinds" in query:
            if r["kind"] not in query["kinds"]:
                continue
            why.append({"filter": "kind", "value": r["kind"]})
        if "module_prefixes" in query:
            hits = [p for p in query["module_prefixes"] if module_under(r["module"], p)]
            if not hits:
                continue
            why += [{"filter": "module_prefix", "value": p} for p in hits]
        if "flags" in query:
            if any(r[FLAG_KEYS[key]] != value for key, value in query["flags"].items()):
                continue
            # in the order of the request model's keys, whatever order the query gave them in
            why += [
                {"filter": "flag", "value": f"{key}={'true' if query['flags'][key] else 'false'}"} for key in FLAG_KEYS if key in query["flags"]
            ]
        if r["is_private"] or r["is_internal"]:
            hidden += 1
        else:
            visible.append(r)
            reasons[r["name"]] = why
    return Expected(visible, hidden, reasons, unknown, resolved)


def expected_result(r: dict[str, Any], reasons: list[dict[str, str]]) -> dict[str, Any]:
    components = r["components"]
    return {
        "name": r["name"],
        "kind": r["kind"],
        "type": r["type"],
        "namespace": format_name(components[:-1]) if len(components) > 1 else None,
        "module": r["module"],
        "range": r["range"],
        # The record's links as stored (absent from a record: null).
        "source_url": r.get("source_url"),
        "doc_url": r.get("doc_url"),
        "match_reasons": reasons,
    }


def catalog_lines(recs: list[dict[str, Any]]) -> list[bytes]:
    modules = sorted({r["module"] for r in recs if r["module"] is not None})
    return [encode(header(modules)), *map(encode, recs), encode(footer(len(recs)))]


# The search planner's thresholds (engine.filters, catalog.index): as shipped, and at the ends
# that force one path each: every term answered as sorted positions (DENSE_FRACTION 0) with
# name fragments probed by reading the candidates' names (NAME_PROBE_RATIO 0) and sorted lists
# by binary search (PROBE_SEARCH_RATIO 0); sorted positions probed through masks, no posting
# mask kept; every term answered as a mask (DENSE_FRACTION 10**9).
SHIPPED_PLAN = {
    "DENSE_FRACTION": filters.DENSE_FRACTION,
    "PROBE_SEARCH_RATIO": filters.PROBE_SEARCH_RATIO,
    "NAME_PROBE_RATIO": filters.NAME_PROBE_RATIO,
    "KEPT_MASK_BYTES": index_module.KEPT_MASK_BYTES,
    "KEPT_FRAGMENT_FRACTION": filters.KEPT_FRAGMENT_FRACTION,
}
PLANS = [
    SHIPPED_PLAN,
    {**SHIPPED_PLAN, "DENSE_FRACTION": 0, "NAME_PROBE_RATIO": 0, "PROBE_SEARCH_RATIO": 0},
    {**SHIPPED_PLAN, "DENSE_FRACTION": 0, "NAME_PROBE_RATIO": 10**9, "PROBE_SEARCH_RATIO": 10**9, "KEPT_MASK_BYTES": 0},
    {**SHIPPED_PLAN, "DENSE_FRACTION": 10**9},
    # Every fragment's mask kept once built, and read back as sorted positions and probes.
    {**SHIPPED_PLAN, "DENSE_FRACTION": 0, "KEPT_FRAGMENT_FRACTION": 10**9, "NAME_PROBE_RATIO": 10**9},
]


def use_plan(plan: dict[str, int]) -> None:
    """Set the planner's thresholds (see `PLANS`)."""
    for name, value in plan.items():
        setattr(index_module if name == "KEPT_MASK_BYTES" else filters, name, value)


@CATALOGS
@given(st.data())
def test_search_matches_the_oracle(data: st.DataObject) -> None:
    recs = data.draw(records(), label="records")
    with tempfile.TemporaryDirectory(prefix="leanindex-prop-") as tmp:
        manifest = build(Path(tmp), "prop", catalog_lines(recs))
        engine = Engine(tmp)
        try:
            for _ in range(15):
                query, prefixes = data.draw(queries(recs), label="query")
                limits = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4), label="limits")
                # Every path of the planner: sorted positions, masks, name reads, kept masks.
                for plan in PLANS:
                    use_plan(plan)
                    check_query(engine, manifest.environment_digest, recs, query, prefixes, limits)
                use_plan(data.draw(st.sampled_from(PLANS), label="plan"))
                # Both ways of cutting a relevance page: partial selection and the key bitmap.
                relevance._SELECT_AT_MOST = data.draw(st.sampled_from([0, 32_768]), label="select at most")
                check_relevance(engine, recs, query, limits)
        finally:
            relevance._SELECT_AT_MOST = 32_768
            use_plan(SHIPPED_PLAN)
            engine.close()


def check_query(
    engine: Engine,
    digest: str,
    recs: list[dict[str, Any]],
    query: dict[str, Any],
    prefixes: dict[str, tuple[Any, ...]],
    limits: list[int],
) -> None:
    oracle = expected(recs, query, prefixes)
    want = [expected_result(r, oracle.reasons[r["name"]]) for r in oracle.visible]
    got: list[dict[str, Any]] = []
    cursor: str | None = None
    page = 0
    while True:
        limit = limits[page % len(limits)]  # the limit may change between pages
        environment = "prop" if page % 2 else "PROP"  # ids are case-insensitive, cursors too
        response = engine.search(SearchRequest(environment=environment, result_limit=limit, after=cursor, **query))
        body = json.loads(response.model_dump_json())
        assert body["environment"] == "PROP"
        assert body["environment_digest"] == digest
        assert body["total_matches"] == len(oracle.visible), query
        assert body["hidden_matches"] == oracle.hidden, query
        assert body["assurance"] == "COMPUTED"
        assert [u["name"] for u in body["unknown_constants"]] == oracle.unknown
        assert body["resolved_constants"] == oracle.resolved
        remaining = len(want) - len(got)
        assert len(body["results"]) == min(limit, remaining)
        if remaining > limit:
            assert (body["stop_reason"], body["completeness"]) == ("RESULT_LIMIT", "PARTIAL")
            assert body["next_cursor"]
        else:  # exactly `limit` matches left is EXHAUSTED, not RESULT_LIMIT
            assert (body["stop_reason"], body["completeness"], body["next_cursor"]) == ("EXHAUSTED", "COMPLETE", None)
        got += body["results"]
        cursor = body["next_cursor"]
        page += 1
        if cursor is None:
            break
        assert page <= len(recs), "the cursor does not advance"
    event(f"a query with {'0' if not want else '1-5' if len(want) <= 5 else '>5'} matches")
    event(f"a query with {min(page, 3)} pages")
    if oracle.hidden:
        event("a query with hidden matches")
    if oracle.unknown:
        event("a query with unknown constants")
    assert [r["name"] for r in got] == [r["name"] for r in want], query
    assert got == want, query


def name_hit(name: str, query: dict[str, Any]) -> int:
    """The relevance rule's name hit, by brute force over every occurrence of every fragment:
    0 the whole name, 1 the last component, 2 the start of a component or `_`-word, 3 inside."""
    given = query.get("name_contains")
    if given is None:
        return 0
    fold = ascii_lower if query.get("case_sensitive") is False else (lambda text: text)
    text, best = fold(name), 3
    for fragment in [given] if isinstance(given, str) else given:
        fragment = fold(fragment)
        for start in range(len(text) - len(fragment) + 1):
            if not text.startswith(fragment, start):
                continue
            before = text[start - 1] if start else ""
            end = start + len(fragment)
            if before == "" and end == len(text):
                best = min(best, 0)
            elif before in ("", ".") and end == len(text):
                best = min(best, 1)
            elif before in ("", ".", "_"):
                best = min(best, 2)
    return best


def check_relevance(engine: Engine, recs: list[dict[str, Any]], query: dict[str, Any], limits: list[int]) -> None:
    """Relevance order visits the name order's matches once each, with the same totals, in the
    documented order: name hit, name bytes, binders, uses (declarations whose value mentions the
    name; every record here has its value constants), then `Name.lt`."""
    by_name = [r for page in pages(engine, query, limits) for r in page.results]
    ranked_pages = list(pages(engine, {**query, "order": "relevance"}, limits))
    ranked = [r for page in ranked_pages for r in page.results]
    assert sorted(r.name for r in ranked) == sorted(r.name for r in by_name)
    assert len({r.name for r in ranked}) == len(ranked)
    assert {p.total_matches for p in ranked_pages} == {ranked_pages[0].total_matches}
    position = {r["name"]: i for i, r in enumerate(recs)}
    record = {r["name"]: r for r in recs}

    def criteria(name: str) -> tuple[int, int, int, int, int]:
        uses = sum(name in r["value_constants"] for r in recs)
        return name_hit(name, query), len(name.encode()), BINDERS[record[name]["type"]], -uses, position[name]

    assert [r.name for r in ranked] == sorted((r.name for r in ranked), key=criteria), query
    for r in ranked:
        hit, name_bytes, binders, uses, _ = criteria(r.name)
        want = [f"name_bytes={name_bytes}", f"binders={binders}", f"uses={-uses}"]
        if "name_contains" in query:
            want.insert(0, f"name_hit={['exact_name', 'last_component', 'component_boundary', 'inside'][hit]}")
        assert [m.value for m in r.match_reasons if m.filter == "relevance"] == want


def pages(engine: Engine, query: dict[str, Any], limits: list[int]) -> Any:
    """Every page of a search, following the cursor (the limit changing between pages)."""
    cursor, page = None, 0
    while True:
        response = engine.search(SearchRequest(environment="prop", result_limit=limits[page % len(limits)], after=cursor, **query))
        yield response
        cursor, page = response.next_cursor, page + 1
        if cursor is None:
            return
        assert page <= 100, "the cursor does not advance"
