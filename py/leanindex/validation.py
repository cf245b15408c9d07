"""Requests from the wire: the one validation rule, and Pydantic failures as `invalid_request`.

Every adapter (HTTP, MCP) validates input with the shared request models through
`parse_request` (strict JSON: no string-to-number or string-to-boolean coercion); when a model
refuses, the caller gets `LeanIndexError(invalid_request)` whose `details.errors` lists each
problem as `{"loc": [...], "msg": "..."}` (the offending values are left out: they are the
caller's own data and may not be JSON-ready).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

import pydantic_core
from pydantic import BaseModel, ValidationError

from .errors import ErrorCode, LeanIndexError

M = TypeVar("M", bound=BaseModel)


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


def parse_request(model: type[M], data: bytes | str | Mapping[str, Any]) -> M:
    """`data` (a JSON body, or arguments already decoded from JSON such as MCP's) as a `model`
    request, validated the one way every surface validates requests from the wire: as JSON in
    Pydantic's strict mode. No coercion: `"10"` is no integer, `true` no integer, `"yes"` no
    boolean, `10.5` no integer; enum and literal fields take their JSON string values. A number
    with a zero fraction (`10.0`) is the integer it equals, as JSON Schema (and so the published
    schemas) says.

    Raises `LeanIndexError(invalid_request)` (see `invalid_request`) for anything the model
    refuses, including a body that is not JSON.
    """
    raw: bytes | str
    try:
        value = pydantic_core.from_json(data) if isinstance(data, (bytes, str)) else data
        raw = pydantic_core.to_json(_integral_floats(value))
    except ValueError:
        raw = data if isinstance(data, (bytes, str)) else b""  # not JSON: the model says why
    except pydantic_core.PydanticSerializationError as error:
        raise invalid_request([{"loc": [], "msg": f"the arguments are not JSON text: {error}"}]) from None
    try:
        return model.model_validate_json(raw, strict=True)
    except ValidationError as error:
        raise invalid_request(error.errors()) from None


def _integral_floats(value: Any) -> Any:
    """`value` with every float that equals an integer (`10.0`) as that integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats(item) for item in value]
    return value


def check_utf8_target(raw_path: bytes, query_string: bytes) -> None:
    """Refuse a request target whose percent-decoded path or query string is not UTF-8 (`%FF`),
    which servers would otherwise read as U+FFFD: the same text rule as a JSON body, whose
    invalid UTF-8 is refused. Raises `LeanIndexError(invalid_request)` with `details.part`
    (`path` or `query`) and `details.byte` (the offset in the decoded bytes)."""
    for part, raw in (("path", raw_path), ("query", query_string)):
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError as error:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"the request's {part} is not UTF-8 once percent-decoded (byte {error.start})",
                {"part": part, "byte": error.start},
            ) from None
