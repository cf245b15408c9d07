"""Docstrings on the search page: Markdown rendered to HTML that can hold no script, with TeX
math kept as it was written.

The parser is markdown-it-py (CommonMark, plus tables and strikethrough as doc-gen4 renders
them), set up so that a docstring is text, never markup of its own:

- raw HTML is off: `<script>`, `<img onerror=…>` and every other tag show as escaped text;
- a link is a link only when `catalog.links.link_problem` finds nothing wrong with its
  destination (http or https: the one link rule the catalog and `web.external_link` use);
  any other destination (`javascript:`, `data:`, a relative one) is not parsed as a link, so
  its Markdown source stays on the page as escaped text, with no `href`;
- images are never loaded (the `image` rule is off): `![alt](url)` reads as `!` and a link;
- math is kept as written: `$…$` and `$$…$$` are one `<span class="math">` holding the TeX
  source, dollars included, untouched by emphasis or backslash escapes (`$a*b*c$`,
  `$\\{x\\}$`). Following Pandoc, an opening `$` is followed by a non-space and a closing one is
  preceded by a non-space and not followed by a digit, so `costs $5 and $10` is text. Lean's
  antiquotations (`` `$e` ``) sit in code spans, which are read first.

`render_doc` renders a whole docstring (the declaration page); `summary` its first paragraph,
cut to `SUMMARY_CHARS` visible characters (the results list).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape

from ..catalog.links import link_problem

SUMMARY_CHARS = 200
"""The most visible characters (text, code, math; markup not counted) a result's doc line shows."""
ELLIPSIS = "…"
# A sentence ends at `.`, `?` or `!` (closing brackets and quotes after it kept), then a space.
_SENTENCE_END = re.compile(r"[.?!][)\]\"'’”]*(?=\s)")
# Abbreviations whose period ends no sentence.
_ABBREVIATIONS = frozenset({"e.g", "i.e", "cf", "resp", "etc", "vs", "approx"})
# Token types the summary counts as visible text: their `content` is what the reader sees.
_VISIBLE = frozenset({"text", "code_inline", "math_inline"})
_BREAKS = frozenset({"softbreak", "hardbreak"})


def _math(state: StateInline, silent: bool) -> bool:
    """The inline rule of `$…$` and `$$…$$` (see the module docstring): one `math_inline`
    token whose content is the source, delimiters included."""
    src, start = state.src, state.pos
    if src[start] != "$":
        return False
    if src.startswith("$$", start):
        close = src.find("$$", start + 2, state.posMax)
        if close <= start + 2:
            return False
        end = close + 2
    else:
        if start + 1 >= state.posMax or src[start + 1].isspace() or src[start + 1] == "$":
            return False
        end = -1
        for found in re.finditer(r"\$", src[start + 1 : state.posMax]):
            at = start + 1 + found.start()
            after = src[at + 1] if at + 1 < state.posMax else ""
            if not src[at - 1].isspace() and src[at - 1] != "\\" and not after.isdigit():
                end = at + 1
                break
        if end < 0:
            return False
    if not silent:
        token = state.push("math_inline", "span", 0)
        token.content = src[start:end]
        token.markup = "$"
    state.pos = end
    return True


def _render_math(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<span class="math">{escape(tokens[idx].content)}</span>'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    # The one link rule decides what is a link: markdown-it calls this for links, autolinks
    # and reference definitions alike (its own default only blocks a few schemes).
    md.validateLink = lambda url: link_problem(url) is None  # type: ignore[method-assign]
    md.inline.ruler.before("escape", "math", _math)
    md.add_render_rule("math_inline", _render_math)
    return md


_MD = _parser()


def render_doc(doc: str | None) -> Markup:
    """The whole docstring `doc` as HTML (block elements: paragraphs, lists, code blocks,
    tables); "" for None or blank. Safe to place on a page as it is (see the module docstring)."""
    if not doc or not doc.strip():
        return Markup("")
    return Markup(_MD.render(doc))


def summary(doc: str | None, limit: int = SUMMARY_CHARS) -> Markup:
    """The first paragraph of docstring `doc` (its first block with text: a paragraph, a
    heading, a list's first item) as inline HTML, at most `limit` visible characters: when it
    is longer, cut after the last sentence that fits, else at the last space that fits (an
    over-long first word or code span is kept whole); never inside a code span or math.
    `ELLIPSIS` ends it whenever anything of the docstring is left out (right after the last
    word when the cut is inside a sentence, after a space otherwise). "" for None, blank, or a
    docstring with no text block (only code)."""
    if not doc or not doc.strip():
        return Markup("")
    tokens = _MD.parse(doc)
    at = next((i for i, token in enumerate(tokens) if token.type == "inline"), None)
    if at is None:
        return Markup("")
    children, sentence_cut = _shorten(tokens[at].children or [], limit)
    cut = sentence_cut is not None
    # Anything else with content, before (a code block) or after (more blocks): left out.
    left_out = cut or any(t.nesting == 0 for t in tokens[:at]) or any(t.nesting != -1 for t in tokens[at + 1 :])
    if left_out:
        children.append(_text(f" {ELLIPSIS}" if sentence_cut or not cut else ELLIPSIS))
    return Markup(_MD.renderer.render(children, _MD.options, {}))


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _visible(token: Token) -> str:
    return token.content if token.type in _VISIBLE else " " if token.type in _BREAKS else ""


def _shorten(children: list[Token], limit: int) -> tuple[list[Token], bool | None]:
    """`children` (an inline token's) cut to about `limit` visible characters and whether the
    cut is at a sentence's end (None: not cut). Tags opened before the cut are closed."""
    pieces = [_visible(child) for child in children]
    plain = "".join(pieces)
    if len(plain) <= limit:
        return list(children), None
    # Where each child starts in `plain`, and which characters may be cut at (text, breaks).
    starts: list[int] = []
    cuttable = bytearray(len(plain))
    offset = 0
    for child, piece in zip(children, pieces, strict=True):
        starts.append(offset)
        if child.type == "text" or child.type in _BREAKS:
            cuttable[offset : offset + len(piece)] = b"\x01" * len(piece)
        offset += len(piece)
    at, sentence = _cut_point(plain, cuttable, limit, starts, children, pieces)
    kept: list[Token] = []
    opened: list[Token] = []
    for child, start, piece in zip(children, starts, pieces, strict=True):
        if start > at or (start == at and child.nesting != -1 and (piece or child.nesting == 1)):
            break
        if child.type == "text" and start + len(piece) > at:
            kept.append(_text(piece[: at - start].rstrip()))
            break
        kept.append(child)
        if child.nesting == 1:
            opened.append(child)
        elif child.nesting == -1 and opened:
            opened.pop()
    while kept and kept[-1].type in _BREAKS:
        kept.pop()
    for tag in reversed(opened):
        closing = Token(tag.type.removesuffix("_open") + "_close", tag.tag, -1)
        closing.markup = tag.markup
        kept.append(closing)
    return kept, sentence


def _cut_point(
    plain: str, cuttable: bytearray, limit: int, starts: list[int], children: list[Token], pieces: list[str]
) -> tuple[int, bool]:
    """Where to cut `plain` (a position in it) and whether that is a sentence's end: after the
    last sentence end within `limit`, else at the last cuttable space within it; else (no
    space at all) at `limit` inside a text, or around the code or math crossing `limit`
    (before it, or after it when it comes first)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(plain, 0, limit + 1) if cuttable[m.start()] and not _abbreviation(plain, m.start())]
    if ends:
        return ends[-1], True
    spaces = [i for i in range(min(limit, len(plain) - 1), 0, -1) if cuttable[i] and plain[i].isspace()]
    if spaces:
        return spaces[0], False
    crossing = next(i for i, (start, piece) in enumerate(zip(starts, pieces, strict=True)) if start <= limit < start + len(piece))
    if children[crossing].type == "text":
        return limit, False
    return (starts[crossing] or len(pieces[crossing])), False


def _abbreviation(plain: str, period: int) -> bool:
    """Whether the word ending at position `period` of `plain` is an abbreviation (`e.g.`)."""
    words = plain[:period].rsplit(None, 1)
    return bool(words) and words[-1].lstrip("([").lower() in _ABBREVIATIONS
