"""Bounded search over one loaded catalog (DESIGN.md search contract).

A search turns each filter (`engine.filters`) into terms, each with a cheap estimate of how
many positions it admits (a suffix-array range's size for a name fragment, a posting list's
length for a constant, a key range's for namespaces, kept counts for kinds and flags), and
plans by them (`_matches`): from the smallest term, when it admits few positions, the others
only test the positions left (binary searches into sorted lists, gathers from masks, or
reading the candidates' own names for a fragment that occurs in most names); when even the
smallest admits a large share of the catalog, every term is a mask over the catalog and they
are ANDed. No row is read to filter. It then splits visible from hidden matches and pages
through the visible ones in `pos` order, which is `Name.lt` order (over a mask: counted, and the
page read from the mask after the cursor, without listing every match), or in relevance order
(`engine.relevance`; with `text`, by BM25 score first) when the request asks for it or gives
`text`. Counts are exact: every match is found before the page is cut.
What the answer can vouch for (assurance, missing modules, hidden counts) is
`engine.assurance`'s to say.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ErrorCode, LeanIndexError
from ..models import (
    MatchReason,
    SearchRequest,
    SearchResponse,
    SearchResult,
    StopReason,
)
from ..names import printed_namespace
from ..records import SEARCH_RESULT_FIELDS
from . import relevance, textrank
from .assurance import assess, completeness, hidden_count, missing_in_scope
from .cursor import decode_cursor, encode_cursor
from .filters import EMPTY, FILTERS, InstancesOf, NameContains, SearchFilter, Term, Text, TypeConstants, UsesConstants
from .loaded import LoadedCatalog

CONSTANT_FILTERS = (TypeConstants, InstancesOf, UsesConstants)


def _matches(terms: list[Term], size: int) -> np.ndarray:
    """The positions every term admits: sorted unique int64 positions when the smallest
    estimate is below `size / DENSE_FRACTION` (each other term, smallest first, only tests the
    positions left), else a bool mask over the catalog (every term's mask ANDed)."""
    terms = sorted(terms, key=lambda t: t.estimate)
    first = terms[0]
    if not first.dense_first:
        result = first.sparse()
        for term in terms[1:]:
            if not len(result):
                break
            result = result[term.probe(result)]
        return result
    mask = first.dense()
    if len(terms) > 1:
        mask = np.logical_and(mask, terms[1].dense())  # a new array: a term's mask may be the index's
        for term in terms[2:]:
            np.logical_and(mask, term.dense(), out=mask)
    return mask


def _first_set(mask: np.ndarray, after: int, count: int) -> np.ndarray:
    """Up to `count` positions after `after` where `mask` is True, in order, reading the mask
    in growing chunks from there on (not the whole of it)."""
    found: list[np.ndarray] = []
    start, chunk, have = after + 1, 4096, 0
    while start < len(mask) and have < count:
        hits = np.flatnonzero(mask[start : start + chunk]) + start
        found.append(hits)
        have += len(hits)
        start, chunk = start + chunk, chunk * 4
    return np.concatenate(found)[:count] if found else EMPTY


def search(catalog: LoadedCatalog, request: SearchRequest) -> SearchResponse:
    """Run `request` on `catalog`; see `SearchResponse` for the meaning of every field.

    Raises `LeanIndexError(invalid_request)` when no filter is given, for an unreadable name in
    a filter, and for a cursor from another catalog or query; `not_recorded` for a filter on
    what the catalog does not record (conclusions, value constants, a kind or flag its source
    never had, a text word its index dropped).
    """
    filters = [kind(catalog, request) for kind in FILTERS if kind.active(request)]
    if not filters:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "give at least one filter: " + ", ".join(f.field for f in FILTERS),
            {"fields": [f.field for f in FILTERS]},
        )
    index = catalog.index
    ranked = request.ranked()
    text = next((f for f in filters if isinstance(f, Text)), None)
    after = -1
    if request.after is not None:
        bound = relevance.key_bound(index, request) if ranked and text is None else index.size
        after = decode_cursor(request.after, catalog.manifest.catalog.declarations_parquet_sha256, request, bound)
    matches = _matches([term for f in filters for term in f.terms()], index.size)
    if matches.dtype == np.bool_:
        # A mask: counted, and in name order only the page is listed.
        visible_mask = np.logical_and(matches, index.visible_mask())
        total = int(np.count_nonzero(visible_mask))
        hidden_total = int(np.count_nonzero(matches)) - total
        visible = np.flatnonzero(visible_mask) if ranked else None
    else:
        hidden = np.asarray(index.hidden[matches], dtype=bool) if len(matches) else np.empty(0, dtype=bool)
        visible = matches[~hidden]
        total, hidden_total = int(len(visible)), int(len(matches) - len(visible))
    scores = None
    name = next((f for f in filters if isinstance(f, NameContains)), None)
    occurrences = name.occurrences if name is not None else None
    if ranked and text is not None:
        assert visible is not None
        keys = relevance.sort_keys(index, request, visible, occurrences)
        all_scores = textrank.scores(catalog.text, index, text.query, visible)
        chosen, remaining = relevance.scored_page(keys, all_scores, after, request.result_limit)
        page, scores = visible[chosen], all_scores[chosen]
        # In text order a cursor holds how far into the scored order the last result lies.
        page_keys = np.arange(after + 1, after + 1 + len(page))
        keys = keys[chosen]
        more = remaining > request.result_limit
    elif ranked:
        assert visible is not None
        page, page_keys, more = relevance.ranked_page(index, request, visible, occurrences, after, request.result_limit)
        keys = page_keys
    elif visible is None:
        # In name order a position is its own sort key.
        following = _first_set(visible_mask, after, request.result_limit + 1)
        page = following[: request.result_limit]
        page_keys = page
        more = len(following) > request.result_limit
    else:
        following = visible[np.searchsorted(visible, after, side="right") :]
        page = following[: request.result_limit]
        page_keys = page
        more = len(following) > request.result_limit

    rows = _rows(catalog, page)
    ranking = relevance.reasons(index, request, page, keys, scores) if ranked else [[] for _ in page]
    results = [_result(rows[int(p)], filters, ranking[i]) for i, p in enumerate(page)]
    digest = catalog.manifest.catalog.declarations_parquet_sha256
    assurance, approximate = assess(catalog, filters)
    missing = missing_in_scope(catalog, request)
    return SearchResponse(
        **catalog.identity().model_dump(),
        results=results,
        stop_reason=StopReason.RESULT_LIMIT if more else StopReason.EXHAUSTED,
        completeness=completeness(bool(more), missing),
        assurance=assurance,
        approximate_filters=approximate,
        missing_modules=missing,
        next_cursor=encode_cursor(digest, request, int(page_keys[-1])) if more else None,
        total_matches=total,
        hidden_matches=hidden_count(catalog, hidden_total),
        unknown_constants=[u for f in filters if isinstance(f, CONSTANT_FILTERS) for u in f.unknown],
        resolved_constants=[r for f in filters if isinstance(f, CONSTANT_FILTERS) for r in f.resolved],
        suggestions=_name_suggestions(catalog, request) if not total else [],
        unmatched_words=text.unmatched() if text is not None else [],
    )


def _name_suggestions(catalog: LoadedCatalog, request: SearchRequest) -> list[str]:
    """Close visible names for a name search that found nothing: for each fragment that no
    visible name contains, the names most similar to it (rapidfuzz)."""
    index = catalog.index
    found: list[str] = []
    for fragment in request.name_fragments():
        containing = index.positions_containing(fragment, request.case_sensitive)
        if not len(containing) or np.asarray(index.hidden[containing], dtype=bool).all():
            found.extend(catalog.close_fragments(fragment))
    return list(dict.fromkeys(found))


def _rows(catalog: LoadedCatalog, positions: np.ndarray) -> dict[int, dict[str, Any]]:
    """The result fields of each of `positions` with its namespace and position, from the
    index's result blocks (`catalog.rows`): scattered rows cost no more than adjacent ones."""
    rows = catalog.index.result_rows(positions)
    for pos, row in rows.items():
        row["namespace"] = printed_namespace(row["name"], row["components"])
        row["pos"] = pos
    return rows


def _result(row: dict[str, Any], filters: list[SearchFilter], ranking: list[MatchReason]) -> SearchResult:
    return SearchResult(
        **{field: row[field] for field in SEARCH_RESULT_FIELDS},
        namespace=row["namespace"],
        match_reasons=[reason for f in filters for reason in f.reasons(row)] + ranking,
    )
