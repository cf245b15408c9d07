"""`names.py` against Lean's own `Name.cmp` (transcribed in `lean_oracle.py`) and
`Name.toString`."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lean_oracle import oracle, related_pair
from leanindex.names import (
    NameSyntaxError,
    format_name,
    name_cmp,
    name_lt,
    name_sort_key,
    parse_name,
)

PROPERTIES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- strategies ---------------------------------------------------------------------------------

# A small alphabet makes equal prefixes and equal components frequent, which is where the
# interesting cases of `Name.cmp` live; the wide one covers code point order (Latin-1, Greek,
# mathematical alphanumerics beyond the BMP, private use area above the surrogates).
NARROW_TEXT = st.text(alphabet="abAB_", min_size=0, max_size=3)
WIDE_TEXT = st.text(
    alphabet=st.sampled_from(["a", "z", "Z", "ä", "α", "ℕ", "\ue000", "\uffff", "𝔸", "😀", "_", "'", " ", "."]),
    min_size=0,
    max_size=4,
)
COMPONENT = st.one_of(NARROW_TEXT, WIDE_TEXT, st.integers(0, 12), st.integers(0, 2**70))
NAME = st.lists(COMPONENT, min_size=0, max_size=6).map(tuple)
NONEMPTY_NAME = st.lists(COMPONENT, min_size=1, max_size=6).map(tuple)


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


# --- known pairs --------------------------------------------------------------------------------

LESS_THAN = [
    # fewer components first when the prefixes run out first
    (("zz",), ("a", "b")),
    (("Zzz",), ("A", "b")),
    (("Nat", "add_comm"), ("Nat", "add", "foo")),
    # a numeric last component before a string one, whatever the rest
    (("a", 1), ("a", "b")),
    (("x", 1), ("y", "z", "w")),
    (("z", "z", 5), ("a", "b")),
    # numbers by value, not by their digits
    (("a", 2), ("a", 10)),
    (("a", 9), ("a", 2**64)),
    # strings by code point
    (("B",), ("a",)),
    (("a",), ("ä",)),
    (("Z",), ("_",)),
    (("_",), ("a",)),
    (("\uffff",), ("𝔸",)),
    (("\ue000",), ("𝔸",)),  # UTF-16 code-unit order would put the astral character first
    (("",), ("a",)),
    (("a",), ("ab",)),
    # private names: `_private.<Module>.0.<name>`
    (("x",), ("_private", "M", 0, "x")),
    (("Nat", "foo"), ("_private", "Init", "Data", 0, "Nat", "foo")),
    (("_private", "M", 0, "x"), ("a", "x")),
    (("_private", "M", 0, "x"), ("y", "z")),
    (("_private", "M", 0, "x"), ("a", "b", "c", "d")),
    (("_private", "A", 0, "x"), ("_private", "B", 0, "x")),
    (("_private", "M", 0, "x"), ("_private", "M", 1, "x")),
    (("_private", "M", 0, "y"), ("_private", "M", 0, "x", "y")),
    # the root runs out first
    ((), ("a",)),
    ((), (0,)),
]


@pytest.mark.parametrize(("a", "b"), LESS_THAN, ids=[f"{format_name(a) or '[anonymous]'}<{format_name(b)}" for a, b in LESS_THAN])
def test_known_pairs(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert oracle(a, b) == -1, "the oracle itself disagrees with the pair"
    assert name_cmp(a, b) == -1
    assert name_cmp(b, a) == 1
    assert name_lt(a, b) and not name_lt(b, a)
    assert name_sort_key(a) < name_sort_key(b)


@pytest.mark.parametrize("a", [(), ("a",), ("Nat", "add_comm"), ("_private", "M", 0, "x"), ("a", 0, "b", 7)])
def test_equal_names_compare_equal(a: tuple[Any, ...]) -> None:
    assert name_cmp(a, list(a)) == 0
    assert not name_lt(a, a)


def test_numeric_and_string_components_are_never_equal() -> None:
    assert name_cmp(("a", 1), ("a", "1")) == -1
    assert name_cmp(("1",), (1,)) == 1


def test_not_printed_string_order() -> None:
    names = [("Nat", "add", "foo"), ("Nat", "add_comm"), ("Zz",), ("a", "b"), ("a", 10), ("a", 2)]
    in_lean_order = sorted(names, key=name_sort_key)
    # `a.2` and `a.10` end in a number, so they come before every name ending in a string; then
    # one component before two; `Nat` < `a` by code point.
    expected = [("a", 2), ("a", 10), ("Zz",), ("Nat", "add_comm"), ("a", "b"), ("Nat", "add", "foo")]
    assert in_lean_order == expected
    assert sorted(names, key=functools.cmp_to_key(oracle)) == expected
    assert in_lean_order != sorted(names, key=format_name)


# --- properties ---------------------------------------------------------------------------------


@PROPERTIES
@given(st.one_of(st.tuples(NAME, NAME), related_pair(COMPONENT)))
def test_name_cmp_is_lean_cmp(pair: tuple[tuple[Any, ...], tuple[Any, ...]]) -> None:
    a, b = pair
    assert name_cmp(a, b) == oracle(a, b)
    assert name_lt(a, b) == (oracle(a, b) == -1)


@PROPERTIES
@given(st.one_of(st.tuples(NAME, NAME), related_pair(COMPONENT)))
def test_antisymmetric_and_zero_only_on_equal(pair: tuple[tuple[Any, ...], tuple[Any, ...]]) -> None:
    a, b = pair
    assert name_cmp(a, b) == -name_cmp(b, a)
    assert (name_cmp(a, b) == 0) == (a == b)


@PROPERTIES
@given(st.lists(NAME, min_size=3, max_size=12))
def test_transitive(names: list[tuple[Any, ...]]) -> None:
    for a in names:
        for b in names:
            for c in names:
                if name_cmp(a, b) <= 0 and name_cmp(b, c) <= 0:
                    assert name_cmp(a, c) <= 0


@PROPERTIES
@given(st.one_of(st.tuples(NAME, NAME), related_pair(COMPONENT)))
def test_sort_key_agrees_with_cmp(pair: tuple[tuple[Any, ...], tuple[Any, ...]]) -> None:
    a, b = pair
    ka, kb = name_sort_key(a), name_sort_key(b)
    assert sign((ka > kb) - (ka < kb)) == oracle(a, b)


@PROPERTIES
@given(st.lists(NAME, max_size=20))
def test_sorting_by_key_is_sorting_by_lean_cmp(names: list[tuple[Any, ...]]) -> None:
    assert sorted(names, key=name_sort_key) == sorted(names, key=functools.cmp_to_key(oracle))


# --- printing and parsing -----------------------------------------------------------------------

# Components Lean can print so that they read back: anything but a string containing `»`
# (Lean's `escapePart` gives up on those).
PRINTABLE_COMPONENT = st.one_of(
    st.integers(0, 2**64),
    st.text(min_size=0, max_size=6).filter(lambda s: "»" not in s),
    st.text(alphabet="abcxyzABC_'!?0123456789αβℕ₀ä.« ", min_size=0, max_size=6),
)


def escaped_by_lean(components: tuple[Any, ...]) -> bool:
    """Whether Lean's `Name.toString` escapes this name at all (not for macro scopes,
    inaccessible names or pseudo-syntax, `Name.toStringWithToken`): those may not round trip."""
    last = next((c for c in reversed(components) if isinstance(c, str)), None)
    if last is not None and ("✝" in last or last in ("_inaccessible", "_hyg")):
        return False
    root = components[0]
    return components != ("_",) and not (isinstance(root, str) and root[:1] in ("#", "?"))


@PROPERTIES
@given(st.lists(PRINTABLE_COMPONENT, min_size=1, max_size=6).map(tuple).filter(escaped_by_lean))
def test_format_then_parse_round_trips(components: tuple[Any, ...]) -> None:
    printed = format_name(components)
    assert parse_name(printed) == components
    assert format_name(parse_name(printed)) == printed


@pytest.mark.parametrize(
    ("components", "printed"),
    [
        (("Nat", "add_comm"), "Nat.add_comm"),
        (("Foo", "bar baz"), "Foo.«bar baz»"),
        (("a", 1), "a.1"),
        (("a", "1"), "a.«1»"),
        (("_private", "Init", "Core", 0, "Nat", "x"), "_private.Init.Core.0.Nat.x"),
        (("Nat", "succ_le'"), "Nat.succ_le'"),
        (("α", "ℕ₀"), "α.ℕ₀"),
        (("x", "a.b"), "x.«a.b»"),
        (("x", ""), "x.«»"),
        (("x", "2x"), "x.«2x»"),
        (("Über", "größe"), "Über.größe"),
        (("😀",), "«😀»"),
    ],
)
def test_format_name_escapes_non_identifiers(components: tuple[Any, ...], printed: str) -> None:
    assert format_name(components) == printed
    assert parse_name(printed) == components


@pytest.mark.parametrize(
    ("components", "printed"),
    [
        # `escapePart` returns `none` for a component containing `»`: printed as it is
        (("a»b",), "a»b"),
        (("x", "a b»"), "x.a b»"),
        # macro scopes (`hasMacroScopes`: last string component `_hyg`): no escaping at all
        (("Foo", "_@", "Init", "Prelude", "_hyg", 12), "Foo._@.Init.Prelude._hyg.12"),
        (("a b", "_@", "M", "_hyg", 3), "a b._@.M._hyg.3"),
        # inaccessible user names (`isInaccessibleUserName`): no escaping
        (("h x✝",), "h x✝"),
        (("a b", "_inaccessible"), "a b._inaccessible"),
        (("a b", "x✝", 1), "a b.x✝.1"),
        # pseudo-syntax (`maybePseudoSyntax`): `_`, roots starting with `#` or `?`
        (("_",), "_"),
        (("#0",), "#0"),
        (("?u", "a b"), "?u.a b"),
        # but only those: `_` elsewhere, `✝` before the last string component, `_hyg` not last
        (("_", "a b"), "_.«a b»"),
        (("x✝", "a b"), "«x✝».«a b»"),
        (("_hyg", "a b"), "_hyg.«a b»"),
        (("a", "#0"), "a.«#0»"),
    ],
)
def test_format_name_follows_lean_where_escaping_is_off(components: tuple[Any, ...], printed: str) -> None:
    assert format_name(components) == printed


@pytest.mark.parametrize(
    ("text", "components"),
    [
        ("«Nat».succ", ("Nat", "succ")),
        ("Nat.«succ»", ("Nat", "succ")),
        ("«a.b».c", ("a.b", "c")),
        ("x.0.y", ("x", 0, "y")),
        ("x.١", ("x", "١")),  # Arabic-Indic digit: not a Lean numeric component
    ],
)
def test_parse_name_reads_escapes_and_numbers(text: str, components: tuple[Any, ...]) -> None:
    assert parse_name(text) == components


# `x.007`: Lean prints numeric components without leading zeros (a string `007` is `«007»`).
@pytest.mark.parametrize("text", ["", "«a", "a.«b", "a»", "a.b»c", "«a»b", "a..b", "a.", ".a", "«a».", "a«b", "x.007"])
def test_parse_name_refuses_malformed(text: str) -> None:
    with pytest.raises(NameSyntaxError):
        parse_name(text)
