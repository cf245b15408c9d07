"""What a search answer can vouch for, decided in one place from what its filters read and what
its catalog's manifest says the source records (`SourceInfo`, `Manifest.gaps`).

- `assess`: `APPROXIMATE` with the filters that read a field the source only approximates
  (`SourceInfo.approximate_fields`) and the known blind spots that concern each
  (`SourceInfo.blind_spots`), else `COMPUTED`.
- `missing_in_scope` and `completeness`: a search whose scope may reach a module the catalog
  imports or links but holds no declaration of (`CatalogGaps.missing_modules`) is `PARTIAL`
  even when its scan is exhausted.
- `hidden_count`: null when the source omits private and internal declarations (`hidden`
  among its absent facts), so no answer says `0 hidden` where nothing is known.

Filters on facts the source never had are refused when the filter is built
(`filters.require_facts`), before any of this.
"""

from __future__ import annotations

from ..catalog.manifest import HIDDEN_FACT
from ..models import ApproximateFilter, Assurance, Completeness, SearchRequest
from ..records import record_fields
from .filters import SearchFilter, module_matches
from .loaded import LoadedCatalog


def assess(catalog: LoadedCatalog, filters: list[SearchFilter]) -> tuple[Assurance, list[ApproximateFilter]]:
    """The assurance of a search of `catalog` by `filters` (the active ones, in `FILTERS`
    order) and its `approximate_filters`: one per filter that read an approximate field, with
    the blind spots of those fields (`BlindSpot.description`, in the manifest's order) whose
    constant is one the filter asks of that field, or all of that field's when it asks none."""
    source = catalog.manifest.source
    approximate = set(source.approximate_fields)
    found: list[ApproximateFilter] = []
    for f in filters:
        read = f.read()
        fields = [name for name in read if name in approximate]
        if not fields:
            continue
        spots = [
            spot.description
            for spot in source.blind_spots
            for name in _affected(spot.field, fields)
            if read[name] is None or spot.constant in (read[name] or [])
        ]
        found.append(ApproximateFilter(filter=f.field, fields=fields, blind_spots=list(dict.fromkeys(spots))))
    return (Assurance.APPROXIMATE if found else Assurance.COMPUTED), found


#: Record fields derived from the same links in a signature: a notation the source does not
#: link hides its constant from each of them, whichever one a blind spot was measured on.
LINK_FIELDS = record_fields("type_constants", "conclusion_constants", "conclusion_head")


def _affected(spot_field: str, fields: list[str]) -> list[str]:
    """The fields among `fields` that a blind spot measured on `spot_field` concerns."""
    related = LINK_FIELDS if spot_field in LINK_FIELDS else (spot_field,)
    return [name for name in fields if name in related]


def missing_in_scope(catalog: LoadedCatalog, request: SearchRequest) -> list[str]:
    """The catalog's missing modules a search by `request` may reach: all of them without
    `module_prefixes`, else those equal to or under one of its prefixes (manifest order)."""
    missing = [gap.module for gap in catalog.manifest.gaps.missing_modules]
    prefixes = request.module_prefixes
    if not prefixes:
        return missing
    return [module for module in missing if any(module_matches(module, prefix) for prefix in prefixes)]


def completeness(more: bool, missing: list[str]) -> Completeness:
    """`COMPLETE` exactly when no match is left after the page (`more` false) and no module in
    scope is missing (`missing` empty), else `PARTIAL`."""
    return Completeness.PARTIAL if more or missing else Completeness.COMPLETE


def hidden_count(catalog: LoadedCatalog, count: int) -> int | None:
    """`count` hidden matches, or None when the catalog's source never had hidden declarations."""
    return None if HIDDEN_FACT in catalog.manifest.source.absent_facts else count
