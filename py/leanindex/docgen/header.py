"""Reading the HTML signature doc-gen4 renders for a declaration (`header` in its data files).

doc-gen4 (`docInfoHeader` in `DocGen4/Output/Module.lean`) writes one
`<div class="decl_header">` whose direct children are, in order:

- `<span class="decl_kind">`: the kind as `DocInfo.getKindDescription` prints it (`theorem`,
  `unsafe def`, `noncomputable abbrev`, `partial def`, `class inductive`, `constructor`, ...);
- `<span class="decl_name">`: the declaration's name (one link to itself);
- the binders, each a `<span class="decl_args">` (explicit) or a `<span class="impl_arg">`
  wrapping one (implicit, strict-implicit and instance binders);
- for structures and classes with parents, `<span class="decl_extends">extends</span>` followed
  by the parents (not part of the constant's type);
- `<span class="decl_args"> :</span>` and `<div class="decl_type">`: the type after the colon.

Every constant the delaborator linked is an `<a href="./A/B.html#Name">`; sorts link to
`./foundational_types.html` without a fragment and are not constants.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from urllib.parse import unquote

_ROOT_OPEN = '<div class="decl_header">'
_DIV_CLOSE = "</div>"
_KIND = re.compile(r'\s*<span class="decl_kind">([^<]*)</span>')
_NAME_OPEN = re.compile(r'\s*<span class="decl_name"[^>]*>')  # doc-gen4 adds a title when sorried
_NAME_CLOSE = re.compile(r"\s*</span>")
_COLON_OPEN = '<span class="decl_args">'
_EXTENDS_OPEN = '<span class="decl_extends">'
_TYPE_OPEN = '<div class="decl_type">'
_TAG = re.compile(r"<[^>]*>")
_CONSTANT_LINK = re.compile(r'<a [^>]*?href="\./([^"#]*)\.html#([^"]+)"')
_WHITESPACE = re.compile(r"[ \t\n\r\f]+")  # HTML's ASCII whitespace, not Unicode spaces
_BALANCED = (("<span", "</span>"), ("<a ", "</a>"), ("<div", "</div>"))


class HeaderSyntaxError(ValueError):
    """A header that is not a doc-gen4 `decl_header` (unbalanced tags, missing parts)."""


@dataclass(frozen=True)
class RenderedHeader:
    """What a header says, as plain text.

    `kind_text`: the `decl_kind` text (`unsafe def`, `class inductive`, ...). `signature`: the
    binders and `: type` exactly as doc-gen4 printed them, tags stripped, entities decoded, runs
    of whitespace collapsed to one space, without the declaration's name and without an
    `extends` clause: `(n m : Nat) : n + m = m + n`, or `: Type` when there are no binders.
    `constants`: the constants linked from the binders and the type (link fragments with HTML
    entities and percent-encoding decoded), sorted by code point, without duplicates.
    `conclusion_constants` and `conclusion_head` approximate the conclusion (see `conclusion`).
    `links`: each linked constant with the module its link points into (`./A/B.html#N` is
    constant `N` of module `A.B`), as (module, constant) pairs, sorted, without duplicates.
    """

    kind_text: str
    signature: str
    constants: tuple[str, ...]
    conclusion_constants: tuple[str, ...] = ()
    conclusion_head: str | None = None
    links: tuple[tuple[str, str], ...] = ()


def collapse_whitespace(text: str) -> str:
    """Runs of HTML whitespace become one space; leading and trailing whitespace is dropped."""
    return _WHITESPACE.sub(" ", text).strip()


def _plain(html: str) -> str:
    text = _TAG.sub("", html)
    if "<" in text:
        raise HeaderSyntaxError(f"unreadable HTML near {text[text.index('<'):][:40]!r}")
    return unescape(text) if "&" in text else text


def _constant(fragment: str) -> str:
    # An attribute value is HTML-escaped (`#«term_&lt;&amp;&amp;&gt;_»`), and may also be
    # percent-encoded; undo the HTML escaping first, as a browser does before following it.
    return unquote(unescape(fragment) if "&" in fragment else fragment)


def _module(path: str) -> str:
    # doc-gen4 writes a module's page at its components joined by `/` (`moduleNameToLink`).
    return unquote(unescape(path) if "&" in path else path).replace("/", ".")


_OPENING = "([{⦃⟨⟦"
_CLOSING = ")]}⦄⟩⟧"
_LINK_TEXT = re.compile(r'<a [^>]*?href="\./[^"#]*\.html#([^"]+)"[^>]*>(.*?)</a>', re.S)


# A tag (to its `>`, or to the end when unclosed) or one character a binder scan reads.
_STRUCTURE = re.compile(r"<[^>]*(?:>|$)|[" + re.escape(_OPENING + _CLOSING) + r"∀,→]")


def _structure(html: str, watch: frozenset[int] = frozenset()) -> tuple[list[int], dict[int, int]]:
    """One pass over the text of `html` outside tags: the offsets just after each `→` and after
    the `,` of each `∀ ...,` that stand outside brackets (where a binder of the type ends), and
    at each offset of `watch` where a tag starts, openers less closers before it. Only the tags
    and the characters that matter are visited (a regular expression finds them)."""
    cuts: list[int] = []
    depths: dict[int, int] = {}
    depth = forall_open = balance = 0
    for match in _STRUCTURE.finditer(html):
        char = match.group()
        if char[0] == "<":
            if match.start() in watch:
                depths[match.start()] = balance
        elif char in _OPENING:
            depth += 1
            balance += 1
        elif char in _CLOSING:
            depth = max(depth - 1, 0)
            balance -= 1
        elif depth == 0 and char == "∀":
            forall_open += 1
        elif depth == 0 and char == "," and forall_open:
            forall_open -= 1
            cuts.append(match.end())
        elif depth == 0 and char == "→" and not forall_open:
            cuts.append(match.end())
    return cuts, depths


def conclusion(type_html: str) -> tuple[tuple[str, ...], str | None]:
    """An approximation of the conclusion of a doc-gen4 type: the part after the last top-level
    `→` or `∀ ...,`; its linked constants (sorted, unique), and its head: the constant of its
    first link when the conclusion's text starts with that link's text (`Group G`), else the
    only top-level link (`a = b`), else None. Notation that links nothing (`∑ x ∈ s, f x`)
    and instance arguments, which doc-gen4 does not print, are missed."""
    cuts, _ = _structure(type_html)
    tail = type_html[cuts[-1] :] if cuts else type_html
    links = [(m.start(), _constant(m.group(1)), _plain(m.group(2)).strip()) for m in _LINK_TEXT.finditer(tail)]
    constants = tuple(sorted({constant for _, constant, _ in links}))
    text = collapse_whitespace(_plain(tail))
    if links and links[0][2] and text.startswith(links[0][2]):
        return constants, links[0][1]
    _, depths = _structure(tail, frozenset(start for start, _, _ in links))
    top = [constant for start, constant, _ in links if depths[start] == 0]
    return constants, top[0] if len(top) == 1 else None


def parse_header(html: str) -> RenderedHeader:
    """Read one doc-gen4 `decl_header` HTML fragment (see the module docstring).

    The fragment is machine-written by doc-gen4's `Html.toString`, which escapes `<`, `>`, `&`
    and quotes in text, so its parts are found by their opening tags rather than by a general
    HTML parser (`html.parser` is about five times slower, which matters at 300,000 headers):
    the binders run from the end of `decl_name` to `decl_extends` or to the last `decl_args`
    (the ` :`), the type is the `decl_type` div, and the text of each is its tags stripped.
    Raises `HeaderSyntaxError` when the fragment is not a `decl_header` div with balanced
    `span`/`a`/`div` tags, a `decl_kind`, a `decl_name`, the ` :` and one `decl_type`.
    """
    text = html.strip()
    if not text.startswith(_ROOT_OPEN) or not text.endswith(_DIV_CLOSE + _DIV_CLOSE):
        raise HeaderSyntaxError('not a <div class="decl_header"> ending with its decl_type div')
    for opening, closing in _BALANCED:
        if text.count(opening) != text.count(closing):
            raise HeaderSyntaxError(f"unbalanced {closing} tags")
    kind = _KIND.match(text, len(_ROOT_OPEN))
    if kind is None:
        raise HeaderSyntaxError("no decl_kind span first")
    name_open = _NAME_OPEN.match(text, kind.end())
    name_close = -1 if name_open is None else text.find("</a>", name_open.end())
    name_end = None if name_close < 0 else _NAME_CLOSE.match(text, name_close + len("</a>"))
    if name_end is None:
        raise HeaderSyntaxError("no decl_name span with its link after decl_kind")
    type_open = text.find(_TYPE_OPEN, name_end.end())
    if type_open < 0 or text.find(_TYPE_OPEN, type_open + 1) >= 0:
        raise HeaderSyntaxError("not exactly one decl_type div")
    colon = text.rfind(_COLON_OPEN, name_end.end(), type_open)
    if colon < 0:
        raise HeaderSyntaxError("no decl_args span before decl_type")
    extends = text.find(_EXTENDS_OPEN, name_end.end(), colon)
    binders = text[name_end.end() : colon if extends < 0 else extends]
    type_ = text[type_open + len(_TYPE_OPEN) : len(text) - 2 * len(_DIV_CLOSE)]
    # `decl_type` is a block box, hence the space between the colon and the type.
    signature = collapse_whitespace(" ".join((_plain(binders), _plain(text[colon:type_open]), _plain(type_))))
    links = {(_module(path), _constant(link)) for part in (binders, type_) for path, link in _CONSTANT_LINK.findall(part)}
    constants = {constant for _, constant in links}
    conclusion_constants, conclusion_head = conclusion(type_)
    return RenderedHeader(
        kind_text=collapse_whitespace(kind.group(1)),
        signature=signature,
        constants=tuple(sorted(constants)),
        conclusion_constants=conclusion_constants,
        conclusion_head=conclusion_head,
        links=tuple(sorted(links)),
    )
