"""Lean 4 names on the Python side: components, printing, parsing and `Name.lt` order.

A Lean `Name` is a chain of components from the root, each a string (`Name.str`) or a
natural number (`Name.num`). Here a name is a tuple of `str | int` components, root first.

The order is Lean's own `Name.cmp` (lean4 `src/Lean/Data/Name.lean`): it recurses from the
last component towards the root; at each step a numeric component sorts before a string one,
and a name whose components run out first sorts first; only when the prefixes compare equal
are the components themselves compared (strings by code point, numbers by value).
`Name.lt x y` is `cmp x y == .lt`. This is not the order of the printed strings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeAlias

Component: TypeAlias = str | int
Components: TypeAlias = tuple[Component, ...]

ESCAPE_OPEN = "«"
ESCAPE_CLOSE = "»"


class NameSyntaxError(ValueError):
    """A printed name that cannot be read as a Lean name (unbalanced `«»`, empty component)."""


def name_cmp(a: Sequence[Component], b: Sequence[Component]) -> int:
    """Compare two names exactly as Lean's `Name.cmp`; return -1, 0 or 1.

    `a` and `b` are component sequences, root first. Mirrors the recursion of `Name.cmp` in
    lean4 `src/Lean/Data/Name.lean`: aligned from the last component, the first position where
    the kinds differ decides (`num < str`); otherwise the name that runs out first is smaller;
    otherwise the components are compared root first.
    """
    i, j = len(a) - 1, len(b) - 1
    while i >= 0 and j >= 0:
        a_num, b_num = isinstance(a[i], int), isinstance(b[j], int)
        if a_num != b_num:
            return -1 if a_num else 1
        i -= 1
        j -= 1
    if i >= 0:
        return 1
    if j >= 0:
        return -1
    for x, y in zip(a, b, strict=False):  # the shorter name ends the comparison
        if x != y:
            return -1 if x < y else 1  # type: ignore[operator]  # same kind at each aligned position
    return 0


def name_lt(a: Sequence[Component], b: Sequence[Component]) -> bool:
    """Lean's `Name.lt`: `name_cmp(a, b) == -1`."""
    return name_cmp(a, b) < 0


def name_sort_key(components: Sequence[Component]) -> tuple[tuple[int, ...], Components]:
    """A key whose tuple order equals `name_cmp`, for `sorted(..., key=name_sort_key)`.

    The first part lists the component kinds from the last one (0 numeric, 1 string) ended by
    -1, so a differing kind or a name running out decides first, as in `Name.cmp`; names with
    identical kind sequences then compare their components root first, kind by kind.
    """
    kinds = tuple(0 if isinstance(c, int) else 1 for c in reversed(components)) + (-1,)
    return kinds, tuple(components)


def _is_letter_like(c: str) -> bool:
    # `Lean.isLetterLike` (lean4 `src/Init/Meta/Defs.lean`), including the Latin-1 and
    # Latin Extended-A ranges it gained in 2025.
    v = ord(c)
    return (
        (0x3B1 <= v <= 0x3C9 and v != 0x3BB)
        or (0x391 <= v <= 0x3A9 and v not in (0x3A0, 0x3A3))
        or 0x3CA <= v <= 0x3FB
        or 0x1F00 <= v <= 0x1FFE
        or 0x2100 <= v <= 0x214F
        or 0x1D49C <= v <= 0x1D59F
        or (0xC0 <= v <= 0xFF and v not in (0xD7, 0xF7))
        or 0x100 <= v <= 0x17F
    )


def _is_subscript_alnum(c: str) -> bool:
    v = ord(c)
    return 0x2080 <= v <= 0x2089 or 0x2090 <= v <= 0x209C or 0x1D62 <= v <= 0x1D6A or v == 0x2C7C


def _is_id_first(c: str) -> bool:
    return c.isascii() and c.isalpha() or c == "_" or _is_letter_like(c)


def _is_id_rest(c: str) -> bool:
    return (
        c.isascii() and c.isalnum() or c in "_'!?" or _is_letter_like(c) or _is_subscript_alnum(c)
    )


_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*")


def _format_component(c: Component) -> str:
    if isinstance(c, int):
        return str(c)
    if _ASCII_IDENTIFIER.fullmatch(c) or (c and _is_id_first(c[0]) and all(_is_id_rest(ch) for ch in c[1:])):
        return c
    if ESCAPE_CLOSE in c:
        return c  # `escapePart` gives up (`none`) and the component prints as it is
    return ESCAPE_OPEN + c + ESCAPE_CLOSE


def _last_string(components: Sequence[Component]) -> str | None:
    return next((c for c in reversed(components) if isinstance(c, str)), None)


def _escaping_applies(components: Sequence[Component]) -> bool:
    """False where Lean's `Name.toString` turns escaping off: inaccessible user names
    (`isInaccessibleUserName`: the last string component contains `✝` or is `_inaccessible`),
    names with macro scopes (`hasMacroScopes`: the last string component is `_hyg`), and the
    delaborator's pseudo-syntax (the name `_`, or a root component starting with `#` or `?`)."""
    last = _last_string(components)
    if last is not None and ("✝" in last or last in ("_inaccessible", "_hyg")):
        return False
    if tuple(components) == ("_",):
        return False
    root = components[0] if components else None
    return not (isinstance(root, str) and root[:1] in ("#", "?"))


def format_name(components: Sequence[Component]) -> str:
    """Print a name the way Lean's `Name.toString` (escape := true) does.

    String components that are not identifiers (`Lean.isIdFirst`/`isIdRest`) are wrapped in
    `«»` unless they contain `»` (which cannot be escaped); numeric components print as
    digits; names with macro scopes, inaccessible names and pseudo-syntax print unescaped
    (`Name.toStringWithToken` in lean4 `src/Init/Meta/Defs.lean`). Records from Lean carry
    Lean's own printing, so this is used for names built here (namespaces, suggestions), not to
    second-guess Lean.
    """
    if not _escaping_applies(components):
        return ".".join(str(c) for c in components)
    return ".".join(_format_component(c) for c in components)


def parse_name(text: str) -> Components:
    """Read a printed name back into components.

    Splits on `.` outside `«»`; an escaped segment is one string component; an unescaped
    segment of ASCII digits is a numeric component. Raises `NameSyntaxError` for an empty
    name, an empty component or unbalanced `«»`.
    """
    if not text:
        raise NameSyntaxError("empty name")
    if ESCAPE_OPEN not in text and ESCAPE_CLOSE not in text:
        segments = text.split(".")
        if "" in segments:
            raise NameSyntaxError(f"empty component in {text!r}")
        return tuple(_segment(s, text) for s in segments)
    parts: list[Component] = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == ESCAPE_OPEN:
            close = text.find(ESCAPE_CLOSE, i + 1)
            if close < 0:
                raise NameSyntaxError(f"unclosed «» in {text!r}")
            parts.append(text[i + 1 : close])
            i = close + 1
            if i < n and text[i] != ".":
                raise NameSyntaxError(f"text after » in {text!r}")
        else:
            dot = text.find(".", i)
            end = n if dot < 0 else dot
            segment = text[i:end]
            if not segment:
                raise NameSyntaxError(f"empty component in {text!r}")
            if ESCAPE_OPEN in segment or ESCAPE_CLOSE in segment:
                raise NameSyntaxError(f"misplaced «» in {text!r}")
            parts.append(_segment(segment, text))
            i = end
        if i >= n:
            return tuple(parts)
        i += 1  # skip the dot
        if i >= n:
            raise NameSyntaxError(f"empty component in {text!r}")


def printed_namespace(name: str, components: Sequence[Component]) -> str | None:
    """The namespace part of a printed name (everything before its last component), taken
    from Lean's own printing rather than re-printed; None for a one-component name.

    `name` is Lean's printing of `components` (the stream validator checks it), where the last
    component appears as its digits, as it is, or escaped as `«last»`; the printing of the rest
    may not read back (escaping is off for a whole name with macro scopes or `✝`).
    """
    if len(components) < 2:
        return None
    last = components[-1]
    if isinstance(last, int):
        printed_last = str(last)
    elif name.endswith("." + ESCAPE_OPEN + last + ESCAPE_CLOSE):
        printed_last = ESCAPE_OPEN + last + ESCAPE_CLOSE
    else:
        printed_last = last
    return name[: len(name) - len(printed_last) - 1]


def _segment(segment: str, text: str) -> Component:
    """An unescaped segment: digits are a numeric component, printed by Lean without leading
    zeros (a string component `01` would be escaped as `«01»`); anything else is a string."""
    if segment.isascii() and segment.isdigit():
        if len(segment) > 1 and segment[0] == "0":
            raise NameSyntaxError(f"numeric component {segment!r} with a leading zero in {text!r}")
        return int(segment)
    return segment


def namespace_key(components: Sequence[Component]) -> str:
    """A prefix-free string encoding of components, for namespace range look-ups.

    Each component is encoded self-delimiting (`s<len>:<text>` or `n<value>:`), so one name's
    key is a string prefix of another's exactly when its components are a leading part of the
    other's components. The character after a whole key is always `n` or `s`, which is what
    makes `[key + "n", key + "t")` the range of names strictly inside a namespace.
    """
    return "".join(
        f"n{c}:" if isinstance(c, int) else f"s{len(c)}:{c}" for c in components
    )
