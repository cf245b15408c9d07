"""Links of a doc-gen4 catalog: `source_url` is doc-gen4's `sourceLink` as given, `doc_url` its
`docLink` resolved against the base of the site that serves the documentation.

doc-gen4 writes `docLink` relative to the site's root (`./Init/Classical.html#Exists.choose`,
`DocGen4/Output/ToJson.lean`), so the site must be named: `--doc-base URL` of
`leanindex catalog import-docgen`. The default, `DEFAULT_DOC_BASE`, is the site of the
leanprover-community that documents Lean core and Mathlib together; it serves the newest Mathlib
only, so the link of a declaration that was since removed or renamed may not resolve.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from ..catalog.links import link_problem
from ..errors import ErrorCode, LeanIndexError

DEFAULT_DOC_BASE = "https://leanprover-community.github.io/mathlib4_docs/"
# RFC 3986's unreserved, reserved and `%` characters: a base holding anything else (a space, `"`,
# `<`) would be written into every doc_url as it is.
_URL_TEXT = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def doc_base(url: str) -> str:
    """`url` checked as a doc site base: a link by the one rule of every link
    (`catalog.links.link_problem`: an absolute `http` or `https` URL with a host, a valid port,
    no user name or password, bounded length), and further without query or fragment, made only
    of characters a URL holds unescaped (RFC 3986; no spaces, so none around it either); a
    missing trailing `/` is added (so relative links resolve below it, not beside it). Raises
    `LeanIndexError(invalid_request)` with `details.field: doc_base` otherwise."""
    linked = isinstance(url, str) and link_problem(url) is None
    parts = urlsplit(url) if linked and _URL_TEXT.fullmatch(url) else None
    try:
        port_ok = parts is not None and (parts.port is None or parts.port > 0)
    except ValueError:
        port_ok = False
    if (parts is None or not port_ok or parts.scheme not in ("http", "https") or not parts.hostname
            or parts.username is not None or parts.query or parts.fragment):
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"doc base {url!r} is not an absolute http(s) URL (a host, a valid port, no user, query or fragment, "
            f"only characters a URL may hold unescaped), e.g. {DEFAULT_DOC_BASE}",
            {"field": "doc_base", "value": url},
        )
    text = parts.geturl()
    return text if text.endswith("/") else text + "/"


def doc_url(doc_link: str, base: str) -> str:
    """`doc_link` (doc-gen4's `docLink`, relative to the site root) resolved against `base` (a
    value `doc_base` returned), as RFC 3986 resolves a relative reference. doc-gen4's usual form
    `./A/B.html#N` without dot segments resolves to `base + "A/B.html#N"`, which is taken
    directly (`urljoin` costs about 30 µs a link, 9 s on Mathlib); any other form goes through
    `urljoin`."""
    if doc_link.startswith("./") and "/." not in doc_link[1:] and "//" not in doc_link:
        return base + doc_link[2:]
    return urljoin(base, doc_link)
