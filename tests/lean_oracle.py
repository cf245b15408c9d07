"""Lean's `Name.cmp`, transcribed for the tests as an oracle.

This is the literal recursive definition of `Lean.Name.cmp` from lean4 `src/Lean/Data/Name.lean`
(read at commit 00999644a5dc), on names built the way Lean builds them (`anonymous`, `str p s`,
`num p n`), so `leanindex.names.name_cmp` (iterative) is checked against the definition rather
than against itself, and test catalogs are sorted without the code under test.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

ANONYMOUS = None


def lean_name(components: Sequence[Any]) -> Any:
    """`Name.mkStr`/`Name.mkNum` applied root first: `("str", prefix, s)` / `("num", prefix, n)`."""
    name = ANONYMOUS
    for c in components:
        name = ("num", name, c) if isinstance(c, int) else ("str", name, c)
    return name


def compare(x: Any, y: Any) -> int:
    """Lean's `compare` on `Nat` and on `String` (lexicographic by `Char`, i.e. code point)."""
    return -1 if x < y else (1 if x > y else 0)


def lean_cmp(a: Any, b: Any) -> int:
    """`Name.cmp`, case by case in the order Lean's equations list them."""
    if a is ANONYMOUS and b is ANONYMOUS:
        return 0
    if a is ANONYMOUS:
        return -1
    if b is ANONYMOUS:
        return 1
    tag_a, prefix_a, last_a = a
    tag_b, prefix_b, last_b = b
    if tag_a == "num" and tag_b == "str":
        return -1
    if tag_a == "str" and tag_b == "num":
        return 1
    order = lean_cmp(prefix_a, prefix_b)
    return compare(last_a, last_b) if order == 0 else order


def oracle(a: Sequence[Any], b: Sequence[Any]) -> int:
    """`Name.cmp` on two component sequences: -1, 0 or 1."""
    return lean_cmp(lean_name(a), lean_name(b))


lean_order_key = functools.cmp_to_key(oracle)


@st.composite
def related_pair(draw: st.DrawFn, component: st.SearchStrategy[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Two names of `component`s sharing a prefix, suffix or length, so ties are common."""
    shared = draw(st.lists(component, max_size=3))
    a = tuple(draw(st.lists(component, max_size=3)) + shared)
    b = tuple(draw(st.lists(component, max_size=3)) + shared)
    if draw(st.booleans()):
        b = a[: draw(st.integers(0, len(a)))] + b
    return a, b
