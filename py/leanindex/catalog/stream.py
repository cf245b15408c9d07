"""Reading and validating a `leanindex.declarations/v1` stream, line by line.

`read_stream` checks everything the contract promises (JSON, fields and types, kinds, the name
reading back to its components or being Lean's printing of them, strict `Name.lt` order, hence no duplicates, sorted type
constants, modules listed in the header, `source_url` and `doc_url` links by `links.link_problem`,
header first, footer last with the right count) and
raises `LeanIndexError(invalid_stream)` naming the first offending line. It holds one record at
a time: memory does not grow with the stream.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import IO

from pydantic import ValidationError

from ..errors import ErrorCode, LeanIndexError
from ..names import NameSyntaxError, format_name, name_cmp, parse_name
from ..records import DeclarationRecord, FooterRecord, HeaderRecord
from .links import checked_link


def _fail(line: int, message: str) -> LeanIndexError:
    return LeanIndexError(ErrorCode.INVALID_STREAM, f"line {line}: {message}", {"line": line})


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "record"
    extra = f" ({error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {first['msg']}{extra}"


@dataclass
class StreamSummary:
    """What the stream said about itself, filled in as it is read."""

    header: HeaderRecord | None = None
    count: int = 0
    footer_seen: bool = False
    lines: int = 0
    modules: set[str] = field(default_factory=set)


def _strictly_sorted(values: list[str]) -> bool:
    """Each value below the next (code-point order): sorted and without repeats, checked in
    one pass without building a set and a sorted copy per record."""
    return all(map(operator.lt, values, islice(values, 1, None)))


def read_stream(
    lines: Iterable[bytes],
    summary: StreamSummary,
    on_line: Callable[[int], None] | None = None,
) -> Iterator[tuple[DeclarationRecord, bytes]]:
    """Yield each declaration record of a stream, with its raw line, in order, validating as
    it goes.

    `lines` are raw lines (bytes, with or without the newline). `summary` receives the header
    as soon as it is read and the count once the footer is checked. `on_line` is called with the
    line number of each line read (for progress). Raises `LeanIndexError(invalid_stream)` with
    `details.line` at the first violation, including a stream that ends without its footer.
    """
    previous: tuple[str | int, ...] | None = None
    previous_name = ""
    number = 0
    for number, raw in enumerate(lines, start=1):
        summary.lines = number
        if on_line is not None:
            on_line(number)
        if summary.footer_seen:
            if raw.strip():
                raise _fail(number, "data after the footer")
            continue
        if number == 1:
            summary.header = _read_header(raw)
            summary.modules = set(summary.header.modules)
            continue
        try:
            record = DeclarationRecord.model_validate_json(raw)
        except ValidationError as error:
            _read_non_declaration(raw, number, error, summary)
            continue
        components = tuple(record.components)
        _check_name(number, record.name, components)
        if previous is not None:
            order = name_cmp(previous, components)
            if order == 0:
                raise _fail(number, f"duplicate declaration {record.name!r}")
            if order > 0:
                raise _fail(
                    number,
                    f"out of Name.lt order: {record.name!r} comes after {previous_name!r}",
                )
        if not _strictly_sorted(record.type_constants):
            raise _fail(number, f"type_constants of {record.name!r} are not sorted and unique")
        if record.value_constants is not None and not _strictly_sorted(record.value_constants):
            raise _fail(number, f"value_constants of {record.name!r} are not sorted and unique")
        if record.conclusion_constants is not None:
            if not _strictly_sorted(record.conclusion_constants):
                raise _fail(number, f"conclusion_constants of {record.name!r} are not sorted and unique")
            if not set(record.type_constants).issuperset(record.conclusion_constants):
                raise _fail(number, f"conclusion_constants of {record.name!r} are not all among its type_constants")
        if record.conclusion_head is not None and record.conclusion_head not in (record.conclusion_constants or []):
            raise _fail(number, f"conclusion_head of {record.name!r} is not among its conclusion_constants")
        if not record.is_deprecated and (record.deprecated_to is not None or record.deprecated_since is not None):
            raise _fail(number, f"{record.name!r} has deprecated_to or deprecated_since but is not deprecated")
        if record.instance_class is not None and not record.is_instance:
            raise _fail(number, f"{record.name!r} has an instance_class but is not an instance")
        if record.module is not None and record.module not in summary.modules:
            raise _fail(number, f"module {record.module!r} of {record.name!r} is not in the header's module list")
        for key in ("source_url", "doc_url"):
            link = getattr(record, key)
            if link is not None:  # no message built for the records without one
                checked_link(link, f"line {number}: {key} of {record.name!r}", {"line": number, "field": key})
        previous, previous_name = components, record.name
        summary.count += 1
        yield record, raw
    if number == 0:
        raise _fail(1, "empty stream: expected a header line")
    if not summary.footer_seen:
        raise _fail(
            number + 1,
            f"stream ended without a footer after {summary.count} declarations (truncated?)",
        )


def _check_name(line: int, name: str, components: tuple[str | int, ...]) -> None:
    """The printed name must denote the components: it reads back to them, or, where Lean's
    printing cannot be read back (a component holding `»` is never escaped; escaping is off for
    names with macro scopes or an inaccessible `✝` part, so a dot inside a component prints
    bare), it is exactly Lean's `Name.toString` of them. Then the components are the identity.
    A name holding a NUL character is refused: the search index ends each name with a NUL."""
    if "\x00" in name:
        raise _fail(line, f"name {name!r} holds a NUL character, which no catalog can index (it ends each name)")
    try:
        if parse_name(name) == components:
            return
        reason = "does not match its components"
    except NameSyntaxError as error:
        reason = f"is not a Lean name ({error}) nor the printing of its components"
    if name != format_name(components):
        raise _fail(line, f"name {name!r} {reason} {list(components)!r} (they print as {format_name(components)!r})")


def _read_header(raw: bytes) -> HeaderRecord:
    try:
        return HeaderRecord.model_validate_json(raw)
    except ValidationError as error:
        kind = _record_kind(raw)
        if kind is None:
            raise _fail(1, f"malformed header: {_describe(error)}") from None
        if kind != "header":
            raise _fail(1, f"missing header: the first line is a {kind!r} record") from None
        raise _fail(1, f"invalid header: {_describe(error)}") from None


def _record_kind(raw: bytes) -> str | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("record"), str):
        return value["record"]
    return "?"


def _read_non_declaration(raw: bytes, number: int, error: ValidationError, summary: StreamSummary) -> None:
    kind = _record_kind(raw)
    if kind is None:
        raise _fail(number, "malformed JSON" if raw.strip() else "empty line") from None
    if kind == "footer":
        try:
            footer = FooterRecord.model_validate_json(raw)
        except ValidationError as footer_error:
            raise _fail(number, f"invalid footer: {_describe(footer_error)}") from None
        if footer.count != summary.count:
            raise _fail(
                number,
                f"footer count {footer.count} disagrees with the {summary.count} declarations read",
            )
        summary.footer_seen = True
        return
    if kind == "header":
        raise _fail(number, "a second header") from None
    if kind == "declaration":
        raise _fail(number, f"invalid declaration: {_describe(error)}") from None
    raise _fail(number, f"unknown record type {kind!r}") from None


MAX_LINE_BYTES = 64 << 20


def iter_lines(stream: IO[bytes], chunk_bytes: int = 1 << 20, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """Lines of a binary stream (file or pipe), read in large chunks; memory stays bounded by
    the chunk size and `max_line_bytes` (64 MiB; no real declaration comes near it). A longer
    line raises `LeanIndexError(invalid_stream)` naming it."""
    parts: list[bytes] = []  # pieces of the unfinished line, joined once it ends
    pending = 0
    number = 1
    while chunk := stream.read(chunk_bytes):
        lines = chunk.split(b"\n")
        for piece in lines[:-1]:
            parts.append(piece)
            yield b"".join(parts)
            parts, pending, number = [], 0, number + 1
        parts.append(lines[-1])
        pending += len(lines[-1])
        if pending > max_line_bytes:
            raise _fail(number, f"line longer than {max_line_bytes} bytes")
    if pending:
        yield b"".join(parts)
