"""The build's bounded batches: the stream is parsed and inserted `builder.BATCH_ROWS` records
at a time and the result blocks are read from DuckDB in streamed batches (`rows.BATCH_ROWS`),
while the catalog's bytes stay those of one batch per Parquet row group."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from leanindex.catalog import builder, columns, rows
from leanindex.catalog.layout import DATABASE_FILE, DECLARATIONS_FILE, connect_duckdb
from streamkit import build, declaration, stream


def _declarations(count: int) -> list[dict]:
    return [declaration(["Batch", f"d{i:03d}"], doc=f"doc {i} " * (i % 5), type=f"Nat → {'Nat → ' * (i % 3)}Prop") for i in range(count)]


def _built(root: Path, monkeypatch: pytest.MonkeyPatch, batch_rows: int) -> dict[str, str]:
    monkeypatch.setattr(builder, "BATCH_ROWS", batch_rows)
    manifest = build(root, "core", stream(_declarations(29)))
    return {name: digest for name, digest in manifest.catalog.files.items() if name != DATABASE_FILE}


def test_batches_smaller_than_a_row_group_give_the_same_catalog_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Row groups of 8 records: 29 records are 4 row groups, the last one short.
    monkeypatch.setattr(columns, "ROW_GROUP_ROWS", 8)
    whole = _built(tmp_path / "whole", monkeypatch, batch_rows=8)
    # 3 divides neither 8 nor 29: batches end at row-group boundaries too.
    batched = _built(tmp_path / "batched", monkeypatch, batch_rows=3)
    assert batched == whole
    parquet = pq.ParquetFile(tmp_path / "batched" / "catalog" / "core" / DECLARATIONS_FILE)
    assert [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)] == [8, 8, 8, 5]
    con = duckdb.connect(str(tmp_path / "batched" / "catalog" / "core" / DATABASE_FILE), read_only=True)
    try:
        assert con.execute("SELECT pos FROM declarations").fetchall() == [(i,) for i in range(29)]
    finally:
        con.close()


def _result_arrays(records: list[dict], batch_rows: int, monkeypatch: pytest.MonkeyPatch, order: list[int] | None = None) -> dict[str, np.ndarray]:
    monkeypatch.setattr(rows, "BATCH_ROWS", batch_rows)
    con = connect_duckdb()
    con.execute("CREATE TABLE declarations (pos BIGINT, name VARCHAR, record VARCHAR)")
    for i in order if order is not None else range(len(records)):
        con.execute("INSERT INTO declarations VALUES (?, ?, ?)", [i, records[i]["name"], json.dumps(records[i])])
    return rows.write_result_rows(con)


@pytest.mark.parametrize("batch_rows", [1, 3, 8, 13])
def test_result_blocks_do_not_depend_on_the_read_batches(batch_rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    records = _declarations(37)
    reference = _result_arrays(records, 8192, monkeypatch)
    arrays = _result_arrays(records, batch_rows, monkeypatch)
    assert set(arrays) == set(reference)
    for name, array in reference.items():
        assert np.array_equal(arrays[name], array), name


def test_result_rows_refuse_rows_out_of_position_order(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="position order"):
        _result_arrays(_declarations(5), 8192, monkeypatch, order=[1, 0, 2, 3, 4])
