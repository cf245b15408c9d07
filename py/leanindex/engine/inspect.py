"""Exact inspect over one loaded catalog (DESIGN.md inspect contract)."""

from __future__ import annotations

from typing import Any

from ..errors import ErrorCode, LeanIndexError
from ..models import INSPECT_RECORD_FIELDS, DeclarationFlags, InspectRequest, InspectResponse, display_profile
from ..names import format_name
from ..records import FLAG_FIELDS, DeclarationRecord
from .filters import parse_request_name
from .loaded import LoadedCatalog
from .search import decoded_row


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
    )


def _row_named(catalog: LoadedCatalog, name: str) -> dict[str, Any] | None:
    cur = catalog.cursor()
    try:
        cur.execute("SELECT record FROM declarations WHERE name = ?", [name])
        row = cur.fetchone()
        return decoded_row(row[0]) if row is not None else None
    finally:
        cur.close()
