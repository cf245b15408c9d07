"""The fast forms of the formula reader agree with their plain forms (issue 29's build time).

`formula.binder_names` uses possessive repeats and `formula.scan` one pass for every multi-
character symbol; the oracles here are plain readings: the greedy binder pattern, and a loop that
replaces the longest symbol starting at each position, left to right, then a three-group token
pattern.
Texts are drawn from the characters types are printed with, so symbols overlap and binders nest.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.catalog import formula

IDENT = formula.IDENT
GREEDY_BINDERS = re.compile(r"(?:[({⦃\[]|∀|∃!?|fun|λ|∑|∏|⋃|⋂|⨆|⨅)\s*((?:" + IDENT + r"\s+)*" + IDENT + r")\s*(?::|,|=>|↦|∈)")
TOKEN_GROUPS = re.compile(rf"(?P<ident>{IDENT})|(?P<number>[0-9]+(?:\.[0-9]+)?)|(?P<symbol>[^\s\w])")

PIECES = [
    *formula.MULTI_SYMBOLS, "a", "b", "x₁", "h", "hx", "Nat.succ", "l.length", "fun", "funext", "0", "12", "3.5",
    " ", "  ", "(", ")", "{", "}", "[", "]", "⦃", "⦄", ":", ",", "=>", "↦", "∈", "∀", "∃", "∃!", "λ", "∑", "→", "=", "+", "'", "?", ".", "_",
]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def plain_binder_names(text: str) -> set[str]:
    return {name for group in GREEDY_BINDERS.findall(text) for name in group.split()}


def plain_scan(text: str) -> list[str]:
    """Left to right, the longest symbol starting at each position becomes its placeholder."""
    longest_first = sorted(formula.MULTI_SYMBOLS, key=len, reverse=True)
    out, i = [], 0
    while i < len(text):
        symbol = next((s for s in longest_first if text.startswith(s, i)), None)
        if symbol is None:
            out.append(text[i])
            i += 1
        else:
            out.append(formula.MULTI_SYMBOLS[symbol])
            i += len(symbol)
    return ["".join(groups) for groups in TOKEN_GROUPS.findall("".join(out))]


@settings(max_examples=400, deadline=None)
@given(texts)
def test_binder_names_read_as_the_greedy_pattern(text: str) -> None:
    assert formula.binder_names(text) == plain_binder_names(text)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_scan_reads_the_longest_symbol_at_each_position(text: str) -> None:
    assert formula.scan(text) == plain_scan(text)


def test_token_kinds() -> None:
    tokens = formula.scan("(h : 0 < n) : Nat.succ n ≠ 0 ∧ x₁ ∈ ℕ")
    assert [t for t in tokens if formula.is_ident(t)] == ["h", "n", "Nat.succ", "n", "x₁"]
    assert [t for t in tokens if formula.is_number(t)] == ["0", "0"]
    assert formula.MULTI_SYMBOLS["ℕ"] in tokens
