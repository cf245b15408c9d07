"""The one error shape shared by every surface (library, CLI, HTTP, MCP).

Every failure leanindex reports is a `LeanIndexError` with a stable machine `code`, a message
for people and a `details` object. Adapters map codes to their own signals (HTTP status, CLI
exit status, MCP `isError`) with the tables re-exported below from `codes` (every exit status of every command is in
`OUTCOME_EXIT` or `EXIT_STATUS`); they never invent codes of their own.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from .base import Frozen

# Held pydantic-free in `codes` (a command's --help loads no models); this is their home.
from .codes import EXIT_STATUS, HTTP_STATUS, OUTCOME_EXIT, STATUS, ErrorCode, LeanIndexError, Outcome

__all__ = ["EXIT_STATUS", "HTTP_STATUS", "OUTCOME_EXIT", "STATUS", "ErrorBody", "ErrorCode", "ErrorResponse", "LeanIndexError", "Outcome"]


def _known_code(code: str) -> str:
    """`code` when it is an `ErrorCode` value; raises `ValueError` otherwise."""
    return ErrorCode(code).value


class ErrorBody(Frozen):
    """The shared error object: a stable `code`, a `message` for people, `details`."""

    # A plain string that must be an `ErrorCode` value: a body with another code is refused, and
    # the schemas list the codes as the field's enum.
    code: Annotated[str, AfterValidator(_known_code)] = Field(
        description="Stable machine code; branch on it, not on the message.",
        json_schema_extra={"enum": [code.value for code in ErrorCode]},
    )
    message: str = Field(description="What went wrong, for people.")
    details: dict[str, Any] = Field(description="Machine-readable context, e.g. `field`, `suggestions`; keys vary by code.")


class ErrorResponse(Frozen):
    """`{"error": {...}}`, the shape of every error on every surface."""

    error: ErrorBody = Field(description="The error: code, message, details.")
