"""Bounded search over one loaded catalog (DESIGN.md search contract).

A search turns each selective filter (`engine.filters`) into the sorted positions it admits
(suffix-array look-up for `name_contains`, posting lists for type constants, a key range for
namespaces), intersects them, applies the per-row filters (kinds, modules), splits visible from
hidden rows, and pages through the visible ones in `pos` order, which is `Name.lt` order, or
in relevance order (`engine.relevance`; with `text`, by BM25 score first) when the request
asks for it or gives `text`. Counts are exact: every match is found before the page is cut.
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
from .filters import EMPTY, FILTERS, InstancesOf, NameContains, SearchFilter, Text, TypeConstants, UsesConstants
from .loaded import LoadedCatalog

CONSTANT_FILTERS = (TypeConstants, InstancesOf, UsesConstants)


def _intersect(lists: list[np.ndarray], size: int) -> np.ndarray:
    """Intersection of sorted unique position arrays, starting from the shortest: binary
    search into a much longer list, a boolean membership mask otherwise."""
    lists = sorted(lists, key=len)
    result = lists[0]
    for other in lists[1:]:
        if not len(result) or not len(other):
            return EMPTY
        if len(other) > 32 * len(result):
            at = np.searchsorted(other, result)
            at[at == len(other)] = 0
            result = result[other[at] == result]
        else:
            member = np.zeros(size, dtype=bool)
            member[other] = True
            result = result[member[result]]
    return result


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
    selective = [positions for f in filters for positions in f.positions()]
    if selective:
        matches = _intersect(selective, index.size)
        for f in filters:
            matches = f.narrow(matches)
    else:
        # Browsing (only row filters): one pass of each over the whole catalog's arrays.
        keep = np.ones(index.size, dtype=bool)
        for f in filters:
            mask = f.mask()
            assert mask is not None, f"{type(f).__name__} is neither selective nor a row filter"
            keep &= mask
        matches = np.flatnonzero(keep)

    hidden = np.asarray(index.hidden[matches], dtype=bool) if len(matches) else np.empty(0, dtype=bool)
    visible = matches[~hidden]
    scores = None
    name = next((f for f in filters if isinstance(f, NameContains)), None)
    occurrences = name.occurrences if name is not None else None
    if ranked and text is not None:
        keys = relevance.sort_keys(index, request, visible, occurrences)
        all_scores = textrank.scores(catalog.text, index, text.query, visible)
        chosen, remaining = relevance.scored_page(keys, all_scores, after, request.result_limit)
        page, scores = visible[chosen], all_scores[chosen]
        # In text order a cursor holds how far into the scored order the last result lies.
        page_keys = np.arange(after + 1, after + 1 + len(page))
        keys = keys[chosen]
        more = remaining > request.result_limit
    elif ranked:
        page, page_keys, more = relevance.ranked_page(index, request, visible, occurrences, after, request.result_limit)
        keys = page_keys
    else:
        # In name order a position is its own sort key.
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
        total_matches=int(len(visible)),
        hidden_matches=hidden_count(catalog, int(len(matches) - len(visible))),
        unknown_constants=[u for f in filters if isinstance(f, CONSTANT_FILTERS) for u in f.unknown],
        resolved_constants=[r for f in filters if isinstance(f, CONSTANT_FILTERS) for r in f.resolved],
        suggestions=_name_suggestions(catalog, request) if not len(visible) else [],
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
