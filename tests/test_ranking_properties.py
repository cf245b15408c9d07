"""Ranked orders against the name order on generated catalogs (issue 12's property tests).

The catalogs and filters are those of `test_search_properties.py`. Text order (`text`, in
relevance order by default) must answer exactly the declarations a brute-force reading of every
record finds (any word, or every word with `text_match: "all"`), and the same declarations as the same search in name order,
with the same totals on every page, each once across the pages a cursor leads through, sorted by
the text score (`engine.textrank` scores them; this test checks the order, not the score), then
by the relevance rule written out in `test_search_properties.check_relevance` (name hit, name
bytes, binders, uses), then `Name.lt`. Relevance order without text is also run with the page
cutting forced onto the static-order walk, its chunks as small as they go, so the walk's growth
and its hand-over to reading every rank are exercised on catalogs of a few dozen declarations.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from leanindex.catalog.text import Words, query_tokens
from leanindex.engine import Engine, relevance, textrank
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from streamkit import build
from test_search_properties import BINDERS, CATALOGS, catalog_lines, check_relevance, name_hit, pages, queries, records

# Half the catalogs of the search oracle's test: these two tests share the suite's time with it.
RANKED_CATALOGS = settings(CATALOGS, max_examples=15)
# Words the generated names, types and docstrings are made of (and two that nothing holds).
WORDS = ["add", "comm", "succ", "zero", "nat", "linear", "basic", "foo", "mul", "aux", "cases", "group", "match", "bar", "baz", "qqq"]


@st.composite
def text_queries(draw: st.DrawFn, recs: list[dict[str, Any]]) -> dict[str, Any]:
    """A `text` of 1-2 words, alone or with the filters `test_search_properties.queries` draws."""
    # Mostly pieces of a generated name (split at `.`, `_` and camelCase), so texts match.
    pieces = sorted({w.lower() for r in recs for w in re.findall(r"[A-Za-z][a-z]+", r["name"])})
    words = draw(st.lists(st.sampled_from(pieces) if pieces and draw(st.integers(0, 2)) else st.sampled_from(WORDS), min_size=1, max_size=2))
    query: dict[str, Any] = {"text": " ".join(words)}
    if draw(st.booleans()):
        query["text_match"] = "all"
    if draw(st.booleans()):
        filters, _ = draw(queries(recs))
        query.update(filters)
    return query


@RANKED_CATALOGS
@given(st.data())
def test_text_order_is_a_permutation_of_name_order(data: st.DataObject) -> None:
    recs = data.draw(records(), label="records")
    with tempfile.TemporaryDirectory(prefix="leanindex-rank-") as tmp:
        build(Path(tmp), "prop", catalog_lines(recs))
        engine = Engine(tmp)
        try:
            for _ in range(10):
                query = data.draw(text_queries(recs), label="query")
                limits = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4), label="limits")
                check_text_order(engine, recs, query, limits)
        finally:
            engine.close()


def check_text_order(engine: Engine, recs: list[dict[str, Any]], query: dict[str, Any], limits: list[int]) -> None:
    """Text order visits the name order's matches once each, with the same totals, sorted by
    score, then the relevance rule, then `Name.lt`. A text with no indexable word (a name piece
    such as `on` is a stop word) is refused with `invalid_request` in either order."""
    catalog = engine.catalog("prop")
    read = textrank.TextQuery.read(catalog.text, catalog.index, query["text"])
    if not read.tokens and not read.nicknamed:
        for order in ("name", "relevance"):
            with pytest.raises(LeanIndexError) as refused:
                engine.search(SearchRequest(environment="prop", order=order, **query))
            assert refused.value.code == ErrorCode.INVALID_REQUEST
        event("a text with no indexable word")
        return
    by_name_pages = list(pages(engine, {**query, "order": "name"}, limits))
    ranked_pages = list(pages(engine, query, limits))
    by_name = [r for page in by_name_pages for r in page.results]
    ranked = [r for page in ranked_pages for r in page.results]
    totals = {(p.total_matches, p.hidden_matches) for p in by_name_pages + ranked_pages}
    assert totals == {(len(by_name), by_name_pages[0].hidden_matches)}, query
    assert len({r.name for r in ranked}) == len(ranked)
    assert sorted(r.name for r in ranked) == sorted(r.name for r in by_name), query
    if set(query) <= {"text", "text_match"}:
        assert {r.name for r in by_name} == brute_force_matches(recs, query), query
    event(f"a text query with {'0' if not ranked else '1-5' if len(ranked) <= 5 else '>5'} matches")

    position = {r["name"]: i for i, r in enumerate(recs)}
    assert [position[r.name] for r in by_name] == sorted(position[r.name] for r in by_name)
    found = np.sort(np.array([position[r.name] for r in ranked], dtype=np.int64))
    by_position = dict(zip(found.tolist(), textrank.scores(catalog.text, catalog.index, read, found).tolist()))
    score = {r.name: by_position[position[r.name]] for r in ranked}
    record = {r["name"]: r for r in recs}

    def criteria(name: str) -> tuple[float, int, int, int, int, int]:
        uses = sum(name in r["value_constants"] for r in recs)
        return -score[name], name_hit(name, query), len(name.encode()), BINDERS[record[name]["type"]], -uses, position[name]

    assert [r.name for r in ranked] == sorted((r.name for r in ranked), key=criteria), query
    if len({score[r.name] for r in ranked}) < len(ranked):
        event("a text query with tied scores")
    for r in ranked:
        reasons = [m.value for m in r.match_reasons if m.filter == "relevance"]
        assert reasons[0] == f"text_score={score[r.name]:.4f}"
        assert reasons[-3:] == [f"name_bytes={len(r.name.encode())}", f"binders={BINDERS[record[r.name]['type']]}", f"uses={-criteria(r.name)[4]}"]


def brute_force_matches(recs: list[dict[str, Any]], query: dict[str, Any]) -> set[str]:
    """The visible records having any (or, with `text_match: "all"`, every) word of the text
    in some field, each record read on its own by `catalog.text.Words`."""
    words = Words()
    wanted = {t.word for t in query_tokens(words, query["text"])}
    found = set()
    for r in recs:
        if r["is_private"] or r["is_internal"]:
            continue
        have = {w for field in words.declaration(r["name"], r.get("doc"), r["type"]).values() for w in field}
        if (wanted <= have) if query.get("text_match") == "all" else (wanted & have):
            found.add(r["name"])
    return found


@RANKED_CATALOGS
@given(st.data())
def test_relevance_order_through_the_static_walk(data: st.DataObject) -> None:
    recs = data.draw(records(), label="records")
    with tempfile.TemporaryDirectory(prefix="leanindex-rank-") as tmp:
        build(Path(tmp), "prop", catalog_lines(recs))
        engine = Engine(tmp)
        try:
            for _ in range(10):
                query, _ = data.draw(queries(recs), label="query")
                limits = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4), label="limits")
                relevance._SELECT_AT_MOST = 0
                relevance._WALK_CHUNK = data.draw(st.sampled_from([1, 2, 1024]), label="first walk chunk")
                check_relevance(engine, recs, query, limits)
        finally:
            relevance._SELECT_AT_MOST, relevance._WALK_CHUNK = 32_768, 1024
            engine.close()


def test_static_walk_grows_its_chunks_and_hands_over_when_the_matches_are_sparse() -> None:
    """On a catalog of 100 whose static order is its name order: the walk finds the page from
    the rank after the cursor's, grows its chunks (6, 24, 96 positions for 60 matches and a
    limit of 1) and gives up (None) once it tested as many positions as there are matches."""

    class Index:
        size = 100

        def static_order(self) -> np.ndarray:
            return np.arange(100, dtype=np.int64)

    index = Index()
    saved = relevance._WALK_CHUNK
    try:
        relevance._WALK_CHUNK = 1
        found, keys, more = relevance.static_walk(index, np.arange(40, 100, dtype=np.int64), -1, 1)
        assert (found.tolist(), keys.tolist(), more) == ([40], [40], True)
        found, keys, more = relevance.static_walk(index, np.arange(40, 100, dtype=np.int64), 97, 5)
        assert (found.tolist(), keys.tolist(), more) == ([98, 99], [98, 99], False)
        assert relevance.static_walk(index, np.arange(90, 100, dtype=np.int64), -1, 1) is None  # 40 tested, 10 matches
        assert relevance.static_walk(index, np.arange(60, 100, dtype=np.int64), -1, 1) is None  # 10, then 50 tested
        found, keys, more = relevance.static_walk(index, np.arange(60, 100, dtype=np.int64), 69, 3)
        assert (found.tolist(), more) == ([70, 71, 72], True)
    finally:
        relevance._WALK_CHUNK = saved
