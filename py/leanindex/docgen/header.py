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

_WHITESPACE = re.compile(r"[ \t\n\r\f]+")  # HTML's ASCII whitespace, not Unicode spaces
_CONSTANT_LINK = re.compile(r"^\./[^#]*\.html#(.+)$")
_TOKEN = re.compile(r'<(?P<close>/?)(?P<tag>[a-z][a-z0-9]*)(?P<attrs>(?:\s+[a-zA-Z_:-]+="[^"<]*")*)\s*>|(?P<text>[^<]+)')
_ATTRIBUTE = re.compile(r'([a-zA-Z_:-]+)="([^"]*)"')

# Sections of the header, decided by the class of each direct child of the root div.
_KIND, _NAME, _SIGNATURE, _EXTENDS = "kind", "name", "signature", "extends"
_SECTION_OF_CLASS = {
    "decl_kind": _KIND,
    "decl_name": _NAME,
    "decl_args": _SIGNATURE,
    "impl_arg": _SIGNATURE,
    "decl_type": _SIGNATURE,
    "decl_extends": _EXTENDS,
}


class HeaderSyntaxError(ValueError):
    """A header that is not a doc-gen4 `decl_header` (unbalanced tags, missing parts)."""


@dataclass(frozen=True)
class RenderedHeader:
    """What a header says, as plain text.

    `kind_text`: the `decl_kind` text (`unsafe def`, `class inductive`, ...). `name_text`: the
    printed name in `decl_name`. `signature`: the binders and `: type` exactly as doc-gen4
    printed them, tags stripped, entities decoded, runs of whitespace collapsed to one space,
    without the declaration's name and without an `extends` clause (`(n m : Nat) : n + m = m + n`;
    `: Type` when there are no binders). `constants`: the constants linked from the binders and
    the type (percent-decoded link fragments), sorted by code point, without duplicates.
    """

    kind_text: str
    name_text: str
    signature: str
    constants: tuple[str, ...]


def collapse_whitespace(text: str) -> str:
    """Runs of HTML whitespace become one space; leading and trailing whitespace is dropped."""
    return _WHITESPACE.sub(" ", text).strip()


def parse_header(html: str) -> RenderedHeader:
    """Read one doc-gen4 `decl_header` HTML fragment (see the module docstring).

    The fragment is machine-written by doc-gen4's `Html.toString`, which escapes text and
    attribute values, so a strict tokenizer reads it: tags with double-quoted attributes and
    text, nothing else (no comments, no self-closing tags). It is about four times faster than
    `html.parser`, which matters at 300,000 headers. Raises `HeaderSyntaxError` when the fragment
    is not one balanced `decl_header` div with a `decl_kind`, a `decl_name` and a `decl_type`.
    """
    stack: list[str] = []
    root_seen = False
    section: str | None = None
    seen: set[str] = set()
    text: dict[str, list[str]] = {_KIND: [], _NAME: [], _SIGNATURE: [], _EXTENDS: []}
    constants: set[str] = set()
    pos, end = 0, len(html)
    while pos < end:
        token = _TOKEN.match(html, pos)
        if token is None:
            raise HeaderSyntaxError(f"unreadable HTML at offset {pos}: {html[pos:pos + 40]!r}")
        pos = token.end()
        data = token.group("text")
        if data is not None:
            if not stack:
                if data.strip():
                    raise HeaderSyntaxError(f"text outside the decl_header div: {data.strip()[:40]!r}")
            elif section is not None:
                text[section].append(unescape(data) if "&" in data else data)
            continue
        tag = token.group("tag")
        if token.group("close"):
            if not stack or stack[-1] != tag:
                raise HeaderSyntaxError(f"unbalanced </{tag}>")
            stack.pop()
            continue
        attributes = {key: unescape(value) for key, value in _ATTRIBUTE.findall(token.group("attrs"))}
        classes = attributes.get("class", "").split()
        if not stack:
            if root_seen or tag != "div" or "decl_header" not in classes:
                raise HeaderSyntaxError(f'expected one <div class="decl_header">, found <{tag}>')
            root_seen = True
        elif len(stack) == 1:
            # A direct child of the root opens a section; children without a known class (the
            # parents after `extends`) continue the current one. The children are laid out as
            # separate boxes (`decl_type` is a block), hence the space between them.
            for name in classes:
                if name in _SECTION_OF_CLASS:
                    section = _SECTION_OF_CLASS[name]
                    seen.add(name)
                    break
            if section is not None:
                text[section].append(" ")
        if tag == "a" and section == _SIGNATURE:
            link = _CONSTANT_LINK.match(attributes.get("href", ""))
            if link:
                constants.add(unquote(link.group(1)))
        stack.append(tag)
    if not root_seen:
        raise HeaderSyntaxError("empty header")
    if stack:
        raise HeaderSyntaxError("the decl_header div is not closed")
    for part in ("decl_kind", "decl_name", "decl_type"):
        if part not in seen:
            raise HeaderSyntaxError(f"no {part} element")
    return RenderedHeader(
        kind_text=collapse_whitespace("".join(text[_KIND])),
        name_text=collapse_whitespace("".join(text[_NAME])),
        signature=collapse_whitespace("".join(text[_SIGNATURE])),
        constants=tuple(sorted(constants)),
    )
