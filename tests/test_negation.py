"""Negation words are words (issue 28): `not`, `no` and `non` are kept in text queries and in the
text index, so `not injective` with every word required asks for declarations saying "not",
not the same as `injective`, and ranks them first when any word may match."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from leanindex.catalog import text
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from streamkit import build, declaration, stream

RECORDS = [
    declaration(["Fun", "injective_id"], doc="The identity is injective."),
    declaration(["Fun", "no_fixed_point"], doc="There is no fixed point."),
    declaration(["Fun", "nonneg_sq"], doc="A square is non negative."),
    declaration(["Fun", "not_injective_const"], doc="A constant function is not injective."),
]


def query(words: text.Words, value: str) -> list[str]:
    return [t.word for t in text.query_tokens(words, value)]


def test_query_words_keep_the_negations() -> None:
    words = text.Words()
    assert query(words, "not injective") == ["not", "inj"]
    assert query(words, "no fixed point") == ["no", "fix", "point"]
    # `non negative` is one word of the table (`nonneg`), as Mathlib names spell it.
    assert query(words, "non negative") == ["nonneg"]
    assert query(words, "non trivial") == ["non", "trivial"]
    # Other stop words are still dropped.
    assert query(words, "the injective of") == ["inj"]


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with tempfile.TemporaryDirectory(prefix="leanindex-negation-") as folder:
        build(Path(folder), "neg", stream(RECORDS))
        engine = Engine(folder)
        yield engine
        engine.close()


def names(engine: Engine, words: str) -> list[str]:
    answer = engine.search(SearchRequest(environment="NEG", text=words, text_match="all", order="name", result_limit=50))
    return [r.name for r in answer.results]


def test_a_negated_text_is_not_the_plain_text(engine: Engine) -> None:
    assert names(engine, "injective") == ["Fun.injective_id", "Fun.not_injective_const"]
    assert names(engine, "not injective") == ["Fun.not_injective_const"]
    assert names(engine, "no fixed point") == ["Fun.no_fixed_point"]
    assert names(engine, "non negative") == ["Fun.nonneg_sq"]
    # A negation alone is a word to search for, not an empty text.
    assert names(engine, "not") == ["Fun.not_injective_const"]


def test_a_negated_text_ranks_the_negated_declaration_first(engine: Engine) -> None:
    """With any word matching (the default), `not injective` matches both injectivity lemmas
    and ranks the one that says "not" first."""
    answer = engine.search(SearchRequest(environment="NEG", text="not injective"))
    assert [r.name for r in answer.results][:1] == ["Fun.not_injective_const"]
    assert answer.total_matches == 2


def test_an_index_holds_the_negation_words_even_when_no_declaration_says_them() -> None:
    with tempfile.TemporaryDirectory(prefix="leanindex-negation-none-") as folder:
        build(Path(folder), "plain", stream([declaration(["Fun", "injective_id"], doc="The identity is injective.")]))
        engine = Engine(folder)
        try:
            answer = engine.search(SearchRequest(environment="PLAIN", text="not injective", text_match="all"))
            assert (answer.total_matches, answer.completeness.value) == (0, "COMPLETE")
            assert answer.unmatched_words == ["not"]
            assert all(engine.catalog("PLAIN").text.word_id(w) is not None for w in text.NEGATIONS)
        finally:
            engine.close()
