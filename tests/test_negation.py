"""Negation words are words (issue 28): `not`, `no` and `non` are kept in text queries and in the
text index, so `not injective` asks for declarations saying "not", not the same as `injective`;
a text index built while they were stop words is told apart and refused (`not_recorded`),
never answered as if nothing said "not"."""

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


def test_query_words_keep_the_negations() -> None:
    words = text.Words()
    assert words.query("not injective") == ["not", "inject"]
    assert words.query("no fixed point") == ["no", "fix", "point"]
    assert words.query("non negative") == ["non", "negat"]
    # Other stop words are still dropped.
    assert words.query("the injective of") == ["inject"]


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with tempfile.TemporaryDirectory(prefix="leanindex-negation-") as folder:
        build(Path(folder), "neg", stream(RECORDS))
        engine = Engine(folder)
        yield engine
        engine.close()


def names(engine: Engine, words: str) -> list[str]:
    answer = engine.search(SearchRequest(environment="NEG", text=words, order="name", result_limit=50))
    return [r.name for r in answer.results]


def test_a_negated_text_is_not_the_plain_text(engine: Engine) -> None:
    assert names(engine, "injective") == ["Fun.injective_id", "Fun.not_injective_const"]
    assert names(engine, "not injective") == ["Fun.not_injective_const"]
    assert names(engine, "no fixed point") == ["Fun.no_fixed_point"]
    assert names(engine, "non negative") == ["Fun.nonneg_sq"]
    # A negation alone is a word to search for, not an empty text.
    assert names(engine, "not") == ["Fun.not_injective_const"]


def test_an_index_built_when_negations_were_stop_words_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalog whose text index dropped the negation words (as every index did before) cannot
    answer a text with one: refused with `not_recorded`, not an empty success."""
    with tempfile.TemporaryDirectory(prefix="leanindex-negation-old-") as folder:
        with monkeypatch.context() as old:
            old.setattr(text, "NEGATIONS", ())
            old.setattr(text, "_STOPWORDS", text._STOPWORDS | {"not", "no", "non"})
            build(Path(folder), "old", stream(RECORDS))
        engine = Engine(folder)
        try:
            with pytest.raises(LeanIndexError) as refused:
                engine.search(SearchRequest(environment="OLD", text="not injective"))
            assert refused.value.code is ErrorCode.NOT_RECORDED
            assert refused.value.details == {"field": "text", "words": ["not"], "environment": "OLD"}
            # A text without a negation still answers there.
            found = engine.search(SearchRequest(environment="OLD", text="injective", order="name"))
            assert [r.name for r in found.results] == ["Fun.injective_id", "Fun.not_injective_const"]
        finally:
            engine.close()


def test_an_index_holds_the_negation_words_even_when_no_declaration_says_them() -> None:
    with tempfile.TemporaryDirectory(prefix="leanindex-negation-none-") as folder:
        build(Path(folder), "plain", stream([declaration(["Fun", "injective_id"], doc="The identity is injective.")]))
        engine = Engine(folder)
        try:
            answer = engine.search(SearchRequest(environment="PLAIN", text="not injective"))
            assert (answer.total_matches, answer.completeness.value) == (0, "COMPLETE")
            assert engine.catalog("PLAIN").text.unindexed(["not", "no", "non", "inject"]) == []
        finally:
            engine.close()
