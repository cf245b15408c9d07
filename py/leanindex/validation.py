"""Requests from the wire: the one validation rule, Pydantic failures as `invalid_request`, and
the one rule of close names for a misspelt field, parameter or option.

Every adapter (HTTP, MCP) validates input with the shared request models through
`parse_request` (strict JSON: no string-to-number or string-to-boolean coercion); when a model
refuses, the caller gets `LeanIndexError(invalid_request)` whose `details.errors` lists each
problem as `{"loc": [...], "msg": "..."}` (the offending values are left out: they are the
caller's own data and may not be JSON-ready). An unknown field's problem also carries
`suggestions`, the model's close field names (`close_names`), and so does `details`: `limit`
gets `did you mean result_limit?` on every surface (CLI flags, query parameters, JSON bodies,
MCP arguments, `Client` keywords).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any, TypeVar, get_args
from urllib.parse import unquote_to_bytes

import pydantic_core
from pydantic import BaseModel, ValidationError

from .errors import ErrorCode, LeanIndexError

M = TypeVar("M", bound=BaseModel)

#: Most close names one unknown name gets.
CLOSE_NAMES = 3
#: Similarity (difflib's ratio, 0-1) above which a whole known name is close to the given one ...
_WHOLE_CUTOFF = 0.6
#: ... and at which one word of it (`limit` of `result_limit`) is.
_WORD_CUTOFF = 0.75
_WORD_SEPARATORS = re.compile(r"[_.]")


def _spelling(name: str) -> str:
    """`name` as compared: without leading dashes or case, `-` read as `_` (`--Result-Limit` is
    `result_limit`)."""
    return name.lstrip("-").replace("-", "_").lower()


def _closeness(given: str, known: str) -> float:
    """How close spelling `given` is to spelling `known`, 0 (not close) to 1 (the same): difflib's
    ratio against the whole name, or a little less against one of its words (`limit` for
    `result_limit`), or 0.75 when `known` starts with `given` (3 characters at least) or is one
    of its words (`names` in `declaration_names`)."""
    if given == known:
        return 1.0
    whole = SequenceMatcher(None, given, known).ratio()
    best = whole if whole > _WHOLE_CUTOFF else 0.0
    for word in _WORD_SEPARATORS.split(known):
        ratio = SequenceMatcher(None, given, word).ratio() if len(word) >= 3 else 0.0
        if ratio >= _WORD_CUTOFF:
            best = max(best, 0.95 * ratio)  # below a whole name as close
    # The other way round: a known name that is one word of the given one
    # (`declaration_names` for the batch tools' `names`).
    if len(known) >= 4 and known in _WORD_SEPARATORS.split(given):
        best = max(best, _WORD_CUTOFF)
    if len(given) >= 3 and known.startswith(given):
        best = max(best, _WORD_CUTOFF)
    return best


def close_names(given: str, known: Iterable[str] | Mapping[str, str], limit: int = CLOSE_NAMES) -> list[str]:
    """The names of `known` closest to the unknown name `given`, best first (ties in `known`'s
    order), at most `limit`; empty when none is close. The one rule of close names for fields,
    query parameters, CLI options and tools.

    `known` is a list of names, or a mapping from each accepted spelling (an alias such as
    `limit`, a flag such as `--result-limit`) to the name to suggest for it. Spellings are
    compared without case or leading dashes, with `-` as `_`; a name is close when difflib's
    ratio against it is above 0.6, against one of its `_`/`.`-separated words at least 0.75
    (`limit` is close to `result_limit`, `namespace` to `namespace_prefixes`), or when it starts
    with `given` (3 characters at least: `env` for `environment`).
    """
    spellings = known if isinstance(known, Mapping) else {name: name for name in known}
    wanted = _spelling(given)
    scores: dict[str, float] = {}
    for spelling, name in spellings.items():
        score = _closeness(wanted, _spelling(spelling)) if wanted else 0.0
        if score > scores.get(name, 0.0):
            scores[name] = score
    order = {name: index for index, name in enumerate(dict.fromkeys(spellings.values()))}
    return sorted(scores, key=lambda name: (-scores[name], order[name]))[:limit]


def did_you_mean(names: Sequence[str]) -> str:
    """`did you mean a, b or c?` for close names (empty for none), to end a message with."""
    if not names:
        return ""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"did you mean {listed}?"


def unknown_name_error(what: str, given: str, known: Iterable[str] | Mapping[str, str]) -> LeanIndexError:
    """`LeanIndexError(invalid_request)` for the unknown `given` (`what` says what it is, e.g.
    `query parameter`), its message ending with the close names of `known` (`close_names`), or
    listing `known` when none is close; `details`: `field` (= `given`) and `suggestions`."""
    spellings = known if isinstance(known, Mapping) else {name: name for name in known}
    suggestions = close_names(given, spellings)
    names = list(dict.fromkeys(spellings.values()))
    hint = did_you_mean(suggestions) or f"known: {', '.join(names)}"
    return LeanIndexError(ErrorCode.INVALID_REQUEST, f"unknown {what} {given!r}; {hint}", {"field": given, "suggestions": suggestions})


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds (itself, or inside `Optional`, `list`, `Annotated`, unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in get_args(annotation) for model in _models_in(argument)]


def _fields_at(model: type[BaseModel], path: Sequence[str]) -> dict[str, str]:
    """The fields of the model that `path` (a Pydantic error location, without its last part)
    leads to inside `model`, through nested models, lists and unions, as `close_names` spellings:
    each field's name to itself, then each field of a model one level down to its dotted path
    (`constants` to `type_pattern.constants`). Empty when the path leads to no model."""
    found = [model]
    for part in path:
        if part.isdigit():
            continue  # a list index: the item's model is already among `found`
        inner = [nested for candidate in found if part in candidate.model_fields for nested in _models_in(candidate.model_fields[part].annotation)]
        # A union member's location part is its class name.
        found = inner or [candidate for candidate in found if candidate.__name__ == part]
    own = {name: name for candidate in found for name in candidate.model_fields}
    nested = {
        inner_name: f"{name}.{inner_name}"
        for candidate in found
        for name, field in candidate.model_fields.items()
        for inner in _models_in(field.annotation)
        for inner_name in inner.model_fields
        if inner_name not in own
    }
    return {**own, **nested}


def invalid_request(
    errors: Iterable[Mapping[str, Any]], drop_prefix: Sequence[str] = (), model: type[BaseModel] | None = None
) -> LeanIndexError:
    """An `invalid_request` error from Pydantic-style error dicts (`loc`, `msg`, `type`).

    `drop_prefix` removes leading location parts that only say where the model sat in a
    transport (FastAPI's `"body"`), so every surface names fields the same way. With the
    request `model`, an unknown field (`extra_forbidden`) is said so with its close field
    names (`close_names`: `limit: unknown field; did you mean result_limit?`) in its problem's
    `suggestions`, and all of them in `details.suggestions`; the message is the first problem
    with close names, else the first problem.
    """
    problems: list[dict[str, Any]] = []
    suggested: list[str] = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        if loc[: len(drop_prefix)] == list(drop_prefix) and len(loc) > len(drop_prefix):
            loc = loc[len(drop_prefix) :]
        problem: dict[str, Any] = {"loc": loc, "msg": str(error.get("msg", "invalid value"))}
        if model is not None and error.get("type") == "extra_forbidden" and loc:
            fields = _fields_at(model, loc[:-1])
            suggestions = close_names(loc[-1], fields)
            problem["msg"] = "unknown field; " + (did_you_mean(suggestions) or f"the fields are {', '.join(n for n in fields if n == fields[n])}")
            problem["suggestions"] = suggestions
            suggested += suggestions
        problems.append(problem)
    if not problems:
        problems.append({"loc": [], "msg": "invalid request"})
    # A misspelt field also leaves a required one missing: the message names the misspelling.
    first = next((problem for problem in problems if problem.get("suggestions")), problems[0])
    where = ".".join(first["loc"]) or "request"
    details: dict[str, Any] = {"errors": problems}
    if suggested:
        details["suggestions"] = list(dict.fromkeys(suggested))
    return LeanIndexError(ErrorCode.INVALID_REQUEST, f"{where}: {first['msg']}", details)


def parse_request(model: type[M], data: bytes | str | Mapping[str, Any]) -> M:
    """`data` (a JSON body, or arguments already decoded from JSON such as MCP's) as a `model`
    request, validated the one way every surface validates requests from the wire: as JSON in
    Pydantic's strict mode. No coercion: `"10"` is no integer, `true` no integer, `"yes"` no
    boolean, `10.5` no integer; enum and literal fields take their JSON string values. A number
    with a zero fraction (`10.0`) is the integer it equals, as JSON Schema (and so the published
    schemas) says.

    Raises `LeanIndexError(invalid_request)` (see `invalid_request`) for anything the model
    refuses, including a body that is not JSON; an unknown field gets its close names.
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
        raise invalid_request(error.errors(), model=model) from None


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
