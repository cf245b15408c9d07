"""The build's hot paths made faster (issue 31, "800k build") compute what their plain forms
compute: stream lines split across chunks, the sorted-and-unique check, the BM25 scores bit for
bit, and the build's larger identifier caches handed back when the build is done."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.catalog import formula, text
from leanindex.catalog.stream import _strictly_sorted, iter_lines
from leanindex.catalog.text import FIELD_PARAMS, _field_scores


@given(st.lists(st.binary(max_size=9).map(lambda b: b.replace(b"\n", b"")), max_size=30), st.booleans(), st.integers(1, 17))
@settings(max_examples=300, deadline=None)
def test_iter_lines_yields_each_line_whatever_the_chunks(lines: list[bytes], final_newline: bool, chunk: int) -> None:
    """Every line, empty ones included, whether it lies inside one chunk or across several; a
    final newline ends the last line rather than starting an empty one."""
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    assert list(iter_lines(io.BytesIO(data), chunk_bytes=chunk)) == expected


@given(st.lists(st.text(alphabet="ab.αℕ_", max_size=3), max_size=8))
def test_strictly_sorted_means_sorted_without_repeats(values: list[str]) -> None:
    assert _strictly_sorted(values) == (values == sorted(set(values)))


@given(
    st.lists(st.lists(st.integers(0, 29), max_size=12), min_size=1, max_size=60),
    st.sampled_from(sorted(set(FIELD_PARAMS.values()))),
    st.sampled_from([1, 2, 7, text.SCORE_SLICE]),
)
@settings(max_examples=120, deadline=None)
def test_field_scores_are_the_formula_bit_for_bit(documents: list[list[int]], params: tuple[float, float], slice_size: int) -> None:
    """Scoring in slices of `slice_size` occurrences gives the very floats of the formula
    written out over the whole field (the catalog's bytes depend on them): idf * tf / (tf + k1
    (1 - b + b dl / avgdl)), in float64, then float32."""
    k1, b = params
    vocabulary = 30
    lengths = np.asarray([len(d) for d in documents], dtype=np.int32)
    default, text.SCORE_SLICE = text.SCORE_SLICE, slice_size
    try:
        data, indices, indptr = _field_scores(np.asarray([w for d in documents for w in d], dtype=np.int32), lengths, vocabulary, k1, b)
    finally:
        text.SCORE_SLICE = default
    pairs = sorted({(w, i) for i, d in enumerate(documents) for w in d})
    words = np.asarray([w for w, _ in pairs], dtype=np.int64)
    docs = np.asarray([i for _, i in pairs], dtype=np.int32)
    tf = np.asarray([documents[i].count(w) for w, i in pairs], dtype=np.int64)
    df = np.bincount(words, minlength=vocabulary)
    idf = np.log1p((len(documents) - df + 0.5) / (df + 0.5))
    average = float(lengths.mean())
    norm = k1 * (1 - b + b * lengths[docs] / average) if average else np.full(len(docs), k1)
    expected = (idf[words] * tf / (tf + norm)).astype(np.float32)
    assert data.dtype == np.float32 and indices.dtype == np.int32 and indptr.dtype == np.int64
    assert data.tobytes() == expected.tobytes()
    assert indices.tobytes() == docs.tobytes()
    assert indptr.tolist() == [0, *np.cumsum(df).tolist()]


def test_build_caches_are_handed_back() -> None:
    """Inside `build_caches` the identifier caches may grow to the build's limit; after it, even
    when the build failed, the serving limit is back and the shared cache no larger than it."""
    assert formula.ident_cache_limit == formula.IDENT_CACHE_LIMIT
    with pytest.raises(RuntimeError), formula.build_caches():
        assert formula.ident_cache_limit == formula.BUILD_IDENT_CACHE_LIMIT
        for i in range(formula.IDENT_CACHE_LIMIT + 10):
            formula.ident_parts(f"Ns.c{i}")
        assert len(formula.IDENTS) > formula.IDENT_CACHE_LIMIT  # not emptied at the serving limit
        raise RuntimeError("the build failed")
    assert formula.ident_cache_limit == formula.IDENT_CACHE_LIMIT
    assert len(formula.IDENTS) <= formula.IDENT_CACHE_LIMIT
