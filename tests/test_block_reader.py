"""The block store's reader (`catalog.rows.read_rows`, zstandard and orjson) gives what the
reference readers give: pyarrow's zstd codec for each frame and `json.loads` for each row,
including the JSON texts orjson refuses, and refuses a frame of another size than its rows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.catalog import rows


def _store(texts: list[bytes], block_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A block store of `texts` as `write_blocks` lays it out, compressed with pyarrow's codec."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    whole = b"".join(texts)
    codec = rows._codec()
    frames = [codec.compress(whole[int(offsets[i]) : int(offsets[min(i + block_rows, len(texts))])], asbytes=True) for i in range(0, len(texts), block_rows)]
    starts = np.zeros(len(frames) + 1, dtype=np.int64)
    np.cumsum([len(f) for f in frames], out=starts[1:])
    return np.frombuffer(b"".join(frames), dtype=np.uint8), starts, offsets


# Integers within 64 bits, as every numeric field of a record is but a name's numeric
# components (`components`, any natural number).
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text() | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
ROWS = st.fixed_dictionaries(
    {"components": st.lists(st.text(max_size=4) | st.integers(0, 2**80), min_size=1, max_size=4)},
    optional={"name": st.text(), "range": JSON_VALUES, "doc": JSON_VALUES, "other": JSON_VALUES},
)


@settings(max_examples=80, deadline=None)
@given(st.lists(ROWS | st.dictionaries(st.text(max_size=6).filter(lambda k: k != "components"), JSON_VALUES, max_size=5), min_size=1, max_size=30), st.integers(1, 9), st.data())
def test_rows_read_as_the_reference_readers_read_them(records: list[dict], block_rows: int, data: st.DataObject) -> None:
    # ensure_ascii: lone surrogates (which st.text() draws) travel as escapes, as JSON allows.
    texts = [json.dumps(r, ensure_ascii=True).encode() for r in records]
    blocks, starts, offsets = _store(texts, block_rows)
    wanted = data.draw(st.lists(st.integers(0, len(texts) - 1), max_size=12))
    found = rows.read_rows(blocks, starts, offsets, block_rows, wanted)
    assert set(found) == set(wanted)
    for pos in wanted:
        assert found[pos] == json.loads(texts[pos])
        assert [type(c) for c in found[pos].get("components", [])] == [type(c) for c in json.loads(texts[pos]).get("components", [])]


def test_json_orjson_refuses_or_misreads_is_read_by_the_reference_reader() -> None:
    # orjson refuses the first and reads the next two components as floats (2**64 + 1 and
    # 2**70 + 1 are no float's value: an `==` with the integer would fail).
    texts = [b'{"name": "\\ud800"}', b'{"components": ["x", 18446744073709551617]}', b'{"components": [1180591620717411303425]}', b'{"doc": "\\ud83d\\ude00"}']
    blocks, starts, offsets = _store(texts, 2)
    found = rows.read_rows(blocks, starts, offsets, 2, [0, 1, 2, 3])
    assert [found[i] for i in range(4)] == [{"name": "\ud800"}, {"components": ["x", 2**64 + 1]}, {"components": [2**70 + 1]}, {"doc": "😀"}]
    assert all(type(found[i]["components"][-1]) is int for i in (1, 2))


def test_a_frame_of_another_size_is_refused() -> None:
    blocks, starts, offsets = _store([b'{"a": 1}', b'{"b": 2}'], 2)
    offsets = offsets.copy()
    offsets[-1] += 3  # the rows claim three bytes more than the frame holds
    with pytest.raises(ValueError, match="block 0"):
        rows.read_rows(blocks, starts, offsets, 2, [1])
