"""Opaque search cursors, bound to one catalog and one query.

A cursor is base64url JSON `{"v": 1, "c": <catalog>, "q": <query>, "p": <key>}`: the scan
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

from ..errors import ErrorCode, LeanIndexError
from ..models import SearchRequest, normalize_profile

_VERSION = 1
_CURSOR_TEXT = re.compile(r"[A-Za-z0-9_-]+")  # what encode_cursor writes: unpadded base64url


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
    payload = {"v": _VERSION, "c": catalog_digest[:16], "q": query_fingerprint(request), "p": pos}
    return base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, catalog_digest: str, request: SearchRequest, size: int) -> int:
    """The sort key a cursor continues after, `size` being one more than the largest key (the
    declaration count in name order). Raises `LeanIndexError(invalid_request)` for a malformed
    cursor (including a key outside that range), one from another catalog, or one from a
    different query or order."""
    if not _CURSOR_TEXT.fullmatch(cursor):
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, "malformed cursor", {"field": "after"})
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw)
        version, catalog, query, pos = payload["v"], payload["c"], payload["q"], payload["p"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, "malformed cursor", {"field": "after"}) from None
    if type(version) is not int or version != _VERSION or type(pos) is not int:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, "malformed cursor", {"field": "after"})
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
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, "malformed cursor", {"field": "after"})
    return pos
