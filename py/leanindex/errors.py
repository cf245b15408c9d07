"""The one error shape shared by every surface (library, CLI, HTTP, MCP).

Every failure leanindex reports is a `LeanIndexError` with a stable machine `code`, a message
for people and a `details` object. Adapters map codes to their own signals (HTTP status, CLI
exit code, MCP `isError`) with the tables below; they never invent codes of their own.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Stable error codes (DESIGN.md "Errors"); the values are part of the public contract."""

    INVALID_REQUEST = "invalid_request"
    UNKNOWN_ENVIRONMENT = "unknown_environment"
    NOT_FOUND = "not_found"
    CATALOG_UNAVAILABLE = "catalog_unavailable"
    DIGEST_MISMATCH = "digest_mismatch"
    INVALID_STREAM = "invalid_stream"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    HEADER_MISMATCH = "header_mismatch"
    UNAUTHORIZED = "unauthorized"
    CHECK_DISABLED = "check_disabled"
    TIMEOUT = "timeout"
    BUSY = "busy"
    BACKEND_ERROR = "backend_error"
    STORAGE_FULL = "storage_full"
    IO_ERROR = "io_error"
    INTERNAL_ERROR = "internal_error"


#: HTTP status per code, used by the HTTP adapter.
HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.UNKNOWN_ENVIRONMENT: 404,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.CATALOG_UNAVAILABLE: 503,
    ErrorCode.DIGEST_MISMATCH: 503,
    ErrorCode.INVALID_STREAM: 400,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.CHECK_DISABLED: 404,
    ErrorCode.TIMEOUT: 504,
    ErrorCode.BUSY: 429,
    ErrorCode.BACKEND_ERROR: 502,
    ErrorCode.STORAGE_FULL: 507,
    ErrorCode.IO_ERROR: 500,
    ErrorCode.INTERNAL_ERROR: 500,
}

#: Process exit status per code, used by the CLI (0 is success, 1 is reserved for crashes,
#: 2 for usage errors caught by the argument parser).
EXIT_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REQUEST: 3,
    ErrorCode.UNKNOWN_ENVIRONMENT: 4,
    ErrorCode.NOT_FOUND: 5,
    ErrorCode.CATALOG_UNAVAILABLE: 6,
    ErrorCode.DIGEST_MISMATCH: 7,
    ErrorCode.INVALID_STREAM: 8,
    ErrorCode.PAYLOAD_TOO_LARGE: 3,
    ErrorCode.HEADER_MISMATCH: 3,
    ErrorCode.UNAUTHORIZED: 3,
    ErrorCode.CHECK_DISABLED: 3,
    ErrorCode.TIMEOUT: 9,
    ErrorCode.BUSY: 10,
    ErrorCode.BACKEND_ERROR: 11,
    ErrorCode.STORAGE_FULL: 14,
    ErrorCode.IO_ERROR: 15,
    ErrorCode.INTERNAL_ERROR: 1,
}


class LeanIndexError(Exception):
    """A refusal or failure with a stable code.

    Attributes: `code` (`ErrorCode`), `message` (for people), `details` (JSON-ready dict,
    e.g. `{"suggestions": [...]}` for `not_found`, `{"line": 12}` for `invalid_stream`).
    """

    def __init__(self, code: ErrorCode, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        """The shared error object: `{"error": {"code", "message", "details"}}`."""
        return {"error": {"code": self.code.value, "message": self.message, "details": self.details}}

    def __repr__(self) -> str:
        return f"LeanIndexError({self.code.value!r}, {self.message!r})"
