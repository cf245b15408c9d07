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
    `Nat.succ`). Raises `LeanIndexError(not_found)` with `details.suggestions` (close names)
    when it is not in the catalog, and `invalid_request` when it cannot be read as a name.
    """
    row = _row_named(catalog, request.declaration_name)
    if row is None:
        canonical = format_name(parse_request_name(request.declaration_name, "declaration_name"))
        row = _row_named(catalog, canonical)
    if row is None:
        suggestions = catalog.close_names(request.declaration_name)
        raise LeanIndexError(
            ErrorCode.NOT_FOUND,
            f"{request.declaration_name!r} is not a declaration of {display_profile(catalog.paths.profile)}",
            {"declaration_name": request.declaration_name, "suggestions": suggestions},
        )
    return InspectResponse(
        **catalog.identity().model_dump(),
        # An optional field the stored line leaves out has the record model's default.
        **{name: row.get(name, DeclarationRecord.model_fields[name].get_default()) for name in INSPECT_RECORD_FIELDS},
        namespace=row["namespace"],
        flags=DeclarationFlags(**{flag: row.get(flag, False) for flag in FLAG_FIELDS}),
        **_dependencies(catalog, row),
    )


def _dependencies(catalog: LoadedCatalog, row: dict[str, Any]) -> dict[str, Any]:
    """`uses` (type and value constants, sorted), `used_by_count` (declarations whose value
    uses this one) and, for a class, `instance_count` (instances whose conclusion's head it is);
    each null when the catalog does not record what it needs."""
    index = catalog.index
    constant_id = catalog.constant_ids.get(row["name"])
    values = row.get("value_constants")
    recorded = catalog.values_recorded()
    instance_count = None
    if row.get("is_class") and catalog.conclusions_recorded():
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
