"""The index's result blocks (`catalog.rows`) against the stored record lines they copy."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from leanindex.catalog.layout import connect_duckdb
from leanindex.catalog.rows import BLOCK_ROWS, RESULT_FIELDS, read_result_rows, write_result_rows

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)  # newlines, U+2028, quotes...
RANGE = st.none() | st.fixed_dictionaries(
    {"start": st.fixed_dictionaries({"line": st.integers(1, 10**6), "column": st.none() | st.integers(0, 500)}),
     "end": st.fixed_dictionaries({"line": st.integers(1, 10**6), "column": st.none() | st.integers(0, 500)})}
)
RECORD = st.fixed_dictionaries(
    {"name": TEXT, "kind": st.sampled_from(["theorem", "definition"]), "type": TEXT, "module": st.none() | TEXT,
     "components": st.lists(TEXT | st.integers(0, 9), min_size=1, max_size=3), "range": RANGE, "doc": st.none() | TEXT},
    # A record line from before the links has neither key: its rows hold null.
    optional={"source_url": st.none() | TEXT, "doc_url": st.none() | TEXT},
)


@settings(max_examples=40, deadline=None)
@given(st.lists(RECORD, max_size=3 * BLOCK_ROWS + 5), st.data())
def test_every_row_reads_back_its_result_fields(records: list[dict], data: st.DataObject) -> None:
    con = connect_duckdb()
    con.execute("CREATE TABLE declarations (pos BIGINT, name VARCHAR, record VARCHAR)")
    if records:
        con.executemany("INSERT INTO declarations VALUES (?, ?, ?)", [(i, r["name"], json.dumps(r)) for i, r in enumerate(records)])
    arrays = write_result_rows(con)
    assert len(arrays["result_block_starts"]) == -(-len(records) // BLOCK_ROWS) + 1
    positions = data.draw(st.lists(st.integers(0, max(len(records) - 1, 0)), max_size=12)) if records else []
    rows = read_result_rows(arrays["result_blocks"], arrays["result_block_starts"], arrays["result_row_offsets"], np.array(positions, dtype=np.int64))
    assert rows == {p: {field: records[p].get(field) for field in RESULT_FIELDS} for p in positions}
