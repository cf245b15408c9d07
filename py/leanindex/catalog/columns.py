"""The column layout of `declarations.parquet`, the canonical table of a catalog.

One row per constant in `Name.lt` order; `pos` is the row's position (0-based). Writer options
are fixed here because the file's sha256 is part of the manifest: the same records written with
the same pinned pyarrow give the same bytes (row groups are always `ROW_GROUP_ROWS` rows).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson
from pydantic import BaseModel

from ..records import DeclarationRecord

ROW_GROUP_ROWS = 65_536

_STRINGS = pa.list_(pa.string())
_POSITION = pa.struct([("line", pa.int32()), ("column", pa.int32())])
_RANGE = pa.struct([("start", _POSITION), ("end", _POSITION)])

#: Record fields that are read but not stored as columns, and why.
NOT_STORED: dict[str, str] = {
    "record": "the line's record type, `declaration` on every row",
    # Some names Lean prints do not read back to their components, so the stored record line
    # keeps them, and the serving tables hold their namespace key.
    "components": "kept in the stored record line; the serving tables hold the namespace key",
}


def _arrow_type(name: str, schema: dict[str, Any], definitions: dict[str, Any]) -> pa.DataType:
    """The column type of one record field, from the field's JSON Schema. Raises `TypeError`
    for a type with no column type, so a new record field cannot silently miss the catalog."""
    options = [o for o in schema.get("anyOf", [schema]) if o.get("type") != "null"]
    if len(options) == 1:
        option = options[0]
        if "$ref" in option:
            referenced = option["$ref"].rsplit("/", 1)[1]
            if referenced == "SourceRange":
                return _RANGE
            option = definitions[referenced]
        kind = option.get("type")
        if kind == "string":
            return pa.string()
        if kind == "boolean":
            return pa.bool_()
        if kind == "integer":
            return pa.int64()
        if kind == "array" and option.get("items", {}).get("type") == "string":
            return _STRINGS
    raise TypeError(f"record field {name!r} has no column type; say how to store it in leanindex/catalog/columns.py")


def read_fields(model: type[BaseModel] = DeclarationRecord) -> list[tuple[str, pa.DataType]]:
    """How pyarrow reads each field of a validated declaration line (`model`'s fields in order,
    but `NOT_STORED`). Raises `TypeError` for a field with no column type."""
    schema = model.model_json_schema()
    definitions = schema.get("$defs", {})
    return [
        (name, _arrow_type(name, field, definitions))
        for name, field in schema["properties"].items()
        if name not in NOT_STORED
    ]


def _range_columns(name: str) -> list[str]:
    return [f"{name}_{end}_{part}" for end in ("start", "end") for part in ("line", "column")]


_READ_FIELDS = read_fields()
# A range is stored flat (four int32 columns) so that Parquet statistics apply to lines.
SCHEMA = pa.schema(
    [
        ("pos", pa.int64()),
        *[
            column
            for name, arrow_type in _READ_FIELDS
            for column in ([(c, pa.int32()) for c in _range_columns(name)] if arrow_type == _RANGE else [(name, arrow_type)])
        ],
    ]
)
_JSON_SCHEMA = pa.schema(_READ_FIELDS)
# An absent optional field (`type_fallback`) reads as the record model's default.
_DEFAULTS = {
    name: field.default
    for name, field in DeclarationRecord.model_fields.items()
    if not field.is_required() and field.default is not None
}

PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": ["kind", "module"],
    "write_statistics": True,
    "data_page_size": 1 << 20,
    "data_page_version": "1.0",
    "store_schema": True,
    "write_page_index": False,
}


def table_from_lines(lines: list[bytes], start_pos: int) -> pa.Table:
    """The canonical rows of already validated declaration lines, positions from `start_pos`.

    Parsing is pyarrow's JSON reader (C++), which is what keeps the builder fast; it only ever
    sees lines that `DeclarationRecord` accepted, so types cannot disagree, and it reads every
    field the model has (`read_fields`), so none is dropped. An absent optional field reads as
    the model's default.
    """
    data = b"\n".join(lines)
    parsed = pajson.read_json(
        io.BytesIO(data),
        read_options=pajson.ReadOptions(use_threads=True, block_size=max(len(data) + 1, 1 << 20)),
        parse_options=pajson.ParseOptions(explicit_schema=_JSON_SCHEMA, unexpected_field_behavior="ignore"),
    ).combine_chunks()
    columns = {"pos": pa.array(np.arange(start_pos, start_pos + parsed.num_rows, dtype=np.int64))}
    for name, arrow_type in _READ_FIELDS:
        values = parsed.column(name)
        if arrow_type == _RANGE:
            paths = [["start", "line"], ["start", "column"], ["end", "line"], ["end", "column"]]
            columns.update(zip(_range_columns(name), (pc.struct_field(values, path) for path in paths), strict=True))
        else:
            columns[name] = pc.fill_null(values, _DEFAULTS[name]) if name in _DEFAULTS else values
    return pa.Table.from_pydict(columns, schema=SCHEMA).combine_chunks()
