"""The search page for people: server-rendered HTML over the same tools as the HTTP API.

Routes (HTML; no JavaScript anywhere):

- `GET /`: the search form (environment selector, one query box, the filters as fields) and,
  when the query asks something, one page of results: name, kind, the type in a monospace font
  with its constants linked to their own pages, module, its source and doc links (when known),
  the docstring's opening (`page_markdown.summary`: its first paragraph as Markdown, cut at a
  sentence or a space with an ellipsis), the
  completeness line (`21–40 of 94 · complete` / `· more` / `· incomplete`, with a link to the
  next page) and the notes that concern this answer only (`render.search_caveats`: modules in
  scope missing from the catalog, filters that read approximate fields; a hidden count the
  source cannot know shown as unknown; on a phone each note is cut to two lines until tapped,
  `templates/page.css`), the words of the words box no declaration has (the answer's
  `unmatched_words`); when nothing matched, a hint (`zero_hint`: the names
  closest to a lone name fragment, the same search without each part of the query, the
  fragments as words or the one word as a fragment);
- `GET /d/{name}?env=ID`: one declaration, everything inspect returns (its docstring rendered
  by `page_markdown.render_doc`), with links onward
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
catalog built before that rule cannot put script on a page. Docstrings are Markdown rendered by
`page_markdown` (raw HTML as text, links only by the same rule, no images). Everything else is
escaped by Jinja2's autoescaping; the page's own links are built by `declaration_url` and
`search_url`.

The page is an adapter: every answer comes from the `lean.declaration.search` and
`lean.declaration.inspect` tools (`service.tools`, same request models, same gate, so the same
limits as the API); what is here is only reading the query box (`parse_query`), splitting a
type into text and links (`type_segments`), saying reasons and hints in words (`why_here`,
`zero_hint`), and templates (`templates/*.html`, Jinja2).

The query box's short syntax (documented on the page once, in the folded "Filters and syntax"
help that the bare form's examples point to): words are ANDed; `c:Name` a constant
the type must mention (repeatable), `ns:Name` a namespace prefix, `kind:theorem` a kind,
`mod:Init.Data` a module prefix; one bare word is the name fragment (`add_comm`). The words box
(`text=`) is the request's `text` (a question in words, LaTeX or Lean syntax; declarations
having any of its words, ranked best first: `text_match` keeps its default, `any`), and the
order field (`order=name|relevance`) its `order`; left empty, the engine's default holds
(relevance with words, `Name.lt` without), and in relevance order each result says why it is
there (`why_here`): the answer's `text` reasons as they come (already in the user's words:
`"prime", "odd" in the docstring`) and each ranking criterion in words.
`limit` and `start` must be whole numbers as every query string spells them (`models.query_value`): anything else is the page with `invalid_request` (400),
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
from ..errors import HTTP_STATUS, ErrorCode, LeanIndexError
from ..models import (
    Assurance,
    Completeness,
    EnvironmentsRequest,
    InspectRequest,
    Kind,
    MatchReason,
    SearchOrder,
    SearchRequest,
    SearchResponse,
    query_value,
    search_caveats,
)
from ..validation import invalid_request
from .page_markdown import render_doc, summary
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


def prefix_field(word: str) -> str | None:
    """The `SearchRequest` field a word of the query box fills by its prefix (`ns:Nat` ->
    `namespace_prefixes`, see `PREFIXES`), or None for a name fragment (no known prefix, or
    nothing after the colon)."""
    prefix, colon, value = word.partition(":")
    return PREFIXES[prefix] if colon and prefix in PREFIXES and value else None


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
        field = prefix_field(word)
        if field is not None:
            fields[field].append(word.partition(":")[2])
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


def search_url(environment: str, /, **params: Any) -> str:
    """`/` with the query `params` (lists repeat their key). `environment` is positional only:
    a page's query string is passed on as `params` and may hold any key, `environment` too."""
    return "/?" + urlencode({"env": environment, **params}, doseq=True)


_NAME_HITS = {
    "exact_name": "the fragment is the whole name",
    "last_component": "the fragment is the name's last part",
    "component_boundary": "a part of the name starts with the fragment",
    "inside": "the fragment is inside the name",
}
_CRITERIA = {
    "name_bytes": "name of {} bytes",
    "binders": "binders: {}",
    "uses": "used by {} declarations",
}


def why_here(reasons: list[MatchReason]) -> str:
    """A result's place in relevance order in the user's words, "" when `reasons` hold no
    `relevance` criterion (name order): `"commutativity", "addition" in the name; "natural" in
    the namespace (text score 26.9263) · name of 12 bytes · binders: 2 · used by 0 declarations`.
    The `text` reasons are said as the engine gives them (sentences in the words typed, one per
    field matched), joined by `; `; each criterion (`docs/ranking.md`) in words, one this page
    does not know as its `KEY=VALUE`."""
    said: list[str] = []
    score: str | None = None
    for reason in reasons:
        key, _, value = reason.value.partition("=")
        if reason.filter != "relevance":
            continue
        if key == "text_score":
            score = value
        elif key == "name_hit":
            said.append(_NAME_HITS.get(value, reason.value))
        else:
            said.append(_CRITERIA[key].format(value) if key in _CRITERIA else reason.value)
    matched = [reason.value for reason in reasons if reason.filter == "text"]
    first = ["; ".join(matched)] if matched and (said or score) else []
    if score is not None:
        first = [f"{first[0]} (text score {score})"] if first else [f"text score {score}"]
    return " · ".join(first + said)


@dataclass(frozen=True)
class ZeroHint:
    """What to try when a search found nothing: `close_names`, the catalog's names closest to
    `fragment` when that name fragment is all the query asks (inspect's `not_found`
    suggestions; both empty/None otherwise); `broader`, one `(part, URL)` per part of the
    query (a box word, the words box as a whole, a filter field value) for the same search
    without that part, when it has two parts or more (at most `BROADER_LINKS`); the words box is
    one part because any one of its words is enough to match, so leaving out one word never
    finds more; `as_words`, the URL
    that looks for the box's name fragments as words (names, docstrings, types); `as_fragment`,
    the URL that looks for the one words-box word as a part of a name."""

    fragment: str | None
    close_names: list[str]
    broader: list[tuple[str, str]]
    as_words: str | None
    as_fragment: str | None


#: At most this many "without" links in a zero-result hint.
BROADER_LINKS = 8


def _query_params(query: Query, box: list[str], words: list[str], **fields: list[str]) -> dict[str, Any]:
    """The query string of `query` with the box's tokens `box`, the words `words` and the
    filter fields as in `fields` (absent: as in `query`); empty values left out."""
    params = {"q": " ".join(box), "text": " ".join(words), "ns": query.namespaces, "kind": query.kinds, "mod": query.modules,
              "c": query.constants, "order": query.order or "", "limit": "" if query.limit == 20 else str(query.limit), **fields}
    return {key: value for key, value in params.items() if value}


async def zero_hint(calls: ToolCalls, query: Query) -> ZeroHint:
    """The `ZeroHint` of `query`, whose search found nothing. Asks inspect (the served tool)
    for the name fragment when it is all the query asks; its `not_found` answer carries
    the close names (an `invalid_request`, a fragment that is no Lean name, has none). Other
    errors of that call (`busy`, ...) are raised as they are."""
    box, words = query.text.split(), query.words.split()
    fragments = [token for token in box if prefix_field(token) is None]
    fields = {"ns": query.namespaces, "kind": query.kinds, "mod": query.modules, "c": query.constants}
    parts: list[tuple[str, dict[str, Any]]] = [
        (token, _query_params(query, box[:i] + box[i + 1 :], words)) for i, token in enumerate(box)
    ] + ([(" ".join(words), _query_params(query, box, []))] if words else []) + [
        (f"{key}:{value}", _query_params(query, box, words, **{key: values[:i] + values[i + 1 :]}))
        for key, values in fields.items() for i, value in enumerate(values)
    ]
    close: list[str] = []
    if len(fragments) == 1 and len(parts) == 1:
        try:
            await calls.inspect(InspectRequest(environment=query.environment, declaration_name=fragments[0]))
        except LeanIndexError as refused:
            if refused.code not in (ErrorCode.NOT_FOUND, ErrorCode.INVALID_REQUEST):
                raise
            close = list(refused.details.get("suggestions") or [])
        except ValidationError:
            pass  # not a declaration name the request model takes: no close names
    broader = [(part, search_url(query.environment, **params)) for part, params in parts] if len(parts) > 1 else []
    kept = [token for token in box if token not in fragments]
    return ZeroHint(
        fragment=fragments[0] if close else None,
        close_names=close,
        broader=broader[:BROADER_LINKS],
        as_words=search_url(query.environment, **_query_params(query, kept, words + fragments)) if fragments else None,
        as_fragment=search_url(query.environment, **_query_params(query, box + words, [])) if len(words) == 1 and not fragments else None,
    )


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
    search_caveats=search_caveats, render_doc=render_doc, why_here=why_here,
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
                                   "response": None, "error": None, "docs": {}, "next_url": None, "line": None, "hint": None}
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
                    docs[result.name] = (summary(inspected.doc), inspected.type_constants)
                context.update(response=response, docs=docs, line=completeness_line(response, query.start))
                if not response.results and query.after is None:
                    context["hint"] = await zero_hint(calls, query)
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
