"""Turn Pydantic validation failures into the shared `invalid_request` error.

Every adapter (HTTP, MCP, client) validates input with the shared request models; when a model
refuses, the caller gets `LeanIndexError(invalid_request)` whose `details.errors` lists each
problem as `{"loc": [...], "msg": "..."}` (the offending values are left out: they are the
caller's own data and may not be JSON-ready).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import ErrorCode, LeanIndexError


def invalid_request(errors: Iterable[Mapping[str, Any]], drop_prefix: Sequence[str] = ()) -> LeanIndexError:
    """An `invalid_request` error from Pydantic-style error dicts (`loc`, `msg`).

    `drop_prefix` removes leading location parts that only say where the model sat in a
    transport (FastAPI's `"body"`), so every surface names fields the same way.
    """
    problems = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        if loc[: len(drop_prefix)] == list(drop_prefix) and len(loc) > len(drop_prefix):
            loc = loc[len(drop_prefix) :]
        problems.append({"loc": loc, "msg": str(error.get("msg", "invalid value"))})
    if not problems:
        problems.append({"loc": [], "msg": "invalid request"})
    first = problems[0]
    where = ".".join(first["loc"]) or "request"
    return LeanIndexError(ErrorCode.INVALID_REQUEST, f"{where}: {first['msg']}", {"errors": problems})
