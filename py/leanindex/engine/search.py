"""Bounded search and exact inspect over one loaded catalog (DESIGN.md search/inspect contracts).

A search turns each selective filter into the sorted positions it admits (suffix-array look-up
for `name_contains`, posting lists for type constants, a key range for namespaces), intersects
them, applies the cheap per-row filters (kinds, modules), splits visible from hidden rows, and
pages through the visible ones in `pos` order, which is `Name.lt` order. Counts are exact: every
match is found before the page is cut.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..catalog.index import unique_positions
from ..errors import ErrorCode, LeanIndexError
from ..models import (
    Assurance,
    Completeness,
    INSPECT_RECORD_FIELDS,
    DeclarationFlags,
    InspectRequest,
    InspectResponse,
    MatchReason,
    SearchRequest,
    SearchResponse,
    SearchResult,
    StopReason,
    UnknownConstant,
)
from ..names import NameSyntaxError, format_name, namespace_key, parse_name, printed_namespace
from ..records import FLAG_FIELDS, KIND_ORDER, DeclarationRecord, Kind, SourceRange
from .cursor import decode_cursor, encode_cursor
from .loaded import LoadedCatalog

_EMPTY = np.empty(0, dtype=np.int64)


def _parse(name: str, field: str) -> tuple[str | int, ...]:
    try:
        return parse_name(name)
    except NameSyntaxError as error:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"{field}: {error}", {"field": field, "value": name}) from None


def _intersect(lists: list[np.ndarray], size: int) -> np.ndarray:
    """Intersection of sorted unique position arrays, starting from the shortest: binary
    search into a much longer list, a boolean membership mask otherwise."""
    lists = sorted(lists, key=len)
    result = lists[0]
    for other in lists[1:]:
        if not len(result) or not len(other):
            return _EMPTY
        if len(other) > 32 * len(result):
            at = np.searchsorted(other, result)
            at[at == len(other)] = 0
            result = result[other[at] == result]
        else:
            member = np.zeros(size, dtype=bool)
            member[other] = True
            result = result[member[result]]
    return result


def _module_matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def search(catalog: LoadedCatalog, request: SearchRequest) -> SearchResponse:
    """Run `request` on `catalog`; see `SearchResponse` for the meaning of every field.

    Raises `LeanIndexError(invalid_request)` when neither `name_contains` nor `type_pattern` is
    given, for an unreadable name in a filter, and for a cursor from another catalog or query.
    """
    if request.name_contains is None and request.type_pattern is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "give at least one of name_contains and type_pattern",
            {"fields": ["name_contains", "type_pattern"]},
        )
    index = catalog.index
    after = -1
    if request.after is not None:
        after = decode_cursor(request.after, catalog.manifest.catalog.declarations_parquet_sha256, request, index.size)
    namespace_keys = [namespace_key(_parse(p, "namespace_prefixes")) for p in request.namespace_prefixes or []]

    selective: list[np.ndarray] = []
    unknown: list[UnknownConstant] = []
    constants: list[str] = []
    if request.name_contains is not None:
        selective.append(index.positions_containing(request.name_contains))
    if request.type_pattern is not None:
        for name in dict.fromkeys(request.type_pattern.constants):
            constant_id = catalog.constant_ids.get(name)
            if constant_id is None:
                canonical = format_name(_parse(name, "type_pattern.constants"))
                constant_id = catalog.constant_ids.get(canonical)
                name = canonical
            if constant_id is None:
                unknown.append(UnknownConstant(name=name, suggestions=catalog.close_constants(name)))
                selective.append(_EMPTY)
            else:
                constants.append(name)
                selective.append(index.positions_with_constant(constant_id))
    if namespace_keys:
        selective.append(unique_positions(np.concatenate([index.positions_in_namespace(k) for k in namespace_keys]), index.size))
    matches = _intersect(selective, index.size)

    if request.kinds and len(matches):
        allowed = np.zeros(len(KIND_ORDER), dtype=bool)
        allowed[[KIND_ORDER.index(k) for k in request.kinds]] = True
        matches = matches[allowed[np.asarray(index.kind[matches])]]
    if request.module_prefixes and len(matches):
        ok = np.array(
            [any(_module_matches(m, p) for p in request.module_prefixes) for m in catalog.modules] + [False],
            dtype=bool,
        )
        matches = matches[ok[np.asarray(index.module_id[matches])]]  # id -1 lands on the final False

    hidden = np.asarray(index.hidden[matches], dtype=bool) if len(matches) else np.empty(0, dtype=bool)
    visible = matches[~hidden]
    remaining = visible[np.searchsorted(visible, after, side="right") :]
    page = remaining[: request.result_limit]
    more = len(remaining) > request.result_limit

    rows = _rows(catalog, page)
    results = [_result(rows[int(p)], request, constants) for p in page]
    digest = catalog.manifest.catalog.declarations_parquet_sha256
    return SearchResponse(
        **catalog.identity().model_dump(),
        results=results,
        stop_reason=StopReason.RESULT_LIMIT if more else StopReason.EXHAUSTED,
        completeness=Completeness.PARTIAL if more else Completeness.COMPLETE,
        assurance=Assurance.COMPUTED,
        next_cursor=encode_cursor(digest, request, int(page[-1])) if more else None,
        total_matches=int(len(visible)),
        hidden_matches=int(len(matches) - len(visible)),
        unknown_constants=unknown,
    )


def _rows(catalog: LoadedCatalog, positions: np.ndarray) -> dict[int, dict[str, Any]]:
    if not len(positions):
        return {}
    cur = catalog.cursor()
    try:
        cur.execute("SELECT pos, record FROM declarations WHERE pos = ANY($1::BIGINT[])", [positions.tolist()])
        return {pos: _decoded(record) for pos, record in cur.fetchall()}
    finally:
        cur.close()


def _decoded(record: str) -> dict[str, Any]:
    """A stored record (the validated stream line) with its namespace; the builder checked
    that the name reads back to exactly the record's components."""
    row = json.loads(record)
    row["namespace"] = printed_namespace(row["name"], row["components"])
    return row


def _range(row: dict[str, Any]) -> SourceRange | None:
    return SourceRange.model_validate(row["range"]) if row["range"] is not None else None


def _result(row: dict[str, Any], request: SearchRequest, constants: list[str]) -> SearchResult:
    reasons: list[MatchReason] = []
    if request.name_contains is not None:
        reasons.append(MatchReason(filter="name_contains", value=request.name_contains))
    reasons.extend(MatchReason(filter="type_constant", value=c) for c in constants)
    if request.namespace_prefixes:
        components = tuple(row["components"])
        for prefix in request.namespace_prefixes:
            p = parse_name(prefix)
            if components[: len(p)] == p and len(components) > len(p):
                reasons.append(MatchReason(filter="namespace_prefix", value=prefix))
    if request.kinds:
        reasons.append(MatchReason(filter="kind", value=row["kind"]))
    if request.module_prefixes and row["module"] is not None:
        reasons.extend(
            MatchReason(filter="module_prefix", value=p)
            for p in request.module_prefixes
            if _module_matches(row["module"], p)
        )
    return SearchResult(
        name=row["name"],
        kind=Kind(row["kind"]),
        type=row["type"],
        namespace=row["namespace"],
        module=row["module"],
        range=_range(row),
        match_reasons=reasons,
    )


def inspect(catalog: LoadedCatalog, request: InspectRequest) -> InspectResponse:
    """Everything the catalog holds about `request.declaration_name`.

    The name is looked up as given, then in Lean's canonical printing (so `«Nat».succ` finds
    `Nat.succ`). Raises `LeanIndexError(not_found)` with `details.suggestions` (close names)
    when it is not in the catalog, and `invalid_request` when it cannot be read as a name.
    """
    row = _row_named(catalog, request.declaration_name)
    if row is None:
        canonical = format_name(_parse(request.declaration_name, "declaration_name"))
        row = _row_named(catalog, canonical)
    if row is None:
        suggestions = catalog.close_names(request.declaration_name)
        raise LeanIndexError(
            ErrorCode.NOT_FOUND,
            f"{request.declaration_name!r} is not a declaration of {catalog.paths.profile.upper()}",
            {"declaration_name": request.declaration_name, "suggestions": suggestions},
        )
    return InspectResponse(
        **catalog.identity().model_dump(),
        # An optional field the stored line leaves out has the record model's default.
        **{name: row.get(name, DeclarationRecord.model_fields[name].get_default()) for name in INSPECT_RECORD_FIELDS},
        namespace=row["namespace"],
        flags=DeclarationFlags(**{flag: row.get(flag, False) for flag in FLAG_FIELDS}),
    )


def _row_named(catalog: LoadedCatalog, name: str) -> dict[str, Any] | None:
    cur = catalog.cursor()
    try:
        cur.execute("SELECT record FROM declarations WHERE name = ?", [name])
        row = cur.fetchone()
        return _decoded(row[0]) if row is not None else None
    finally:
        cur.close()
