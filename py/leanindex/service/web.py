"""The search page for people: server-rendered HTML over the same tools as the HTTP API.

Routes (HTML; no JavaScript anywhere):

- `GET /`: the search form (environment selector, one query box, the filters as fields) and,
  when the query asks something, one page of results: name, kind, the type in a monospace font
  with its constants linked to their own pages, module, its source and doc links (when known),
  the doc's first line, the
  completeness line (`21–40 of 94 · complete` / `· more` / `· incomplete`, with a link to the
  next page) and the notes that concern this answer only (`render.search_caveats`: modules in
  scope missing from the catalog, filters that read approximate fields; a hidden count the
  source cannot know shown as unknown);
- `GET /d/{name}?env=ID`: one declaration, everything inspect returns, with links onward
  (its namespace, the declarations whose type mentions it, each constant of its type, its
  source and doc links);
- `GET /static/page.css`: the pages' one stylesheet (`templates/page.css`), so the pages need
  no inline style, script, image or font: they work under the Content-Security-Policy
  `default-src 'none'; style-src 'self'; form-action 'self'` (the server's middleware sets the
  policy; the browser test renders the pages under exactly this one);
- `POST /token`: a form posting the server's token sets it as a cookie (`TOKEN_COOKIE`,
  HttpOnly, SameSite=Strict) so a browser can send it; the token middleware accepts that
  cookie on these pages only (`is_page_path`).

Links leaving the site (a declaration's `source_url` and `doc_url`) are rendered only by
`external_link`, which re-checks each with the catalog's one link rule
(`catalog.links.link_problem`) and renders no `href` for anything but an http(s) link, so a
catalog built before that rule cannot put script on a page. Everything else is escaped by
Jinja2's autoescaping; the page's own links are built by `declaration_url` and `search_url`.

The page is an adapter: every answer comes from the `lean.declaration.search` and
`lean.declaration.inspect` tools (`service.tools`, same request models, same gate, so the same
limits as the API); what is here is only reading the query box (`parse_query`), splitting a
type into text and links (`type_segments`), and templates (`templates/*.html`, Jinja2).

The query box's short syntax (documented on the page): words are ANDed; `c:Name` a constant
the type must mention (repeatable), `ns:Name` a namespace prefix, `kind:theorem` a kind,
`mod:Init.Data` a module prefix; one bare word is the name fragment (`add_comm`). The words box
(`text=`) is the request's `text` (words in names, docstrings and types, BM25-ranked), and the
order field (`order=name|relevance`) its `order`; left empty, the engine's default holds
(relevance with words, `Name.lt` without), and in relevance order each result shows the
`match_reasons` that place it. `limit` and `start` must be whole numbers as every query string
spells them (`models.query_value`): anything else is the page with `invalid_request` (400),
never a server error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, get_args
from urllib.parse import parse_qs, quote, urlencode

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from pydantic import ValidationError

from ..catalog.links import link_problem
from ..errors import HTTP_STATUS, LeanIndexError
from ..models import (
    Assurance,
    Completeness,
    EnvironmentsRequest,
    InspectRequest,
    Kind,
    SearchOrder,
    SearchRequest,
    SearchResponse,
    query_value,
    search_caveats,
)
from ..validation import invalid_request
from .tools import ToolCalls

TOKEN_COOKIE = "leanindex_token"
STYLESHEET_PATH = "/static/page.css"
PAGE_PATHS = ("/", "/d/", STYLESHEET_PATH)
"""Paths of the pages (exact `/`, under `/d/`, the stylesheet): the token may come as
`TOKEN_COOKIE` there."""

PREFIXES: dict[str, str] = {"c": "type_pattern", "ns": "namespace_prefixes", "kind": "kinds", "mod": "module_prefixes"}
"""Short syntax of the query box: `prefix:value` -> the `SearchRequest` field it fills."""

_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("leanindex.service", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def is_page_path(path: str) -> bool:
    """Whether `path` is one of the pages (see `PAGE_PATHS`)."""
    return path in ("/", STYLESHEET_PATH) or path.startswith("/d/")


def external_link(url: str | None, label: str, css_class: str) -> Markup:
    """The one way a page links outside the site: `<a class="css_class" href="url">label</a>`
    (all escaped) when `url` is a link by `catalog.links.link_problem` (http or https); for any
    other non-empty value (a catalog built before the rule held it) `label` as plain text with
    a note and no `href`; "" for None or "". `Markup.format` escapes every argument."""
    if not url:
        return Markup("")
    problem = link_problem(url)
    if problem is not None:
        return Markup('<span class="{} refused" title="{}">{} (not an http(s) link: not linked)</span>').format(
            css_class, problem, label
        )
    return Markup('<a class="{}" href="{}">{}</a>').format(css_class, url, label)


@dataclass(frozen=True)
class Query:
    """What the form asks: the box's text and the separate fields, as given."""

    environment: str
    text: str
    namespaces: list[str]
    kinds: list[str]
    modules: list[str]
    constants: list[str]
    limit: int
    after: str | None
    start: int
    words: str = ""
    order: str | None = None


def _whole_number(value: str | None, field: str, default: int) -> int:
    # The one rule of query strings (`models.query_value`): canonical ASCII digits only, never
    # `str.isdigit`, which accepts `²` that `int` refuses.
    return default if value is None else query_value(field, value, "integer")


def read_form(params: Mapping[str, list[str]], default_environment: str) -> Query:
    """The query string of `GET /` as a `Query` (empty strings dropped; `limit` defaults to 20,
    `start` to 0). Raises `LeanIndexError(invalid_request)` with `details.field` `limit` or
    `start` when one is not a whole number by the query-string rule (`models.query_value`:
    canonical decimal digits)."""

    def values(key: str) -> list[str]:
        return [v.strip() for v in params.get(key, []) if v.strip()]

    first = {key: next(iter(values(key)), None) for key in ("env", "q", "text", "order", "limit", "after", "start")}
    return Query(
        environment=first["env"] or default_environment,
        text=first["q"] or "",
        namespaces=values("ns"),
        kinds=values("kind"),
        modules=values("mod"),
        constants=values("c"),
        limit=_whole_number(first["limit"], "limit", 20),
        after=first["after"],
        start=_whole_number(first["start"], "start", 0),
        words=first["text"] or "",
        order=first["order"],
    )


def parse_query(query: Query) -> dict[str, Any] | None:
    """The `SearchRequest` fields the query asks for, or None when it asks nothing (an empty box,
    no words and no filter field: the bare form). Bare words are name fragments that must all
    occur (`name_contains` as a list); the words box is `text` and the order field `order`, both
    passed as given, so an order the API does not know is refused by the request model
    (`invalid_request`); whether the filters given are enough is the engine's rule."""
    fields: dict[str, list[str]] = {"type_pattern": list(query.constants), "namespace_prefixes": list(query.namespaces),
                                    "kinds": list(query.kinds), "module_prefixes": list(query.modules)}
    bare: list[str] = []
    for word in query.text.split():
        prefix, colon, value = word.partition(":")
        if colon and prefix in PREFIXES and value:
            fields[PREFIXES[prefix]].append(value)
        else:
            bare.append(word)
    if not bare and not query.words and not any(fields.values()):
        return None
    request: dict[str, Any] = {"environment": query.environment, "result_limit": query.limit, "after": query.after}
    if query.words:
        request["text"] = query.words
    if query.order:
        request["order"] = query.order
    if bare:
        request["name_contains"] = bare[0] if len(bare) == 1 else bare
    if fields["type_pattern"]:
        request["type_pattern"] = {"constants": fields.pop("type_pattern")}
    request.update({key: value for key, value in fields.items() if value and key != "type_pattern"})
    return request


_NOT_IN_NAMES = r"\s()\[\]{}⦃⦄,:←→↔∀∃λ=<>≤≥≠+*/×∘∧∨¬·|@$%^&;`\""
# An identifier never starts with `.` (`(as ++ bs).length`: the dot is text, `length` a name).
_IDENTIFIER = re.compile(rf"[^{_NOT_IN_NAMES}.][^{_NOT_IN_NAMES}]*")


def type_segments(text: str, constants: list[str]) -> list[tuple[str, str | None]]:
    """`text` cut into `(piece, constant or None)`: an identifier is linked to the constant of
    the type it names (its full name, or the one constant ending in `.<identifier>`); for a
    dotted identifier that names none (`s.length`), its last component is tried the same way.
    Notation (`+`, `∣`) stays text: the constants it stands for are listed beside the type."""
    by_suffix: dict[str, set[str]] = {}
    for name in constants:
        parts = name.split(".")
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), set()).add(name)

    def resolve(token: str) -> str | None:
        found = by_suffix.get(token, set())
        return next(iter(found)) if len(found) == 1 else (token if token in constants else None)

    segments: list[tuple[str, str | None]] = []
    cursor = 0
    for match in _IDENTIFIER.finditer(text):
        token = match.group(0)
        target = resolve(token)
        head, tail = token, ""
        if target is None and "." in token.strip("."):
            head, _, last = token.rpartition(".")
            target = resolve(last)
            head, tail = (head + ".", last) if target else (token, "")
        segments.append((text[cursor : match.start()], None))
        if tail:
            segments += [(head, None), (tail, target)]
        else:
            segments.append((token, target))
        cursor = match.end()
    segments.append((text[cursor:], None))
    return [(piece, link) for piece, link in segments if piece]


def notation_constants(text: str, constants: list[str]) -> list[str]:
    """The constants of a type that `type_segments` links nowhere in `text` (those behind
    notation such as `+` or `=`), in the given order, to be linked beside the type."""
    linked = {target for _, target in type_segments(text, constants) if target}
    return [name for name in constants if name not in linked]


def declaration_url(environment: str, name: str) -> str:
    """The page of declaration `name` in `environment`."""
    return f"/d/{quote(name, safe='')}?{urlencode({'env': environment})}"


def search_url(environment: str, **params: Any) -> str:
    """`/` with the query `params` (lists repeat their key)."""
    return "/?" + urlencode({"env": environment, **params}, doseq=True)


def _first_line(doc: str | None) -> str:
    for line in (doc or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def completeness_line(response: SearchResponse, start: int) -> str:
    """`21–40 of 94 · complete` (every match was returned), `· more` (another page exists) or
    `· incomplete` (the last page, but modules in scope are missing from the catalog: the
    answer's `completeness` is `PARTIAL`), followed by `· approximate` when the answer's
    assurance is `APPROXIMATE`; the page's notes say why."""
    shown = len(response.results)
    span = f"{start + 1}–{start + shown}" if shown else "0"
    state = "more" if response.next_cursor else "complete" if response.completeness is Completeness.COMPLETE else "incomplete"
    approximate = " · approximate" if response.assurance is Assurance.APPROXIMATE else ""
    return f"{span} of {response.total_matches:,} · {state}{approximate}"


_templates.globals.update(
    search_caveats=search_caveats,
    orders=get_args(SearchOrder), stylesheet_path=STYLESHEET_PATH, external_link=external_link,
    declaration_url=declaration_url, search_url=search_url, type_segments=type_segments, notation_constants=notation_constants
)


def _render(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(_templates.get_template(template).render(**context), status_code=status)


def _failure(error: LeanIndexError | ValidationError) -> LeanIndexError:
    return invalid_request(error.errors()) if isinstance(error, ValidationError) else error


def install_pages(app: FastAPI, calls: ToolCalls) -> None:
    """Add the page routes (see the module docstring) to `app`; answers come from `calls`, the
    calls the server's tools are bound to (the same gate, limits and errors as the API)."""

    async def environments() -> list[str]:
        listed = await calls.environments(EnvironmentsRequest())
        return [e.environment for e in listed.environments]

    stylesheet = (files("leanindex.service") / "templates" / "page.css").read_bytes()

    @app.get(STYLESHEET_PATH, include_in_schema=False)
    async def page_stylesheet() -> Response:
        """The pages' stylesheet (CSS)."""
        return Response(stylesheet, media_type="text/css; charset=utf-8")

    @app.get("/", include_in_schema=False)
    async def search_page(request: Request) -> Response:
        """The search form and one page of results (HTML)."""
        params = parse_qs(request.url.query)
        context: dict[str, Any] = {"environments": [], "query": read_form({}, ""), "kinds": [k.value for k in Kind],
                                   "response": None, "error": None, "docs": {}, "next_url": None, "line": None}
        try:
            context["query"] = read_form(params, "")  # a bad number is refused before any search
            served = await environments()
            query = read_form(params, served[0] if served else "")
            context.update(environments=served, query=query)
            fields = parse_query(query)
            if fields is not None:
                response = await calls.search(SearchRequest(**fields))
                docs = {}
                for result in response.results:
                    inspected = await calls.inspect(InspectRequest(environment=query.environment, declaration_name=result.name))
                    docs[result.name] = (_first_line(inspected.doc), inspected.type_constants)
                context.update(response=response, docs=docs, line=completeness_line(response, query.start))
                if response.next_cursor:
                    kept = {k: v for k, v in params.items() if k not in ("after", "start", "env")}
                    context["next_url"] = search_url(query.environment, **kept, after=response.next_cursor,
                                                     start=query.start + len(response.results))
        except (LeanIndexError, ValidationError) as raised:
            failure = _failure(raised)
            return _render("search.html", HTTP_STATUS[failure.code], **{**context, "error": failure})
        return _render("search.html", **context)

    @app.get("/d/{name:leanname}", include_in_schema=False)
    async def declaration_page(request: Request, name: str) -> Response:
        """Everything inspect returns about one declaration (HTML)."""
        environment = request.query_params.get("env", "")
        context: dict[str, Any] = {"environments": [], "environment": environment, "name": name, "error": None, "answer": None,
                                   "query": read_form({}, environment), "kinds": [k.value for k in Kind]}
        try:
            served = await environments()
            environment = environment or (served[0] if served else "")
            context.update(environments=served, environment=environment, query=read_form({}, environment))
            answer = await calls.inspect(InspectRequest(environment=environment, declaration_name=name))
        except (LeanIndexError, ValidationError) as raised:
            failure = _failure(raised)
            return _render("declaration.html", HTTP_STATUS[failure.code], **{**context, "error": failure})
        return _render("declaration.html", **{**context, "answer": answer})

    @app.post("/token", include_in_schema=False)
    async def token_form(request: Request) -> Response:
        """Keep the token a person typed in as a cookie for the pages, then go to the search page."""
        given = parse_qs((await request.body()).decode("utf-8", "replace")).get("token", [""])[0]
        redirect = RedirectResponse("/", status_code=303)
        redirect.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
        return redirect


def token_page(error: LeanIndexError) -> HTMLResponse:
    """The page a browser gets without a valid token: the refusal and a form to give it."""
    return _render("token.html", HTTP_STATUS[error.code], error=error)
