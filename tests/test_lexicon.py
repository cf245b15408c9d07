"""The one table of mathematical words (`catalog.lexicon`), tested both ways: every form of an
entry reads as the entry's canonical words in a query, and a declaration that holds one form
(a name word, a symbol of its type, a phrase of its docstring) is found by a query holding any
other form of the same entry."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.catalog import formula
from leanindex.catalog.lexicon import ENTRIES, LATEX_NAMES, NICKNAMES, Entry
from leanindex.catalog.text import Words, query_tokens
from leanindex.engine.textrank import nickname_targets

WORDS = Words()


def canonical_words(entry: Entry) -> set[str]:
    """The entry's canonical words as the index holds them (stemmed like every word)."""
    return {WORDS._stem_of(w) for w in entry.canonical.split()}


def query_words(text: str) -> set[str]:
    return {t.word for t in query_tokens(WORDS, text)}


def indexed_words(entry: Entry, form: str, where: str) -> set[str]:
    """The index words of a declaration holding `form` in its name, type or docstring."""
    if where == "type":
        return set(WORDS.declaration("X.y", None, f"(a b : α) : a {form} b")["type"])
    if where == "doc":
        return set(WORDS.declaration("X.y", f"It is {form} here.", ": True")["doc"])
    return set(WORDS.declaration(f"X.{form.replace(' ', '_')}", None, ": True")["name"])


def forms(entry: Entry) -> list[tuple[str, str]]:
    """(form, where a declaration holds it) for every form of `entry`: symbols in a type,
    English words in a docstring (and, when they hold in names, one-word forms in a name);
    LaTeX commands are read in queries only."""
    found = [(s, "type") for s in entry.symbols] + [(w, "doc") for w in entry.words]
    if entry.names:
        found += [(w, "name") for w in entry.words if " " not in w and w.isascii() and w.isalpha()]
    return found


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.canonical for e in ENTRIES])
def test_every_form_reads_as_its_canonical_words(entry: Entry) -> None:
    canonical = canonical_words(entry)
    for symbol in entry.symbols:
        assert canonical <= query_words(f"x {symbol} y"), symbol
    for command in entry.latex:
        assert canonical <= query_words(f"$x {command} y$") | query_words(command), command
    for word in entry.words:
        assert canonical <= query_words(word), word


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.canonical for e in ENTRIES])
def test_a_declaration_holding_one_form_is_found_by_every_other(entry: Entry) -> None:
    canonical = canonical_words(entry)
    holders = forms(entry)
    for form, where in holders:
        # Prose-only entries (`sum` as addition) are not read in names and types.
        if not entry.names and where != "doc":
            continue
        have = indexed_words(entry, form, where)
        assert canonical & have, (form, where, have)
        for other, _ in holders:
            assert query_words(other if not other.startswith("\\") else f"${other}$") & have, (form, where, other)


def test_symbols_of_more_than_one_character_are_one_token() -> None:
    # `⁻¹'` (preimage) is not `⁻¹` (inverse) followed by a quote.
    assert set(WORDS.declaration("X.y", None, "(f : α → β) (s : Set β) : f ⁻¹' s = s")["type"]) >= {"preimag"}
    assert "inv" not in WORDS.declaration("X.y", None, "(f : α → β) (s : Set β) : f ⁻¹' s = s")["type"]
    assert {s for e in ENTRIES for s in e.symbols if len(s) > 1} <= set(formula.MULTI_SYMBOLS)


def test_an_ascii_operator_between_letters_is_punctuation() -> None:
    assert query_words("Cauchy-Schwarz inequality") == {"cauchi", "schwarz", "inequ"}
    assert "sub" in query_words("a - b")


def test_latex_names_are_the_symbols_lean_shows() -> None:
    for command, symbol in LATEX_NAMES.items():
        assert query_words(f"$x {command} y$") == query_words(f"x {symbol} y"), command
    assert query_words(r"$\sqrt{2} \notin \mathbb{Q}$") == {"sqrt", "two", "not", "mem", "rat"}
    # An implicit product in math mode is a product; a word of the table is a word.
    assert "mul" in query_words(r"$\deg(fg) = \deg f + \deg g$")
    assert "gcd" in query_words(r"$gcd(a, b)$")


@given(st.sampled_from([(n, names) for n, names in NICKNAMES.items()]), st.sampled_from(["{}", "What is {}?", "the {} please", "{}!"]))
@settings(max_examples=60)
def test_a_nickname_names_its_declarations_in_any_casing(item: tuple[str, tuple[str, ...]], frame: str) -> None:
    nickname, names = item
    for text in (frame.format(nickname), frame.format(nickname.upper()), frame.format(nickname.replace("'", "’"))):
        assert set(names) <= set(nickname_targets(text)), text


def test_a_nickname_matches_whole_words_only() -> None:
    assert nickname_targets("the triangle inequality") == list(NICKNAMES["triangle inequality"])
    assert nickname_targets("triangle inequalityx") == []
