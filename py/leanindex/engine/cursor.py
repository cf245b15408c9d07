"""Opaque cursors: one codec (`pack_cursor`, `unpack_cursor`) for every paged answer, and the
search's cursors, bound to one catalog and one query (the declaration diff's are bound to its
two catalogs and categories: `engine.diff`).

A cursor is unpadded base64url of compact JSON holding its version `v`. A search cursor is
`{"v": 1, "c": <catalog>, "q": <query>, "p": <key>}`: the scan
continues after sort key `p` (the position in name order, `engine.relevance`'s key in relevance
order). `c` is a prefix of the catalog's Parquet sha256 and `q` a fingerprint of the filters and
the order (not of `result_limit`, which may change between pages), so a cursor from another
catalog, another query or another order is refused instead of silently continuing a different
scan.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from ..errors import ErrorCode, LeanIndexError
from ..models import SearchRequest, normalize_profile

_VERSION = 1
_CURSOR_TEXT = re.compile(r"[A-Za-z0-9_-]+")  # what pack_cursor writes: unpadded base64url


def malformed_cursor() -> LeanIndexError:
    """The refusal of a cursor that no answer wrote (`details.field`: `after`)."""
    return LeanIndexError(ErrorCode.INVALID_REQUEST, "malformed cursor", {"field": "after"})


def pack_cursor(payload: dict[str, Any]) -> str:
    """A cursor holding `payload` (JSON-ready, with its version under `v`): unpadded base64url
    of its compact JSON."""
    return base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")


def unpack_cursor(cursor: str, version: int, fields: dict[str, type | None]) -> dict[str, Any]:
    """The payload of a cursor `pack_cursor` wrote at `version`: each key of `fields` present,
    of exactly that type where one is given (`bool` is no `int`), `None` for any JSON value.
    Raises `malformed_cursor()` for anything else: not base64url, not JSON, another version, a
    key missing or mistyped."""
    if not _CURSOR_TEXT.fullmatch(cursor):
        raise malformed_cursor()
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        values = {key: payload[key] for key in ("v", *fields)}
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise malformed_cursor() from None
    if type(values["v"]) is not int or values["v"] != version:
        raise malformed_cursor()
    if any(kind is not None and type(values[key]) is not kind for key, kind in fields.items()):
        raise malformed_cursor()
    return values


def query_fingerprint(request: SearchRequest) -> str:
    """A short digest of the request's filters and the order it answers in (environment
    lower-cased; limit and cursor left out). The order is the effective one
    (`SearchRequest.ranked()`), so a request that leaves the order out and one that names the same
    order as its default are one query."""
    data = request.model_dump(mode="json", exclude={"result_limit", "after"})
    data["environment"] = normalize_profile(data["environment"])
    data["order"] = "relevance" if request.ranked() else "name"
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def encode_cursor(catalog_digest: str, request: SearchRequest, pos: int) -> str:
    """The cursor that continues `request` after sort key `pos` in the catalog `catalog_digest`."""
    return pack_cursor({"v": _VERSION, "c": catalog_digest[:16], "q": query_fingerprint(request), "p": pos})


def decode_cursor(cursor: str, catalog_digest: str, request: SearchRequest, size: int) -> int:
    """The sort key a cursor continues after, `size` being one more than the largest key (the
    declaration count in name order). Raises `LeanIndexError(invalid_request)` for a malformed
    cursor (including a key outside that range), one from another catalog, or one from a
    different query or order."""
    payload = unpack_cursor(cursor, _VERSION, {"c": None, "q": None, "p": int})
    catalog, query, pos = payload["c"], payload["q"], payload["p"]
    if catalog != catalog_digest[:16]:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "cursor belongs to another catalog (the environment was rebuilt or differs); start the search again",
            {"field": "after"},
        )
    if query != query_fingerprint(request):
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "cursor belongs to a different query; send the same filters and order as the request that returned it",
            {"field": "after"},
        )
    # The range is checked last: a key of the other order is a different query, not malformed.
    if not 0 <= pos < size:
        raise malformed_cursor()
    return pos
