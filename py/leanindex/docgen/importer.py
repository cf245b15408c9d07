"""The doc-gen4 front end: doc-gen4 declaration data -> declaration stream -> catalog.

`collect_docgen` reads every declaration file (folder or `.tar.xz`), converts each declaration
(`convert.convert_module`), resolves names documented in two modules, and sorts the records in
Lean's `Name.lt` order. Sorting needs every record at once: their serialized NDJSON lines
(about 0.8 KB each: some 230 MB for Mathlib's 300,000 declarations) are spilled to an unnamed
temporary file as they are converted (`SpilledLines`), and only each name's sort key and the
line's place in that file stay in memory, so the build that follows has the memory to itself.
`docgen_stream` turns the collection into a `leanindex.declarations/v1` stream, and
`import_docgen` feeds that stream through the same builder (and validation) as the Lean
extractor's output.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from ..base import Frozen
from ..catalog.builder import EnvironmentFacts, build_catalog
from ..catalog.manifest import BlindSpot, CatalogGaps, Manifest
from ..errors import ErrorCode, LeanIndexError
from ..names import name_sort_key
from ..records import STREAM_FORMAT, ExtractorInfo, FooterRecord, HeaderRecord, LeanInfo, record_fields
from ..version import __version__
from ..workers import worker_pool
from . import links
from .convert import ABSENT_FACTS, convert_module
from .files import DocgenFile, ProgressCallback, iter_docgen_files, module_of_file
from .gaps import LinkTally, LinkTargets, blind_spots, check_module_name, check_package_roots, host_modules, missing_modules
from .links import DEFAULT_DOC_BASE

EXTRACTOR_NAME = "leanindex-docgen-import"
LEAN_REPOSITORY = "leanprover/lean4"
MATHLIB_REPOSITORY = "leanprover-community/mathlib4"
UNKNOWN_LEAN_VERSION = "unknown"
_LEAN_VERSION = re.compile(r"v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)")


def normalize_lean_version(text: str) -> str:
    """A Lean version as Lean prints it (`Lean.versionString` in lean4 `src/Init/Meta.lean`:
    `major.minor.patch`, then `-` and the special description when there is one): `v4.33.0`
    and `4.33.0` both give `4.33.0`, `v4.19.0-rc3` gives `4.19.0-rc3`. Raises
    `LeanIndexError(invalid_request)` for anything else."""
    found = _LEAN_VERSION.fullmatch(text.strip())
    if found is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"invalid Lean version {text!r}: give it as 4.33.0 or v4.33.0 (a release candidate as 4.19.0-rc3)",
            {"lean_version": text},
        )
    return found.group(1)

APPROXIMATE_FIELDS: tuple[str, ...] = record_fields(
    "conclusion_constants",  # linked constants after the signature's last top-level `→`/`∀ ...,`
    "conclusion_head",  # its first (prefix) or only top-level linked constant; infix notation is guessed
    "deprecated_since",  # doc-gen4's data does not say; always null
    "deprecated_to",  # doc-gen4's data does not say; always null
    "is_deprecated",  # doc-gen4's data does not say; always false
    "is_internal",  # internal declarations are left out by doc-gen4; false for all present
    "is_private",  # private declarations are left out by doc-gen4; false for all present
    "is_unsafe",  # exact except for structures and classes, whose kind text omits `unsafe`
    "kind",  # an instance of a Prop-valued class is a kernel theorem, listed as definition
    "level_params",  # not in the data; always []
    "range",  # lines only (columns null)
    "type",  # doc-gen4's signature (binders, then `: type`), not the elaborated type
    "type_constants",  # linked constants only: implicit instance arguments and the like are missed
)
"""Record fields the doc-gen4 front end can only approximate (listed in the manifest)."""


class MergedDuplicate(Frozen):
    """A theorem doc-gen4 documented in two modules with the same signature.

    Lean accepts the same theorem (same name, type and universe parameters) declared in two
    modules that are imported together and keeps one copy (`finalizeImport` and its
    `subsumesInfo` check in lean4 `src/Lean/Environment.lean`), so it is one constant of the
    environment. Which module's copy Lean keeps depends on the import order, which doc-gen4's
    data does not give: the record of `kept_module` (the first of the two module names in
    code-point order) is kept, and `module` is then listed as approximate.
    """

    name: str
    kept_module: str
    dropped_module: str


class SpilledLines:
    """NDJSON lines kept in an unnamed temporary file (removed when closed or collected), read
    back in a chosen order: `append(line)` returns the line's index; `order(indices)` fixes the
    order that `len` and iteration then follow."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="leanindex-docgen-")
        self._offsets = array("q")
        self._lengths = array("q")
        self._order = array("q")

    def append(self, line: bytes) -> int:
        """Spill `line`; return its index."""
        self._offsets.append(self._file.seek(0, os.SEEK_END))
        self._lengths.append(len(line))
        self._file.write(line)
        return len(self._offsets) - 1

    def read(self, index: int) -> bytes:
        """The line with index `index`."""
        self._file.seek(self._offsets[index])
        return self._file.read(self._lengths[index])

    def order(self, indices: Iterable[int]) -> None:
        """Keep these lines, in this order."""
        self._order = array("q", indices)

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[bytes]:
        for index in self._order:
            yield self.read(index)

    def close(self) -> None:
        """Remove the temporary file."""
        self._file.close()


@dataclass
class DocgenCollection:
    """Everything read from one doc-gen4 output, ready to stream.

    `lines`: the records' NDJSON lines (bytes, no newline) in `Name.lt` order, spilled to a
    temporary file (`SpilledLines`). `modules`: every
    module with a declaration file, sorted. `imports`: the roots of the import graph (modules no
    other listed module imports), sorted: importing them loads every listed module.
    `commits`: repository (`owner/name`) -> the one commit its source links name. `files` and
    `declarations_read`: how many files and declarations were read (before merging duplicates).
    `blind_spots` and `gaps`: what the data is known to lack (`gaps.py`), for the manifest.
    """

    lines: SpilledLines
    modules: list[str]
    imports: list[str]
    commits: dict[str, str]
    files: int
    declarations_read: int
    merged: list[MergedDuplicate] = field(default_factory=list)
    blind_spots: list[BlindSpot] = field(default_factory=list)
    gaps: CatalogGaps = field(default_factory=CatalogGaps)

    @property
    def lean_githash(self) -> str | None:
        """The lean4 commit the core source links name, if any."""
        return self.commits.get(LEAN_REPOSITORY)

    @property
    def mathlib_commit(self) -> str | None:
        """The mathlib4 commit the Mathlib source links name, if any."""
        return self.commits.get(MATHLIB_REPOSITORY)


#: Files converted in this process before worker processes take over: a small import (most
#: test and project folders) never pays their start-up (about a second each).
SERIAL_FILES = 32
#: Worker processes converting files once an import has more than `SERIAL_FILES` of them, and
#: how many files each may have queued: reading the archive and ordering the records stays in
#: this process, so with two cores the conversion runs beside it.
CONVERT_WORKERS = 2
_QUEUED_PER_WORKER = 4


@dataclass
class _ConvertedLines:
    """One converted file as a worker returns it: each record as (name, `name_sort_key`, NDJSON
    line, `gaps.operator_marks`), which pickle far more cheaply than the record models, and the
    file's links into other modules (`gaps.file_links`)."""

    module: str
    imports: list[str]
    commits: dict[str, set[str]]
    records: list[tuple[str, tuple, bytes, int]]
    links: dict[str, LinkTally]


def _convert_lines(file: DocgenFile, base: str) -> _ConvertedLines:
    converted = convert_module(file, base)
    return _ConvertedLines(
        module=converted.module,
        imports=converted.imports,
        commits=converted.commits,
        records=[
            (r.name, name_sort_key(r.components), r.model_dump_json().encode(), marks)
            for r, marks in zip(converted.records, converted.marks, strict=True)
        ],
        links=converted.links,
    )


def _converted_files(files: Iterator[DocgenFile], base: str, workers: int) -> Iterator[tuple[DocgenFile, _ConvertedLines]]:
    """Each file with its conversion, in the order read: the first `SERIAL_FILES` here, the
    rest in `workers` processes (none when `workers` is 0), at most `_QUEUED_PER_WORKER` per
    worker queued. A conversion's error is raised here, for its file, after the files before it."""
    for _ in range(SERIAL_FILES):
        file = next(files, None)
        if file is None:
            return
        yield file, _convert_lines(file, base)
    if not workers:
        for file in files:
            yield file, _convert_lines(file, base)
        return
    pool = worker_pool(workers)
    queued: deque[tuple[DocgenFile, Future[_ConvertedLines]]] = deque()
    try:
        for file in files:
            queued.append((file, pool.submit(_convert_lines, file, base)))
            if len(queued) >= workers * _QUEUED_PER_WORKER:
                done, future = queued.popleft()
                yield done, future.result()
        while queued:
            done, future = queued.popleft()
            yield done, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass(slots=True)
class _Entry:
    key: tuple
    module: str
    index: int
    marks: int


def in_prefixes(module: str, prefixes: Sequence[str]) -> bool:
    """Whether `module` equals one of `prefixes` or lies under one (`Init` keeps `Init` and
    `Init.Core`, not `Initial`)."""
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def collect_docgen(
    path: str | Path,
    on_progress: ProgressCallback | None = None,
    doc_base: str = DEFAULT_DOC_BASE,
    module_prefixes: Sequence[str] | None = None,
    workers: int = CONVERT_WORKERS,
    package_roots: Sequence[str] | None = None,
) -> DocgenCollection:
    """Read and convert a doc-gen4 output (folder or `.tar.xz`), see the module docstring.
    Past the first `SERIAL_FILES` files, `workers` processes convert them (0: none); the result
    is the same either way.

    With `module_prefixes`, only the files of modules equal to or under one of them are
    converted (`in_prefixes`), e.g. `Init`, `Std`, `Lean`, `Lake` for the Lean core part of a
    Mathlib documentation; a prefix that is not a module name or keeps no module is refused (`invalid_request`).

    The collection's `gaps` list the missing modules (`gaps.missing_modules`) and, with
    `package_roots` (the root components of the profile's own packages, e.g. `Mathlib`), the
    host modules (`gaps.host_modules`; none without it); a package root that is not one
    component or that no module read has is refused (`invalid_request`). Its `blind_spots` are
    those of the kept records (`gaps.blind_spots`).

    `on_progress(done, total)` reports reading (files of a folder, compressed bytes of an
    archive); `doc_base` is the doc site the `docLink`s are resolved against (`links.py`).
    Raises `LeanIndexError`: `invalid_request` for a bad `doc_base` (before anything is read)
    or a path that is neither a folder nor a `.tar.xz`; `invalid_stream` for a malformed file (see `convert_module`), two files for one
    module, a repository whose source links name two commits, or a name documented in two
    modules that is not the same theorem twice (both files are named).
    """
    base = links.doc_base(doc_base)
    for prefix in module_prefixes or []:
        _check_module_prefix(prefix)
    check_package_roots(package_roots or [])
    spilled = SpilledLines()
    try:
        return _collect(path, on_progress, spilled, base, module_prefixes, workers, package_roots)
    except BaseException:
        spilled.close()
        raise


def _check_module_prefix(prefix: str) -> None:
    """Refuse (`invalid_request`, naming the field) a module prefix that is not a module name:
    dot-separated components, none of them numeric, as Lean prints `Init.Data.List`."""
    check_module_name(prefix, "module_prefixes")


def _collect(
    path: str | Path, on_progress: ProgressCallback | None, spilled: SpilledLines, base: str,
    module_prefixes: Sequence[str] | None, workers: int, package_roots: Sequence[str] | None,
) -> DocgenCollection:
    entries: dict[str, _Entry] = {}
    targets = LinkTargets()
    dropped: list[int] = []
    imports_of: dict[str, list[str]] = {}
    file_of: dict[str, str] = {}
    commits: dict[str, set[str]] = {}
    merged: list[MergedDuplicate] = []
    files = declarations = 0
    matched: set[str] = set()
    def kept() -> Iterator[DocgenFile]:
        for file in iter_docgen_files(path, on_progress):
            if module_prefixes is not None:
                module = module_of_file(file.name)
                if not in_prefixes(module, module_prefixes):
                    continue
                matched.update(prefix for prefix in module_prefixes if in_prefixes(module, [prefix]))
            yield file

    for file, converted in _converted_files(kept(), base, workers):
        if converted.module in imports_of:
            raise LeanIndexError(
                ErrorCode.INVALID_STREAM,
                f"{file.name}: module {converted.module!r} was already read from {file_of[converted.module]}",
                {"file": file.name, "module": converted.module},
            )
        files += 1
        imports_of[converted.module] = converted.imports
        file_of[converted.module] = file.name
        for repository, seen in converted.commits.items():
            commits.setdefault(repository, set()).update(seen)
        targets.add_file(converted.module, converted.links)
        for name, key, line, marks in converted.records:
            declarations += 1
            entry = _Entry(key=key, module=converted.module, index=spilled.append(line), marks=marks)
            earlier = entries.get(name)
            if earlier is None:
                entries[name] = entry
                continue
            merged.append(_merge(name, earlier, entry, file_of, spilled))
            if entry.module < earlier.module:
                entries[name] = entry
            dropped.append((earlier if entries[name] is entry else entry).index)
    unmatched = sorted(set(module_prefixes or []) - matched)
    if unmatched:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"no module of {path} is or lies under {', '.join(unmatched)}",
            {"module_prefixes": unmatched},
        )
    for repository, seen in commits.items():
        if len(seen) > 1:
            raise LeanIndexError(
                ErrorCode.INVALID_STREAM,
                f"source links name {len(seen)} commits of {repository}: {', '.join(sorted(seen))}",
                {"repository": repository, "commits": sorted(seen)},
            )
    spilled.order(entry.index for entry in sorted(entries.values(), key=lambda entry: entry.key))
    imported = {module for imports in imports_of.values() for module in imports}
    held = Counter(entry.module for entry in entries.values())
    gaps = CatalogGaps(
        missing_modules=missing_modules(imports_of, targets, (_signature(spilled.read(i))[2] for i in dropped)),
        host_modules=host_modules(imports_of, held, package_roots),
    )
    return DocgenCollection(
        lines=spilled,
        modules=sorted(imports_of),
        imports=sorted(module for module in imports_of if module not in imported),
        commits={repository: next(iter(seen)) for repository, seen in sorted(commits.items())},
        files=files,
        declarations_read=declarations,
        merged=sorted(merged, key=lambda m: m.name),
        blind_spots=blind_spots(entry.marks for entry in entries.values()),
        gaps=gaps,
    )


def _merge(name: str, earlier: _Entry, later: _Entry, file_of: dict[str, str], spilled: SpilledLines) -> MergedDuplicate:
    """Accept a second record of `name` when both are the same theorem, else fail naming both files."""
    first, second = _signature(spilled.read(earlier.index)), _signature(spilled.read(later.index))
    if first[0] != "theorem" or first != second:
        raise LeanIndexError(
            ErrorCode.INVALID_STREAM,
            f"{name!r} is declared in {file_of[earlier.module]} and again in {file_of[later.module]}"
            " (only the same theorem twice can be merged)",
            {"declaration": name, "files": [file_of[earlier.module], file_of[later.module]]},
        )
    kept, dropped = sorted((earlier.module, later.module))
    return MergedDuplicate(name=name, kept_module=kept, dropped_module=dropped)


def _signature(line: bytes) -> tuple:
    record = json.loads(line)
    return record["kind"], record["type"], record["type_constants"]


def approximate_fields(collection: DocgenCollection) -> list[str]:
    """`APPROXIMATE_FIELDS`, plus `module` when merged duplicates made the module a choice."""
    return sorted(set(APPROXIMATE_FIELDS) | (set(record_fields("module")) if collection.merged else set()))


def docgen_stream(collection: DocgenCollection, lean_version: str | None = None) -> Iterator[bytes]:
    """The collection as `leanindex.declarations/v1` lines: header, records, footer.

    The header names the extractor `leanindex-docgen-import` (this package's version), Lean's
    version (`lean_version`, else "unknown": the data names only the lean4 commit) and githash
    (the lean4 commit of the source links), the import roots and modules, the approximate
    fields and the repository commits of the source links.
    """
    header = HeaderRecord(
        record="header",
        format=STREAM_FORMAT,
        extractor=ExtractorInfo(name=EXTRACTOR_NAME, version=__version__),
        lean=LeanInfo(version=lean_version or UNKNOWN_LEAN_VERSION, githash=collection.lean_githash),
        imports=collection.imports,
        modules=collection.modules,
        approximate_fields=approximate_fields(collection),
        source_commits=collection.commits,
    )
    yield header.model_dump_json().encode()
    yield from collection.lines
    yield FooterRecord(record="footer", count=len(collection.lines)).model_dump_json().encode()


class DocgenImport(Frozen):
    """The result of an import: the new manifest, how many files and declarations were read,
    and the duplicate theorems merged (so `manifest.catalog.declaration_count` is
    `declarations_read - len(merged)`). Dump with `by_alias=True` (the manifest's `schema`)."""

    manifest: Manifest
    files: int
    declarations_read: int
    merged: list[MergedDuplicate]


def import_docgen(
    path: str | Path,
    root: str | Path,
    profile: str,
    lean_version: str | None = None,
    doc_base: str = DEFAULT_DOC_BASE,
    on_read: ProgressCallback | None = None,
    on_build: Callable[[int], None] | None = None,
    on_line: Callable[[int], None] | None = None,
    module_prefixes: Sequence[str] | None = None,
    package_roots: Sequence[str] | None = None,
) -> DocgenImport:
    """Import doc-gen4 output at `path` as `profile`'s catalog under `root`.

    Reads and converts everything (`collect_docgen`), then builds through
    `catalog.builder.build_catalog` with `EnvironmentFacts(source="doc-gen4")` and the mathlib4
    commit of the source links. `on_read` reports reading; `on_build(lines)` is called once
    reading is done with the number of stream lines to build, then `on_line(n)` per line.
    `lean_version` is stored as `normalize_lean_version` gives it (`v4.33.0` -> `4.33.0`);
    `doc_base` is the doc site each `doc_url` is resolved against (`links.doc_base`).
    `module_prefixes` keeps only the modules equal to or under them, and `package_roots` names
    the profile's own packages, so the modules of others are listed as host modules
    (`collect_docgen`). The manifest's `source.absent_facts` are `convert.ABSENT_FACTS`, its
    `source.blind_spots` and `gaps` the collection's.
    Raises the errors of `collect_docgen` and `build_catalog`, and `invalid_request` for a bad
    `lean_version` or `doc_base` (before anything is read); on any error nothing under `root`
    changes.
    """
    lean_version = normalize_lean_version(lean_version) if lean_version is not None else None
    collection = collect_docgen(path, on_read, doc_base, module_prefixes, package_roots=package_roots)
    if on_build is not None:
        on_build(len(collection.lines) + 2)  # header and footer
    facts = EnvironmentFacts(
        source="doc-gen4", mathlib_commit=collection.mathlib_commit, absent_facts=list(ABSENT_FACTS),
        blind_spots=collection.blind_spots, gaps=collection.gaps,
    )
    try:
        manifest = build_catalog(docgen_stream(collection, lean_version), root, profile, facts=facts, on_line=on_line)
    finally:
        collection.lines.close()
    return DocgenImport(
        manifest=manifest,
        files=collection.files,
        declarations_read=collection.declarations_read,
        merged=collection.merged,
    )

