"""Unknown-name suggestions (`engine.suggest.NameTable`) against a brute-force oracle that
follows the documented rule literally: every visible name, component lists, a textbook edit
distance, one sort per rule (a last component's words are `suggest.words`, checked by example in
tests/test_close_names.py)."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.engine.suggest import MAX_CLOSE_NAME_LENGTH, MAX_SUGGESTIONS, MIN_CLOSE_LENGTH, NameTable, max_distance, stem, words


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute; each costs 1), by the textbook table."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def oracle(names: list[str], hidden: list[bool], query: str, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """The rule of `leanindex.engine.suggest`, over every visible name (positions are `Name.lt`
    ranks: the list's order)."""
    visible = [pos for pos in range(len(names)) if not hidden[pos]]
    parts = query.split(".")
    namespace, last = ".".join(parts[:-1]), parts[-1]
    chosen = [pos for pos in visible if names[pos] == query][:limit]
    if len(last) < MIN_CLOSE_LENGTH or len(query) > MAX_CLOSE_NAME_LENGTH:
        return [names[p] for p in chosen]
    trailing = [pos for pos in visible if len(names[pos].split(".")) > len(parts) and names[pos].split(".")[-len(parts):] == parts]
    trailing.sort(key=lambda p: (names[p].count("."), len(names[p]), p))
    chosen += [p for p in trailing if p not in chosen][: limit - len(chosen)]

    def split(pos: int) -> tuple[str, str]:
        other = names[pos].split(".")
        return ".".join(other[:-1]), other[-1]

    close = [p for p in visible if levenshtein(split(p)[1], last) <= max_distance(last)]
    same = sorted((p for p in close if namespace and split(p)[0] == namespace), key=lambda p: (levenshtein(split(p)[1], last), len(names[p]), p))
    first, given = stem(last), set(words(last))
    stemmed = sorted(
        (p for p in visible if namespace and split(p)[0] == namespace and first and first in words(split(p)[1])),
        key=lambda p: (-len(given & set(words(split(p)[1]))), -len(os.path.commonprefix([split(p)[1], last])), len(names[p]), p),
    )

    def rank(pos: int) -> tuple[int, int, int, int]:
        other_namespace, other_last = split(pos)
        return (levenshtein(other_last, last), levenshtein(other_namespace, namespace), len(names[pos]), pos)

    elsewhere = sorted((p for p in close if not namespace or split(p)[0] != namespace), key=rank)
    for group in (same, stemmed, elsewhere):
        chosen += [p for p in group if p not in chosen][: limit - len(chosen)]
    return [names[p] for p in chosen]


COMPONENTS = [
    "Nat", "Int", "List", "Real", "mul_comm", "mul_com", "add_comm", "add_comm'", "map", "mapp", "sqrt", "x", "h'", "αβγ",
    "rec", "recAux", "recOn", "strongRecOn", "rec_zero", "mul_assoc",
]
component = st.one_of(st.sampled_from(COMPONENTS), st.text(alphabet="abcm_'", min_size=1, max_size=7))
# Names start with a letter, as Lean's identifiers do, so none needs «» escapes.
name = st.lists(component, min_size=1, max_size=3).map(".".join).filter(lambda n: all(c[0].isalpha() for c in n.split(".")))


@settings(max_examples=300, deadline=None)
@given(
    names=st.lists(name, min_size=1, max_size=40, unique=True),
    flags=st.lists(st.booleans(), min_size=40, max_size=40),
    query=st.one_of(name, st.sampled_from(["mul_comm", "Nat.mul_com", "Real.sqrtt", "List.mapp", "x", "Int.add_comm", "Nat.rec", "Nat.recOn"])),
    limit=st.integers(min_value=1, max_value=MAX_SUGGESTIONS),
)
def test_suggestions_follow_the_rule(names: list[str], flags: list[bool], query: str, limit: int) -> None:
    hidden = flags[: len(names)]
    table = NameTable.build(names, np.asarray(hidden))
    assert table.suggest(query, limit) == oracle(names, hidden, query, limit)


def test_examples_of_the_rule() -> None:
    names = ["Int.add_comm", "Int.mul_comm", "Nat.add_comm", "Nat.mul_comm", "Nat.secret", "PNat.XgcdType.x", "add_comm", "mul_comm"]
    hidden = np.asarray([name == "Nat.secret" for name in names])
    table = NameTable.build(names, hidden)
    # The same last component in the closest namespace first; `add_comm` is 3 edits away, too far.
    assert table.suggest("Nat.mul_comm") == ["Nat.mul_comm", "Int.mul_comm", "mul_comm"]
    assert table.suggest("mul_comm")[:3] == ["mul_comm", "Int.mul_comm", "Nat.mul_comm"]
    assert table.suggest("Nat.add_com")[0] == "Nat.add_comm"
    assert table.suggest("Nat.secret") == []
    assert table.suggest("x") == []
    assert table.suggest("zzzzzz") == []
    assert table.shortest("add_comm") == "add_comm"


def test_names_with_escaped_components() -> None:
    """A «»-escaped last component is one component, compared as printed."""
    names = ["Foo.«a.b»", "Foo.«a.c»", "Bar.ab"]
    table = NameTable.build(names, np.zeros(3, dtype=bool))
    assert table.suggest("«a.b»") == ["Foo.«a.b»", "Foo.«a.c»"]


@settings(max_examples=300, deadline=None)
@given(query=st.one_of(st.text(max_size=60), st.text(alphabet="ab.«» \ud800", max_size=400)))
def test_any_printed_name_gets_an_answer(query: str) -> None:
    """Whatever Lean prints between the backticks (escapes, unbalanced «», dots, any Unicode),
    the look-up answers a short list of catalog names and never raises."""
    names = ["Foo.«a.b»", "Nat.add_comm", "_private.Foo.0.bar", "x.«»", "«a»", "Lean.Name.anonymous"]
    table = NameTable.build(names, np.zeros(len(names), dtype=bool))
    found = table.suggest(query)
    assert len(found) <= MAX_SUGGESTIONS and set(found) <= set(names) and len(set(found)) == len(found)
