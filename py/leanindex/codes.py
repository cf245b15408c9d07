"""Error codes, outcomes and their status tables, and `LeanIndexError`, without pydantic.

`leanindex.errors` is where they are documented and imported from (it re-exports all of them
next to the error object's models); they are held here so that what a command needs to start,
its `--help`, and its exit statuses never builds pydantic models (issue 30, fast start).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import ErrorBody


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
    NOT_RECORDED = "not_recorded"
    STORAGE_FULL = "storage_full"
    IO_ERROR = "io_error"
    INTERNAL_ERROR = "internal_error"
    UNKNOWN_PROOF_STATE = "unknown_proof_state"
    FORBIDDEN_COMMAND = "forbidden_command"
    HOST_NOT_ALLOWED = "host_not_allowed"
    MISSING_MODULE = "missing_module"
    LEAN_NOT_INSTALLED = "lean_not_installed"


#: Per code, its HTTP status (used by the HTTP adapter) and its process exit status (used by
#: the CLI): the one table of both. Several refusals of a request share exit status 3; none
#: is an `OUTCOME_EXIT` status (a test checks it).
STATUS: dict[ErrorCode, tuple[int, int]] = {
    ErrorCode.INVALID_REQUEST: (400, 3),
    ErrorCode.UNKNOWN_ENVIRONMENT: (404, 4),
    ErrorCode.NOT_FOUND: (404, 5),
    ErrorCode.CATALOG_UNAVAILABLE: (503, 6),
    ErrorCode.DIGEST_MISMATCH: (503, 7),
    ErrorCode.INVALID_STREAM: (400, 8),
    ErrorCode.PAYLOAD_TOO_LARGE: (413, 3),
    ErrorCode.HEADER_MISMATCH: (400, 3),
    ErrorCode.UNAUTHORIZED: (401, 3),
    ErrorCode.CHECK_DISABLED: (404, 3),
    ErrorCode.TIMEOUT: (504, 9),
    ErrorCode.BUSY: (429, 10),
    ErrorCode.BACKEND_ERROR: (502, 11),
    ErrorCode.NOT_RECORDED: (409, 3),
    ErrorCode.STORAGE_FULL: (507, 16),
    ErrorCode.IO_ERROR: (500, 17),
    ErrorCode.INTERNAL_ERROR: (500, 18),
    ErrorCode.UNKNOWN_PROOF_STATE: (404, 5),
    ErrorCode.FORBIDDEN_COMMAND: (400, 3),
    # 421 Misdirected Request: the `Host` names a server this one is not (DNS rebinding).
    ErrorCode.HOST_NOT_ALLOWED: (421, 3),
    # The name is known (signatures link it), its module's declarations are not in the catalog.
    ErrorCode.MISSING_MODULE: (404, 20),
    # Checking needs Lean (`lake`) where the checker runs; the server is up, that part is not.
    ErrorCode.LEAN_NOT_INSTALLED: (503, 21),
}

#: HTTP status per code (`STATUS`).
HTTP_STATUS: dict[ErrorCode, int] = {code: http for code, (http, _exit) in STATUS.items()}


class Outcome(StrEnum):
    """A command's result that is not an error code: success, the interpreter's crash status,
    the argument parser's usage error, and answers that scripts branch on (a check's verdict,
    a comparison that found a difference, a set-up with missing pieces)."""

    OK = "ok"
    CRASH = "crash"
    USAGE = "usage"
    INCOMPLETE = "incomplete"
    REJECTED = "rejected"
    DRIFTED = "drifted"
    NOT_READY = "not_ready"
    ITEM_ERRORS = "item_errors"


#: Process exit status per outcome, used by the CLI. `CRASH` is what Python exits with on an
#: uncaught exception and `USAGE` what click exits with on bad arguments; they are listed so
#: that no other outcome takes them. `INCOMPLETE`/`REJECTED`: `leanindex check` verdicts;
#: `DRIFTED`: `catalog diff` and `api export --check` found a difference; `NOT_READY`: `doctor`
#: found a missing piece; `ITEM_ERRORS`: `check-batch` answered every request, some with a
#: tool error (timeout, busy, backend_error, ...) instead of a verdict, or `exists` (and
#: `inspect` of several names) answered every name, some not found.
OUTCOME_EXIT: dict[Outcome, int] = {
    Outcome.OK: 0,
    Outcome.CRASH: 1,
    Outcome.USAGE: 2,
    Outcome.INCOMPLETE: 12,
    Outcome.REJECTED: 13,
    Outcome.DRIFTED: 14,
    Outcome.NOT_READY: 15,
    Outcome.ITEM_ERRORS: 19,
}

#: Process exit status per code (`STATUS`).
EXIT_STATUS: dict[ErrorCode, int] = {code: exit_status for code, (_http, exit_status) in STATUS.items()}


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

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its three parts (a worker process raises it: `docgen.importer`); the default
        # would call `__init__(message)`.
        return (type(self), (self.code, self.message, self.details))

    def body(self) -> ErrorBody:
        """The shared error object's body (`errors.ErrorBody`, a pydantic model: imported here,
        so that raising and catching this error needs no pydantic)."""
        from .errors import ErrorBody

        return ErrorBody(code=self.code.value, message=self.message, details=self.details)

    def to_dict(self) -> dict[str, Any]:
        """The shared error object: `{"error": {"code", "message", "details"}}`."""
        from .errors import ErrorResponse

        return ErrorResponse(error=self.body()).model_dump()

    def __repr__(self) -> str:
        return f"LeanIndexError({self.code.value!r}, {self.message!r})"
