"""The text index's parts against independent oracles: the BM25 scores against bm25s (the
library the formula is checked against), formula keys against renaming, the fast reading of
types against the general reader."""

from __future__ import annotations

import json
from pathlib import Path

import bm25s
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.catalog import formula, text
from leanindex.catalog.layout import DECLARATIONS_FILE
from leanindex.catalog.text import FIELD_PARAMS, Words, _field_scores, binder_names
from leanindex.docgen.header import parse_header
from realdata_support import CORE_SAMPLE, realdata_path


@given(
    st.lists(st.lists(st.integers(0, 29), max_size=12), min_size=1, max_size=60),
    st.sampled_from(sorted(set(FIELD_PARAMS.values()))),
)
@settings(max_examples=80, deadline=None)
def test_field_scores_are_bm25s_lucene_scores(documents: list[list[int]], params: tuple[float, float]) -> None:
    """Every (word, document) score equals bm25s's `lucene` method's, and each word's positions
    are sorted."""
    k1, b = params
    vocabulary = 30
    data, indices, indptr = _field_scores(
        np.asarray([w for d in documents for w in d], dtype=np.int32), np.asarray([len(d) for d in documents], dtype=np.int32), vocabulary, k1, b
    )
    ours = np.zeros((vocabulary, len(documents)))
    for word in range(vocabulary):
        lo, hi = indptr[word], indptr[word + 1]
        assert np.all(np.diff(indices[lo:hi]) > 0)
        ours[word, indices[lo:hi]] = data[lo:hi]
    if not any(documents):
        assert not ours.any()
        return
    reference = bm25s.BM25(method="lucene", k1=k1, b=b)
    reference.index(([list(d) for d in documents], {str(i): i for i in range(vocabulary)}), create_empty_token=False, show_progress=False)
    theirs = np.zeros((vocabulary, len(documents)))
    scores = reference.scores
    for word in range(len(scores["indptr"]) - 1):
        lo, hi = scores["indptr"][word], scores["indptr"][word + 1]
        theirs[word, scores["indices"][lo:hi]] = scores["data"][lo:hi]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


TEMPLATES = [
    ("{{G : Type u_1}} [AddCommMagma G] ({0} {1} : G) : {0} + {1} = {1} + {0}", "{0} + {1} = {1} + {0}"),
    ("{{α : Type u_1}} [Semigroup α] {{{0} {1} : α}} (h : {0} ∣ {1}) ({2} : α) : {0} ∣ {1} * {2}", "{0} ∣ {1} → {0} ∣ {1} * {2}"),
    ("{{{0} : ℕ}} (hp : Nat.Prime {0}) (h_two : {0} ≠ 2) : Odd {0}", "Prime {0} → {0} ≠ 2 → Odd {0}"),
    ("{{α : Type u_1}} ({0} : List α) : {0}.reverse.reverse = {0}", "∀ {0} : List α, {0}.reverse.reverse = {0}"),
]
VARIABLES = st.sampled_from(["a", "b", "c", "x", "y", "n", "m", "k", "x₁", "a'", "l", "p"])


@given(st.sampled_from(TEMPLATES), st.lists(VARIABLES, min_size=3, max_size=3, unique=True), st.lists(VARIABLES, min_size=3, max_size=3, unique=True))
@settings(max_examples=60)
def test_formula_keys_do_not_depend_on_variable_names(template: tuple[str, str], names: list[str], others: list[str]) -> None:
    """A declaration's type and a query stating it, each with its own variable names, have the
    same conclusion and statement keys."""
    printed, query = template
    type_ = printed.format(*names)
    assert formula.keys(formula.scan(type_), binder_names(type_)) == formula.query_keys(query.format(*others))


def test_formula_keys_tell_different_statements_apart() -> None:
    keys = {
        text: formula.query_keys(text)[formula.STATEMENT]
        for text in ["a + b = b + a", "a + b = a + b", "a * b = b * a", "a + b + c = a + (b + c)", "a ∣ b → a ∣ b * c", "a ∣ b * c"]
    }
    assert len(set(keys.values())) == len(keys)
    # Its conclusion alone is shared with the statement without the hypothesis.
    assert formula.query_keys("a ∣ b → a ∣ b * c")[formula.CONCLUSION] == formula.query_keys("a ∣ b * c")[formula.CONCLUSION]
    assert formula.query_keys("just words") == {}


def test_the_fast_type_reading_is_the_general_one() -> None:
    """On every type of the core sample, `Words.statement_words` (the index's reading) gives the
    words `Words.tokens(statement=True)` (a query's reading) gives, in the same order."""
    folder = realdata_path(CORE_SAMPLE)
    words = Words()
    headers = [d["header"] for f in sorted(folder.glob("*.bmp")) for d in json.loads(f.read_text(encoding="utf-8"))["declarations"]]
    checked = 0
    for header in headers[:3000]:
        type_ = parse_header(header).signature
        if "\\" in type_ or "$" in type_:
            continue
        fast = words.statement_words(formula.scan(type_), binder_names(type_))
        general = [t.word for t in words.tokens(type_, statement=True)]
        assert fast == general, type_
        checked += 1
    assert checked > 1000


def test_a_text_index_read_by_workers_is_the_one_read_in_one_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large catalog's text index is read by worker processes, each a run of row groups;
    its files are byte for byte those of one reading (word ids in first-read order over the
    whole catalog)."""
    names = [f"Ns{i % 7}.lemma_{i}_add_comm" for i in range(300)]
    docs = [None if i % 3 else f"The sum of {i} and a natural number; less than or equal" for i in range(300)]
    types = [f"(a b : ℕ) (h{i} : a ≤ b) : a + {i} = b * {i % 5}" for i in range(300)]
    table = pa.table({"name": names, "doc": docs, "type": types})
    folders = {}
    for how, threshold in (("one", 10**9), ("workers", 0)):
        folder = tmp_path / how
        folder.mkdir()
        pq.write_table(table, folder / DECLARATIONS_FILE, row_group_size=40)
        monkeypatch.setattr(text, "PARALLEL_FROM", threshold)
        assert text.write_text_index(folder) == list(text.TEXT_FILES)
        folders[how] = folder
    assert len(pq.ParquetFile(folders["one"] / DECLARATIONS_FILE).metadata.to_dict()["row_groups"]) > 2
    for name in text.TEXT_FILES:
        assert (folders["one"] / name).read_bytes() == (folders["workers"] / name).read_bytes(), name
