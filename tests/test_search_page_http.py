"""The search page over HTTP without a browser: the query box's syntax, type links, the same
answers, token and limits as the API (the browser test is `test_search_page.py`)."""

from __future__ import annotations

import threading
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from leanindex.service.web import (
    Query,
    notation_constants,
    parse_query,
    read_form,
    type_segments,
)
from service_support import GatedEngine, engine_search, live_server, sample_root  # noqa: F401  (fixture)


def query(text: str = "", **fields: object) -> Query:
    return Query(**{"environment": "CORE", "text": text, "namespaces": [], "kinds": [], "modules": [], "constants": [],
                    "limit": 20, "after": None, "start": 0, **fields})  # type: ignore[arg-type]


def test_the_short_syntax_fills_the_request_fields() -> None:
    assert parse_query(query("add_comm ns:Nat kind:theorem mod:Init.Data c:HAdd.hAdd c:Eq")) == {
        "environment": "CORE", "result_limit": 20, "after": None, "name_contains": "add_comm",
        "type_pattern": {"constants": ["HAdd.hAdd", "Eq"]}, "namespace_prefixes": ["Nat"], "kinds": ["theorem"],
        "module_prefixes": ["Init.Data"],
    }
    # The separate fields and the box add up.
    assert parse_query(query("c:Eq", constants=["Nat"], namespaces=["Nat"]))["type_pattern"] == {"constants": ["Nat", "Eq"]}
    # Browsing: any filter is a search (the engine's rule), only the empty form is none.
    assert parse_query(query("ns:Nat kind:theorem"))["namespace_prefixes"] == ["Nat"]
    assert parse_query(query("", namespaces=["Nat"]))["namespace_prefixes"] == ["Nat"]
    assert parse_query(query("")) is None
    # An unknown prefix is part of a name (names may hold a colon only between «»).
    assert parse_query(query("x:y"))["name_contains"] == "x:y"
    # Several bare words are fragments that must all occur.
    assert parse_query(query("add comm"))["name_contains"] == ["add", "comm"]


def test_the_words_box_and_the_order_field_fill_text_and_order() -> None:
    asked = parse_query(query("ns:Nat", words="commutativity addition", order="relevance"))
    assert (asked["text"], asked["order"], asked["namespace_prefixes"]) == ("commutativity addition", "relevance", ["Nat"])
    assert "name_contains" not in asked
    # Words alone are a search; no order field leaves the engine's default (no `order` key).
    assert "order" not in parse_query(query(words="pushforward measure"))
    form = read_form({"text": ["  pushforward measure "], "order": [""]}, "CORE")
    assert (form.words, form.order) == ("pushforward measure", None)


def test_read_form_drops_empty_fields_and_defaults_the_environment() -> None:
    form = read_form({"q": [" add "], "c": ["", "Nat"], "kind": [""], "limit": ["50"], "start": [" "]}, "CORE")
    assert (form.environment, form.text, form.constants, form.kinds, form.limit, form.start) == ("CORE", "add", ["Nat"], [], 50, 0)
    # A number that is not plain digits is refused, never guessed (`²` is a digit to `str.isdigit`, not to `int`).
    for bad in ("x", "²", "1" * 5000):
        with pytest.raises(LeanIndexError) as raised:
            read_form({"start": [bad]}, "CORE")
        assert raised.value.code is ErrorCode.INVALID_REQUEST and raised.value.details["field"] == "start"


def test_type_segments_link_each_constant_it_names() -> None:
    text = "{α : Type u_1} (as bs : List α) : (as ++ bs).length = as.length + bs.length"
    constants = ["Eq", "HAdd.hAdd", "HAppend.hAppend", "List", "List.length", "Nat"]
    segments = type_segments(text, constants)
    assert "".join(piece for piece, _ in segments) == text
    assert [(piece, link) for piece, link in segments if link] == [
        ("List", "List"), ("length", "List.length"), ("length", "List.length"), ("length", "List.length"),
    ]
    assert notation_constants(text, constants) == ["Eq", "HAdd.hAdd", "HAppend.hAppend", "Nat"]
    # A name two constants end in is linked to neither (no guessing).
    assert [link for _, link in type_segments("(x : T)", ["A.T", "B.T"]) if link] == []


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def test_pages_answer_what_the_api_answers(sample_root: Path) -> None:  # noqa: F811
    engine = Engine(sample_root)
    with live_server(create_app(engine)) as url:
        page = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add", "kind": "theorem", "limit": "3"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        answer = engine_search(sample_root, environment="SAMPLE", name_contains="add", kinds=["theorem"], result_limit=3)
        for result in answer.results:
            assert f">{result.name}</a>" in page.text
        assert f"1–3 of {answer.total_matches} · more" in page.text
        links = _Links()
        links.feed(page.text)
        following = next(h for h in links.hrefs if "after=" in h)
        second = httpx.get(url + following)
        assert "4–" in second.text and f"of {answer.total_matches}" in second.text
        decl = httpx.get(f"{url}/d/Nat.add_comm", params={"env": "SAMPLE"})
        assert decl.status_code == 200 and "Nat.add_comm" in decl.text and "commutative" in decl.text
        # A theorem is no class: its null instance count is not shown as a fact about the catalog.
        assert "instance count" not in decl.text and "not recorded" not in decl.text
        # A misspelt name: not found, with the close names (an unrelated one has none).
        missing = httpx.get(f"{url}/d/Nat.add_comn", params={"env": "SAMPLE"})
        assert missing.status_code == 404 and "not_found" in missing.text and "Nat.add_comm" not in missing.text or "Close names" in missing.text
        bad = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add kind:lemma"})  # no such kernel kind
        assert bad.status_code == 400 and "invalid_request" in bad.text
        assert "<script" not in page.text.lower()
        # The words box: the same ranked answer as the API's `text`, each result saying why it is there.
        worded = httpx.get(f"{url}/", params={"env": "SAMPLE", "text": "commutative addition", "limit": "3"})
        ranked = engine_search(sample_root, environment="SAMPLE", text="commutative addition", result_limit=3)
        assert worded.status_code == 200 and ranked.results
        # A result's name is the link before its kind (a type may link the same name: `Add`).
        shown = [name for name in (r.name for r in ranked.results) if f">{name}</a><span class=\"kind\">" in worded.text]
        assert shown == [r.name for r in ranked.results]
        positions = [worded.text.index(f">{r.name}</a><span class=\"kind\">") for r in ranked.results]
        assert positions == sorted(positions)  # in the API's order
        # The reasons as the API says them, in the words typed (quotes escaped in the HTML).
        assert 'why here: &#34;commutative&#34;, &#34;addition&#34; in the name; ' in worded.text
        named = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add", "order": "name"})
        assert "why here" not in named.text
        unknown_order = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add", "order": "newest"})
        assert unknown_order.status_code == 400 and "invalid_request" in unknown_order.text
    engine.close()


def test_the_pages_need_the_token_and_take_it_as_a_cookie(sample_root: Path) -> None:  # noqa: F811
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(token="s3cret"))) as url:
        refused = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add"})
        assert refused.status_code == 401 and 'action="/token"' in refused.text and "Nat.add" not in refused.text
        wrong = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add"}, cookies={"leanindex_token": "nope"})
        assert wrong.status_code == 401
        with httpx.Client(base_url=url) as browser:
            given = browser.post("/token", data={"token": "s3cret"})
            assert given.status_code == 303 and "HttpOnly" in given.headers["set-cookie"] and "SameSite=strict" in given.headers["set-cookie"]
            assert browser.get("/", params={"env": "SAMPLE", "q": "add_comm"}).status_code == 200
            # The cookie opens the pages only, never the API.
            api = browser.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "add"})
            assert api.status_code == 401
        assert httpx.get(f"{url}/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    engine.close()


def test_the_pages_share_the_api_limits(sample_root: Path) -> None:  # noqa: F811
    engine = GatedEngine(sample_root)
    app = create_app(engine, ServiceConfig(max_concurrent=1, time_budget_s=60))
    with live_server(app) as url:
        held = threading.Thread(target=lambda: httpx.post(f"{url}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "Nat"}, timeout=60))
        held.start()
        assert engine.entered.wait(30)
        busy = httpx.get(f"{url}/", params={"env": "SAMPLE", "q": "add"})
        assert busy.status_code == 429 and "busy" in busy.text
        engine.release.set()
        held.join(30)
    engine.close()
