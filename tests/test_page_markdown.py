"""Docstrings on the search page read as text (issue 30, item 7): Markdown rendered by
`service.page_markdown` with raw HTML, script links and images inert, TeX math kept as
written, the results' doc line cut at a sentence or a space; the `why here` line in the
words the user typed, never the index's stems; a hint when nothing matched; one help text.
The browser side (screenshots, phone width) is in `test_search_page.py`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from leanindex.catalog.links import link_problem
from leanindex.engine import Engine
from leanindex.models import MatchReason
from leanindex.service.http import create_app
from leanindex.service.page_markdown import ELLIPSIS, SUMMARY_CHARS, render_doc, summary
from leanindex.service.web import why_here
from realdata_support import CORE_SAMPLE, MATHLIB_SAMPLE, realdata_path
from service_support import sample_root  # noqa: F401  (fixture)
from streamkit import build, declaration, stream

#: Elements a rendered docstring may hold (CommonMark's, tables, strikethrough, the math span).
ALLOWED = {"p", "a", "code", "pre", "em", "strong", "span", "ul", "ol", "li", "blockquote", "hr", "br", "s",
           "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"}
VOID = {"hr", "br"}


class Html(HTMLParser):
    """The elements, attributes and text of an HTML fragment; `balanced` says whether every
    element opened was closed in order."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str, str | None]] = []
        self.classes: dict[str, list[str]] = {}
        self.text: list[str] = []
        self._open: list[str] = []
        self._texts: list[list[str]] = []
        self.balanced = True
        self.feed(source)
        self.close()
        self.balanced = self.balanced and not self._open

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(tag, key, value) for key, value in attrs]
        if tag not in VOID:
            self._open.append(tag)
            self._texts.append([])
            css = dict(attrs).get("class")
            self._texts[-1].append(f"\0{css}" if css else "\0")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(tag, key, value) for key, value in attrs]
        self.balanced = self.balanced and tag in VOID

    def handle_endtag(self, tag: str) -> None:
        if not self._open or self._open[-1] != tag:
            self.balanced = False
            return
        self._open.pop()
        inner = self._texts.pop()
        marker, words = inner[0], "".join(inner[1:])
        if marker != "\0":
            self.classes.setdefault(marker[1:], []).append(words)
        if self._texts:
            self._texts[-1].append(words)

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for texts in self._texts:
            texts.append(data)

    def hrefs(self) -> list[str | None]:
        return [value for tag, key, value in self.attributes if key == "href"]

    def inner(self, css: str) -> list[str]:
        return self.classes.get(css, [])


HOSTILE_DOC = (
    "Innocent first line with `code`.\n\n"
    "<script>window.__pwned = 1</script>\n\n"
    "Click [here](javascript:window.__pwned=2) or [there]( JaVaScRiPt:window.__pwned=3) or <javascript:window.__pwned=4>,\n"
    "[data](data:text/html,<script>opener.__pwned=5</script>), [ref][r] and <img src=x onerror=\"window.__pwned=6\">.\n"
    "<a href=\"javascript:window.__pwned=7\">raw</a> ![pixel](https://example.org/p.png) [fine](https://example.org/ok)\n"
    "[same site](/v1/declarations/search) [mail](mailto:a@example.org) [vb](vbscript:msgbox)\n\n"
    "[r]: javascript:window.__pwned=8\n"
)


def _inert(html: str) -> Html:
    """Parse `html` and check it holds no element beyond `ALLOWED`, no event handler or style
    attribute, and only http(s) links."""
    parsed = Html(html)
    assert set(parsed.tags) <= ALLOWED, set(parsed.tags) - ALLOWED
    assert all(key in ("href", "class") for _, key, _ in parsed.attributes), parsed.attributes
    assert all(href is not None and link_problem(href) is None for href in parsed.hrefs()), parsed.hrefs()
    assert parsed.balanced
    return parsed


def test_html_script_links_and_images_in_a_docstring_stay_inert_text() -> None:
    whole = _inert(render_doc(HOSTILE_DOC))
    assert whole.hrefs() == ["https://example.org/ok", "https://example.org/p.png"] or whole.hrefs() == [
        "https://example.org/p.png", "https://example.org/ok"]
    text = "".join(whole.text)
    # What was markup is shown as the text it was (escaped), with no link made of it.
    for shown in ("<script>window.__pwned = 1</script>", "[here](javascript:window.__pwned=2)", "<javascript:window.__pwned=4>",
                  '<img src=x onerror="window.__pwned=6">', '<a href="javascript:window.__pwned=7">raw</a>', "[r]: javascript:window.__pwned=8",
                  "[same site](/v1/declarations/search)", "[mail](mailto:a@example.org)"):
        assert shown in text, shown
    assert "img" not in whole.tags and "script" not in whole.tags
    assert "<script>" not in render_doc(HOSTILE_DOC) and "&lt;script&gt;" in render_doc(HOSTILE_DOC)
    first = _inert(summary(HOSTILE_DOC))
    assert "".join(first.text) == f"Innocent first line with code. {ELLIPSIS}" and first.tags == ["code"]
    # Every paragraph as the first one (the results' line) is as inert.
    for paragraph in HOSTILE_DOC.split("\n\n"):
        _inert(summary(paragraph))


@pytest.mark.parametrize(
    ("doc", "math"),
    [
        ("so $a*b*c$ and $a_1 * b_2$ hold", ["$a*b*c$", "$a_1 * b_2$"]),
        ("the set $\\{x \\mid x < 2\\}$ here", ["$\\{x \\mid x < 2\\}$"]),
        ("display $$\\sum_{i<n} f(i)$$ done", ["$$\\sum_{i<n} f(i)$$"]),
        ("it costs $5 and $10 today", []),  # Pandoc's rule: no space inside the dollars, no digit after
        ("`f $ x` and `$e:name` are code", []),
    ],
)
def test_math_is_kept_as_written(doc: str, math: list[str]) -> None:
    for html in (render_doc(doc), summary(doc)):
        parsed = _inert(html)
        assert parsed.inner("math") == math
        assert "em" not in parsed.tags and "strong" not in parsed.tags
        assert "".join(parsed.text).strip() == re.sub(r"`", "", doc)


def test_real_mathlib_math_reads_as_written() -> None:
    folder = realdata_path(MATHLIB_SAMPLE)
    docs = _docs(folder)
    doc = docs["IsGalois.card_aut_eq_finrank"]
    parsed = _inert(summary(doc))
    assert parsed.inner("math") == ["$E / F$", "$E$", "$F$", "$|\\text{Aut}(E/F)| = [E : F]$"]
    assert "".join(parsed.text).startswith("Let $E / F$ be a finite extension of fields.")
    whole = _inert(render_doc(doc))
    assert whole.hrefs() == ["https://stacks.math.columbia.edu/tag/09I1"]
    # Every docstring of the sample with `$…$` keeps its dollars: what is shown is what was written.
    for name, doc in docs.items():
        for span in _inert(render_doc(doc)).inner("math"):
            assert span in doc, (name, span)


def _docs(folder: Path) -> dict[str, str]:
    """Declaration name -> docstring of every doc-gen4 file in `folder` (docstrings only)."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("declaration-data-*.bmp")):
        for item in json.loads(path.read_text())["declarations"]:
            if item["info"]["doc"]:
                found[item["info"]["name"]] = item["info"]["doc"]
    return found


def _visible(html: str) -> str:
    return "".join(Html(html).text)


def test_every_real_core_docstring_renders_inert_and_its_line_is_cut_at_a_boundary() -> None:
    docs = _docs(realdata_path(CORE_SAMPLE))
    assert len(docs) > 2000
    for name, doc in docs.items():
        _inert(render_doc(doc))
        line = summary(doc)
        _inert(line)
        shown = _visible(line)
        assert shown, name
        # No Markdown shows as such outside code (``x`` is code holding a backquote: `x).
        assert not re.search(r"`|\*\*", _visible(re.sub(r"<code>.*?</code>", "", line, flags=re.S))), (name, shown)
        kept = shown.removesuffix(ELLIPSIS).rstrip()
        assert len(kept) <= SUMMARY_CHARS, (name, shown)
        # A cut is at a word's end: the last word shown is followed by a space in the docstring's text.
        if shown.endswith(ELLIPSIS) and not shown.endswith(f" {ELLIPSIS}"):
            tail = kept.split()[-1]
            assert re.search(re.escape(tail) + r"\s", re.sub(r"[`*]", "", doc)), (name, tail)


def test_a_long_first_paragraph_is_cut_after_its_last_sentence_that_fits() -> None:
    functor = _docs(realdata_path(CORE_SAMPLE))["Functor"]
    parsed = _inert(summary(functor))
    assert "".join(parsed.text) == (
        "A functor in the sense used in functional programming, which means a function f : Type u → Type v\n"
        f"has a way of mapping a function over its contents. {ELLIPSIS}"
    )
    assert parsed.tags == ["code"]
    # No sentence end fits: the cut is at the last space that fits, the word kept whole.
    cut = _visible(summary("word " * 100))
    assert cut.endswith(f"word{ELLIPSIS}") and len(cut) <= SUMMARY_CHARS + 1
    # Never inside code or math, and a tag opened before the cut is closed.
    long = "A **bold start with `some code` and " + "more words " * 30 + "end** after."
    parsed = _inert(summary(long))
    assert parsed.tags == ["strong", "code"] and "".join(parsed.text).endswith(ELLIPSIS)
    assert _visible(summary("e.g. this is not a sentence end. " * 10)).startswith("e.g. this is not a sentence end.")
    # A short docstring is whole, with no ellipsis.
    assert _visible(summary("Addition is commutative.")) == "Addition is commutative."


def test_the_why_line_speaks_the_words_typed_never_stems() -> None:
    # The engine's text reasons are sentences in the words typed, one per field: said as they
    # come, the score in words, never a stem or a KEY=VALUE the page knows.
    reasons = [MatchReason(filter="text", value=v) for v in ('"Cauchy-Schwarz" in the name', '"inequality" in the docstring')] + [
        MatchReason(filter="relevance", value=v)
        for v in ("text_score=7.1234", "name_hit=last_component", "name_bytes=22", "binders=3", "uses=4")
    ]
    line = why_here(reasons)
    assert line == ('"Cauchy-Schwarz" in the name; "inequality" in the docstring (text score 7.1234) · '
                    "the fragment is the name's last part · name of 22 bytes · binders: 3 · used by 4 declarations")
    assert not re.search(r"\b(cauchi|inequ|text_score|bm25)\b", line)
    nickname = [MatchReason(filter="text", value="named by a nickname in the text"), MatchReason(filter="relevance", value="text_score=80.5")]
    assert why_here(nickname) == "named by a nickname in the text (text score 80.5)"
    assert why_here([MatchReason(filter="name_contains", value="add")]) == ""  # name order: no why line
    assert why_here([MatchReason(filter="text", value='"add" in the name')]) == ""  # words in name order: none either
    assert why_here([MatchReason(filter="relevance", value="novel=1")]) == "novel=1"  # a criterion unknown here is said as given


def test_the_why_line_on_the_page_quotes_the_words_typed(sample_pages: TestClient) -> None:
    page = Html(sample_pages.get("/", params={"env": "SAMPLE", "text": "commutative addition", "limit": "5"}).text)
    whys = page.inner("why")
    assert whys and all(why.startswith("why here: ") for why in whys), whys
    said = next(why for why in whys if '"commutative", "addition" in the name' in why)
    assert "(text score " in said and not re.search(r"\b(commut|addit|bm25|text_score)\b", said), said


# --- the pages over HTTP -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The app on a catalog whose one declaration `Evil.doc` has `HOSTILE_DOC` as docstring."""
    root = tmp_path_factory.mktemp("hostile-docs") / "root"
    build(root, "DOCS", stream([declaration(["Evil", "doc"], doc=HOSTILE_DOC)]))
    engine = Engine(root)
    try:
        yield TestClient(create_app(engine), base_url="http://127.0.0.1")
    finally:
        engine.close()


@pytest.mark.parametrize("path", ["/?env=DOCS&q=doc", "/d/Evil.doc?env=DOCS"])
def test_a_hostile_docstring_is_inert_on_the_pages(hostile_docs: TestClient, path: str) -> None:
    page = hostile_docs.get(path)
    assert page.status_code == 200
    main = page.text[page.text.index("<main>") : page.text.index("</main>")]
    parsed = Html(main)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert all(href is not None and (href.startswith("/") and not href.startswith("//") or link_problem(href) is None)
               for href in parsed.hrefs()), parsed.hrefs()
    assert not [a for _, key, a in parsed.attributes if key.startswith("on")]
    assert "Innocent first line with" in "".join(parsed.text)
    if path.startswith("/d/"):
        assert "<script>window.__pwned = 1</script>" in "".join(parsed.text)


@pytest.fixture(scope="module")
def sample_pages(sample_root: Path) -> Iterator[TestClient]:  # noqa: F811
    engine = Engine(sample_root)
    try:
        yield TestClient(create_app(engine), base_url="http://127.0.0.1")
    finally:
        engine.close()


def test_no_result_gets_a_hint(sample_pages: TestClient) -> None:
    # One name fragment that is no name: the catalog's closest names, linked.
    alone = Html(sample_pages.get("/", params={"env": "SAMPLE", "q": "add_comn"}).text)
    hint = " ".join(alone.inner("hint"))
    assert "No declaration matches every filter." in hint and "Names close to add_comn:" in hint
    assert "/d/Nat.add_comm?env=SAMPLE" in alone.hrefs()
    assert "/?env=SAMPLE&text=add_comn" in alone.hrefs()  # the fragment as words
    # Several parts: the same search without each one; each link asks exactly one part less.
    # The words box is one part: any one of its words is enough, so leaving out one finds no more.
    page = sample_pages.get("/", params={"env": "SAMPLE", "q": "add_comm zzz", "kind": "theorem", "text": "nothingatall zzqqxx"})
    parsed = Html(page.text)
    hint = " ".join(parsed.inner("hint"))
    assert "Every part must hold: try fewer" in hint and "Names close to" not in hint
    without = [h for h in parsed.hrefs() if h and "q=" in h or h and "text=" in h]
    assert "/?env=SAMPLE&q=add_comm+zzz&kind=theorem" in without  # the words box left out
    assert not [h for h in without if "text=nothingatall&" in h or "text=zzqqxx&" in h]  # never one word of it
    assert "without nothingatall zzqqxx" in hint
    assert "/?env=SAMPLE&q=add_comm&text=nothingatall+zzqqxx&kind=theorem" in without
    assert "/?env=SAMPLE&q=add_comm+zzz&text=nothingatall+zzqqxx" in without  # the kind field left out
    followed = sample_pages.get("/?env=SAMPLE&q=add_comm&kind=theorem")
    assert "Nat.add_comm</a>" in followed.text
    # One words-box word: look for it as a part of a name.
    worded = Html(sample_pages.get("/", params={"env": "SAMPLE", "text": "zzqqxx"}).text)
    assert "/?env=SAMPLE&q=zzqqxx" in worded.hrefs()


def test_the_page_has_one_help_text(sample_pages: TestClient) -> None:
    page = sample_pages.get("/", params={"env": "SAMPLE"}).text
    parsed = Html(page)
    assert page.count('class="syntax"') == 1 and "#syntax" in parsed.hrefs()
    intro = page[page.index("<main>") : page.index("</main>")]
    # The intro gives examples and points to the help; the rules are said once, in the help.
    assert "Filters and syntax" in intro and "a part of a name" not in intro and "must" not in intro
    help_text = " ".join(parsed.inner("syntax"))
    assert "its words may match in any order and not all are needed" in help_text
    assert "words that must all occur" not in help_text
    assert "comm also finds commutativity" not in help_text
