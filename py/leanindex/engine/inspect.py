"""Exact inspect over one loaded catalog (DESIGN.md inspect contract)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..errors import ErrorCode, LeanIndexError
from ..models import INSPECT_RECORD_FIELDS, DeclarationFlags, InspectRequest, InspectResponse, display_profile
from ..names import format_name, printed_namespace
from ..records import FLAG_FIELDS, DeclarationRecord
from .filters import parse_request_name
from .loaded import LoadedCatalog


def inspect(catalog: LoadedCatalog, request: InspectRequest) -> InspectResponse:
    """Everything the catalog holds about `request.declaration_name`.

    The name is looked up as given, then in Lean's canonical printing (so `«Nat».succ` finds
    `Nat.succ`). Raises `LeanIndexError`: `missing_module` when it is not in the catalog but
    is a declaration of a module the catalog lacks (known from the links in its signatures:
    `CatalogGaps.missing_modules`), with `details.module` and `details.linked_from` (up to
    `LINKED_FROM_LIMIT` visible declarations whose types mention it, in `Name.lt` order);
    `not_found` with `details.suggestions` (close names) and `details.missing_modules` (the
    modules the catalog lacks, which could declare it; empty for a catalog without gaps) when it
    is not in the catalog otherwise; `invalid_request` when it cannot be read as a name.
    """
    row = _row_named(catalog, request.declaration_name)
    canonical = request.declaration_name
    if row is None:
        canonical = format_name(parse_request_name(request.declaration_name, "declaration_name"))
        row = _row_named(catalog, canonical)
    if row is None:
        _refuse_missing_module(catalog, request.declaration_name, canonical)
        suggestions = catalog.close_names(request.declaration_name)
        missing = [gap.module for gap in catalog.manifest.gaps.missing_modules]
        # The catalog cannot rule out a declaration of a module it lacks: say so.
        caveat = f" (it lacks {len(missing)} module(s) it imports or links, which may declare it)" if missing else ""
        raise LeanIndexError(
            ErrorCode.NOT_FOUND,
            f"{request.declaration_name!r} is not a declaration of {display_profile(catalog.paths.profile)}{caveat}",
            {"declaration_name": request.declaration_name, "suggestions": suggestions, "missing_modules": missing},
        )
    return InspectResponse(
        **catalog.identity().model_dump(),
        # An optional field the stored line leaves out has the record model's default.
        **{name: row.get(name, DeclarationRecord.model_fields[name].get_default()) for name in INSPECT_RECORD_FIELDS},
        namespace=row["namespace"],
        flags=DeclarationFlags(**{flag: row.get(flag, False) for flag in FLAG_FIELDS}),
        **_dependencies(catalog, row),
    )


#: Most declarations a `missing_module` error names as linking the name.
LINKED_FROM_LIMIT = 10


def _refuse_missing_module(catalog: LoadedCatalog, given: str, canonical: str) -> None:
    """Raise `missing_module` when `given` or `canonical` is a linked name of one of the
    catalog's missing modules (see `inspect`); return otherwise."""
    for name in dict.fromkeys([given, canonical]):
        module = catalog.missing_module_of(name)
        if module is None:
            continue
        index = catalog.index
        constant_id = catalog.constant_ids.get(name)
        linking = index.positions_with_constant(constant_id, "type") if constant_id is not None else np.empty(0, dtype=np.int64)
        visible = linking[~np.asarray(index.hidden[linking], dtype=bool)] if len(linking) else linking
        names = catalog.all_names()
        linked_from = [names[int(p)] for p in visible[:LINKED_FROM_LIMIT]]
        examples = f", e.g. {', '.join(linked_from[:3])}" if linked_from else ""
        raise LeanIndexError(
            ErrorCode.MISSING_MODULE,
            f"{name!r} is a declaration of module {module}, which {display_profile(catalog.paths.profile)} imports or links "
            f"but holds no declaration of; {len(visible)} declaration(s) of the catalog mention it in their types{examples}",
            {"declaration_name": given, "module": module, "linked_from": linked_from},
        )


def _dependencies(catalog: LoadedCatalog, row: dict[str, Any]) -> dict[str, Any]:
    """`uses` (type and value constants, sorted), `used_by_count` (declarations whose value
    uses this one) and, for a class, `instance_count` (the instances the instance table lists
    for it; without that table, the instances whose conclusion's head it is); each null when
    the catalog does not record what it needs."""
    index = catalog.index
    constant_id = catalog.constant_ids.get(row["name"])
    values = row.get("value_constants")
    recorded = catalog.values_recorded()
    instance_count = None
    if row.get("is_class") and catalog.instances_recorded():
        instance_count = len(catalog.instance_positions(row["name"]))
    elif row.get("is_class") and catalog.conclusions_recorded():
        instance_count = 0
        if constant_id is not None:
            heads = np.flatnonzero(np.asarray(index.head) == constant_id)
            instance_count = int(((np.asarray(index.flags[heads]) >> FLAG_FIELDS.index("is_instance")) & 1).sum())
    return {
        "uses": sorted({*row["type_constants"], *values}) if recorded and values is not None else None,
        "used_by_count": (len(index.positions_with_constant(constant_id, "value")) if constant_id is not None else 0) if recorded else None,
        "instance_count": instance_count,
    }


def _row_named(catalog: LoadedCatalog, name: str) -> dict[str, Any] | None:
    cur = catalog.cursor()
    try:
        cur.execute("SELECT record FROM declarations WHERE name = ?", [name])
        row = cur.fetchone()
        return _decoded_row(row[0]) if row is not None else None
    finally:
        cur.close()


def _decoded_row(record: str) -> dict[str, Any]:
    """A stored record (the validated stream line) with its namespace; the builder checked
    that the name reads back to exactly the record's components."""
    row = json.loads(record)
    row["namespace"] = printed_namespace(row["name"], row["components"])
    return row
