"""Relevance order: a documented rule over the complete match set, never a black box.

Matches are ranked by, in turn:

0. with `text`, the BM25 score of its words (`catalog.text`), highest first;
1. how the name matched `name_contains` (searches without it skip this step), best hit over
   the fragments: `exact_name` (a fragment is the whole printed name), `last_component` (a
   fragment is the last component), `component_boundary` (a fragment starts a component or a
   `_`-separated word: `comm` in `Nat.add_comm`), `inside` (anywhere else);
2. the static rank of `catalog.ranking`: shorter printed names (UTF-8 bytes), fewer binders,
   more uses by other declarations, then `Name.lt`, so ties always break by `Name.lt`.

Each match's sort key is one integer, `hit * size + static_rank` (`size` declarations), unique
per declaration: a cursor holds the key of the last result and the next page is the matches
with larger keys, so cursors visit every match exactly once (in text order, where scores are
floats, the cursor holds the place of the last result in the complete sorted order instead). `reasons` lists the criteria of a
result as `relevance` match reasons.
"""

from __future__ import annotations

import functools

import numpy as np

from ..catalog.index import Occurrences, SearchIndex
from ..models import MatchReason, SearchRequest

#: The name hits, best first; the index of each is its place in the sort key.
NAME_HITS: tuple[str, ...] = ("exact_name", "last_component", "component_boundary", "inside")
_NUL, _DOT, _UNDERSCORE = 0, ord("."), ord("_")


def key_bound(index: SearchIndex, request: SearchRequest) -> int:
    """One more than the largest sort key of `request` in a catalog (a cursor's key must lie
    below it): keys carry a name hit only when the request has a name fragment."""
    return (len(NAME_HITS) if request.name_fragments() else 1) * index.size


def name_hits(index: SearchIndex, request: SearchRequest, positions: np.ndarray, occurrences: list[Occurrences] | None = None) -> np.ndarray:
    """The `NAME_HITS` index (int8) of each of `positions` (sorted, unique, all containing every
    fragment of `request.name_fragments()`); all 0 when the request has no name fragment.
    `occurrences` holds each fragment's occurrences in that order, as the name filter found
    them (`filters.NameContains.occurrences`); looked up again when not given.

    Vectorised over the occurrences, on contiguous slices only: the byte before each (the
    index's `name_sa_before`) says whether it starts the name, a component or a `_`-word, and
    the ones that end their name are a leading run of them (`catalog.index.Occurrences`). The
    best level over the fragments is kept by writing the levels worst first into one array
    over the catalog (`np.minimum.at` costs about 50 ns an element; a scatter and a gather cost
    less than finding each occurrence's owner in `positions`)."""
    fragments = request.name_fragments()
    if not fragments or not len(positions):
        return np.zeros(len(positions), dtype=np.int8)
    if occurrences is None:
        occurrences = [index.occurrences(fragment, request.case_sensitive) for fragment in fragments]
    best = np.full(index.size, len(NAME_HITS) - 1, dtype=np.int8)
    found: list[tuple[int, np.ndarray]] = []
    for occurrence in occurrences:
        before = occurrence.before
        boundary = np.flatnonzero((before == _DOT) | (before == _NUL) | (before == _UNDERSCORE))
        owners = occurrence.owners[boundary]
        # `boundary` is sorted, so the boundary occurrences that end their name lead it too.
        ending = int(np.searchsorted(boundary, occurrence.ending))
        before = before[boundary[:ending]]
        found += [(2, owners), (1, owners[:ending][before != _UNDERSCORE]), (0, owners[:ending][before == _NUL])]
    for level, hit in sorted(found, key=lambda item: -item[0]):  # worse first: a better one overwrites
        best[hit] = level
    return best[positions]


def sort_keys(index: SearchIndex, request: SearchRequest, positions: np.ndarray, occurrences: list[Occurrences] | None = None) -> np.ndarray:
    """The relevance sort key (int64) of each of `positions` (see the module docstring);
    `occurrences` as `name_hits` takes them."""
    keys = np.asarray(index.static_rank[positions], dtype=np.int64)
    if request.name_fragments():
        keys += name_hits(index, request, positions, occurrences).astype(np.int64) * index.size
    return keys


def ranked_page(
    index: SearchIndex,
    request: SearchRequest,
    positions: np.ndarray,
    occurrences: list[Occurrences] | None,
    after_key: int,
    limit: int,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Relevance order without `text`: the next page of `positions` (the visible matches,
    sorted) after sort key `after_key` (-1 before the first page): (its positions, their sort
    keys, whether more matches follow). `occurrences` as `name_hits` takes them.

    Without a name fragment a sort key is the static rank, so for many matches (more than
    `_SELECT_AT_MOST`) the page is found by walking the catalog's static order from `after_key`
    on (`static_walk`) instead of reading every match's rank; otherwise, and when the walk
    finds the matches too sparse, every match's key is computed (`sort_keys`, `page`)."""
    if not request.name_fragments() and len(positions) > _SELECT_AT_MOST:
        walked = static_walk(index, positions, after_key, limit)
        if walked is not None:
            return walked
    page_positions, page_keys, remaining = page(index, sort_keys(index, request, positions, occurrences), after_key, limit)
    return page_positions, page_keys, remaining > limit


def static_walk(index: SearchIndex, positions: np.ndarray, after_key: int, limit: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """The next page of `positions` (sorted, unique) in static rank order after rank
    `after_key`, as `ranked_page` returns it, by testing the catalog's positions in static order
    chunk by chunk (each chunk 4 times the last; the first sized to hold about twice `limit + 1`
    matches if they are spread evenly) for membership (a binary search each); None once more
    positions were tested than `positions` holds, where reading every match's rank costs less."""
    order = index.static_order()
    start = after_key + 1
    chunk = max(_WALK_CHUNK, 2 * (limit + 1) * index.size // max(len(positions), 1))
    found: list[np.ndarray] = []
    count = tested = 0
    while start < index.size and count <= limit:
        if tested and tested >= len(positions):
            return None
        candidates = order[start : start + chunk]
        at = np.searchsorted(positions, candidates)
        at[at == len(positions)] = len(positions) - 1
        hits = np.flatnonzero(positions[at] == candidates) + start
        found.append(hits)
        count += len(hits)
        tested += len(candidates)
        start, chunk = start + chunk, chunk * 4
    ranks = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
    return order[ranks[:limit]], ranks[:limit], len(ranks) > limit


def page(index: SearchIndex, keys: np.ndarray, after_key: int, limit: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The next page of matches whose sort keys are `keys`: (their positions, their keys), the
    `limit` smallest keys above `after_key` in key order, and how many keys lie above
    `after_key` in all. Never a full sort: a partial selection for a few keys, and for many a
    bitmap of the keys (unique, below `key_bound`) read chunk by chunk from `after_key` on."""
    candidates = keys[keys > after_key] if after_key >= 0 else keys
    if len(candidates) <= _SELECT_AT_MOST:
        top = np.argpartition(candidates, limit - 1)[:limit] if len(candidates) > limit else np.arange(len(candidates))
        page_keys = np.sort(candidates[top])
    else:
        bound = int(candidates.max()) + 1
        present = np.zeros(bound, dtype=bool)
        present[candidates] = True
        found: list[np.ndarray] = []
        start, chunk, count = after_key + 1, 4096, 0
        while start < bound and count < limit:
            hits = np.flatnonzero(present[start : start + chunk]) + start
            found.append(hits)
            count += len(hits)
            start, chunk = start + chunk, chunk * 4
        page_keys = np.concatenate(found)[:limit]
    return index.static_order()[page_keys % index.size], page_keys, len(candidates)


#: Up to this many keys a page is a partial selection (argpartition); beyond, a bitmap is cheaper,
#: and without a name fragment a walk over the static order (`ranked_page`).
_SELECT_AT_MOST = 32_768
#: The fewest positions the first chunk of a `static_walk` tests.
_WALK_CHUNK = 1024


def scored_page(keys: np.ndarray, scores: np.ndarray, after: int, limit: int) -> tuple[np.ndarray, int]:
    """Text order: the indices into `keys` of the next page when the matches are sorted by
    `scores` (descending) and then by `keys`, the previous page having ended at place `after` of
    that order (-1 before the first page), and how many matches lie beyond `after`. Every
    match is ordered alike on every call, so a place is a stable cursor: only the matches
    scoring at least the `after + 1 + limit`-th best score are sorted (a partial selection
    finds that score; ties at it are all kept, so the order up to it is the full order's)."""
    wanted = after + 1 + limit
    negated = -scores.astype(np.float64)
    candidates = np.arange(len(keys))
    if len(keys) > wanted:
        threshold = np.partition(negated, wanted - 1)[wanted - 1]
        candidates = np.flatnonzero(negated <= threshold)
    order = candidates[np.lexsort((keys[candidates], negated[candidates]))]
    return order[after + 1 : wanted], len(keys) - (after + 1)


def reasons(
    index: SearchIndex, request: SearchRequest, positions: np.ndarray, keys: np.ndarray, scores: np.ndarray | None = None
) -> list[list[MatchReason]]:
    """The relevance criteria of each result of a page, in rule order: the results at
    `positions` with sort keys `keys` (and BM25 `scores` in text order)."""
    positions = np.asarray(positions, dtype=np.int64)
    starts = index.name_starts
    criteria = [
        [f"name_bytes={n}" for n in (starts[positions + 1] - starts[positions] - 1).tolist()],
        [f"binders={b}" for b in index.binders[positions].tolist()],
        [f"uses={u}" for u in index.uses[positions].tolist()],
    ]
    if request.name_fragments():
        criteria.insert(0, [f"name_hit={NAME_HITS[hit]}" for hit in (np.asarray(keys, dtype=np.int64) // index.size).tolist()])
    if scores is not None:
        criteria.insert(0, [f"text_score={score:.4f}" for score in np.asarray(scores, dtype=np.float64).tolist()])
    return [[_reason(value) for value in values] for values in zip(*criteria, strict=True)]


@functools.lru_cache(maxsize=4096)
def _reason(value: str) -> MatchReason:
    """The `relevance` match reason with `value`; reasons are frozen, so one serves every
    result that shares it (most values recur: `binders=2`, `name_hit=inside`)."""
    return MatchReason(filter="relevance", value=value)
