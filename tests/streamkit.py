"""Helpers the catalog and engine tests share: declaration streams as plain dicts, and a
snapshot of a folder to prove that a failed build changed nothing.

Records are plain dicts (not `leanindex.records` models), so a test states the wire format it
feeds the builder; only the flags come from the record model (each required one false), so a
new flag needs no change here.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from leanindex.catalog.builder import build_catalog
from leanindex.catalog.manifest import Manifest
from leanindex.names import format_name
from leanindex.records import FLAG_FIELDS, STREAM_FORMAT, DeclarationRecord

MODULES = ["Init.Core", "Init.Data.Nat.Basic", "Init.Prelude"]


def header(modules: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    """A valid header record; `fields` override or add keys."""
    record = {
        "record": "header",
        "format": STREAM_FORMAT,
        "extractor": {"name": "leanindex-tests", "version": "1"},
        "lean": {"version": "4.35.0", "githash": "0" * 40},
        "imports": ["Init"],
        "modules": MODULES if modules is None else modules,
    }
    record.update(fields)
    return record


def declaration(components: list[str | int], **fields: Any) -> dict[str, Any]:
    """A valid declaration record named by `components` (printed with `format_name`)."""
    record: dict[str, Any] = {
        "record": "declaration",
        "name": format_name(components),
        "components": list(components),
        "kind": "theorem",
        "module": MODULES[0],
        "type": "True",
        "type_constants": ["True"],
        "level_params": [],
        "doc": None,
        "range": {"start": {"line": 1, "column": 0}, "end": {"line": 2, "column": 4}},
        **{flag: False for flag in FLAG_FIELDS if DeclarationRecord.model_fields[flag].is_required()},
    }
    record.update(fields)
    return record


def footer(count: int) -> dict[str, Any]:
    return {"record": "footer", "count": count}


def encode(record: dict[str, Any] | bytes) -> bytes:
    """One NDJSON line (without the newline); bytes pass through unchanged."""
    if isinstance(record, bytes):
        return record
    return json.dumps(record, ensure_ascii=False).encode()


def stream(declarations: list[dict[str, Any]], modules: list[str] | None = None) -> list[bytes]:
    """Header, the declarations, footer: a complete stream as lines."""
    return [encode(header(modules)), *map(encode, declarations), encode(footer(len(declarations)))]


def as_file(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def build(root: Path, profile: str, lines: list[bytes]) -> Manifest:
    return build_catalog(iter(lines), root, profile)


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under `root` (followed through symlinks): relative path -> sha256 of a
    file, `dir`, or `link:<target>` for a symlink, so any write shows up as a difference."""
    entries: dict[str, str] = {}
    if not root.exists():
        return entries
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            relative = str(path.relative_to(root))
            if path.is_symlink():
                entries[relative] = f"link:{os.readlink(path)}"
            elif path.is_dir():
                entries[relative] = "dir"
            else:
                entries[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries
