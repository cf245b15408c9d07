"""One verified, opened catalog: manifest, memory-mapped index and text index (no database:
`catalog.duckdb` stays in the catalog, verified with it, but serving reads none of it)."""

from __future__ import annotations

import functools
import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..catalog.files import (
    DeadlineExceeded,
    catalog_stamps,
    link_target,
    run_with_deadline,
)
from ..catalog.index import SearchIndex, joined_strings
from ..catalog.instances import instance_positions, instances_recorded
from ..catalog.layout import MANIFEST_FILE, CatalogPaths
from ..catalog.manifest import Manifest, environment_identity
from ..catalog.records import instance_count
from ..catalog.text import TextIndex
from ..catalog.verify import VerifiedCatalog, verified_catalog
from ..catalog.watch import CatalogWatch, watched_paths
from ..errors import ErrorCode, LeanIndexError
from ..models import EnvironmentIdentity
from ..names import NameSyntaxError, format_name, parse_name
from .lease import Leases

if TYPE_CHECKING:
    from .suggest import NameTable

#: Seconds the files of a verified catalog may take to open (memory maps, the text index's
#: vocabulary); past it the open is given up.
OPEN_TIMEOUT_S = 30.0
#: Times a verification is tried again when the catalog changed under it (a rebuild switched
#: the link meanwhile) before the call is refused.
OPEN_ATTEMPTS = 3
#: Seconds a quiet change watch (`catalog.watch`) stands for a stamp comparison; past it the
#: stamps are compared again, for the changes inotify does not report: on network mounts (where
#: a `lstat` answers from an attribute cache for as long), a write through a memory map opened
#: before the watch, a mount over a catalog folder.
STAMPS_VALID_S = 1.0


def format_components(name: str) -> tuple[str | int, ...]:
    """The components of a printed constant name (a name that cannot be read back, which the
    builder keeps as printed, counts as one component)."""
    try:
        return parse_name(name)
    except NameSyntaxError:
        return (name,)


def _reason(error: BaseException) -> str:
    """Why opening failed, without a server path: an `OSError`'s reason, else the error's type."""
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    return type(error).__name__


def _unavailable(profile: str, error: BaseException) -> LeanIndexError:
    """`catalog_unavailable` for a catalog of `profile` whose files cannot be read (`error`)."""
    return LeanIndexError(
        ErrorCode.CATALOG_UNAVAILABLE,
        f"cannot open the catalog of profile {profile!r} ({_reason(error)})",
        {"profile": profile},
    )


@dataclass
class LoadedCatalog:
    """A catalog that passed `verify_catalog`, opened for serving.

    `text` is the BM25 text index. `constant_names` lists each constant that occurs in some
    type by its posting-list id and `constant_ids` maps it to that id; `modules` lists module
    names by id: the three are read from the index's maps on first use (a name search needs
    none of them). Nothing is opened but memory maps and the text index, read-only (no
    database connection, no cursor per call), so a `LoadedCatalog` may be shared between
    threads. `leases` counts the calls using it: `close()` retires it (no new lease), and the
    maps go with the object.
    """

    paths: CatalogPaths
    manifest: Manifest
    # Out of the repr: a failure report must not print (or, for a file truncated under its
    # map, fault on) hundreds of MiB of arrays.
    index: SearchIndex = field(repr=False)
    text: TextIndex = field(repr=False)
    stamps: dict[str, object] = field(repr=False)
    _names: list[str] | None = field(default=None, repr=False)
    _name_table: NameTable | None = field(default=None, repr=False)
    _by_suffix: dict[str, list[str]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _watch: CatalogWatch | None = field(default=None, repr=False)
    _watch_started: bool = field(default=False, repr=False)
    _compared_at: float = field(default=float("-inf"), repr=False)
    _check_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    leases: Leases = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Nothing to close: memory maps are released with the object.
        self.leases = Leases(lambda: None)

    @classmethod
    def open(cls, paths: CatalogPaths) -> LoadedCatalog:
        """Verify every file against the manifest (`verified_catalog`), then open it.

        The files are opened by path after verification, so the stamps of what was verified
        must still hold before and after opening; when they do not (a rebuild switched the link
        meanwhile, or a file was swapped), the whole is tried again, `OPEN_ATTEMPTS` times in
        all. Opening is given up after `OPEN_TIMEOUT_S` seconds (what it opened is closed when
        it finishes). Raises `LeanIndexError` as `verified_catalog`, and `catalog_unavailable`
        when the files cannot be opened, when the catalog kept changing, or on the timeout.
        """
        for _ in range(OPEN_ATTEMPTS):
            link = link_target(paths)
            try:
                verified = verified_catalog(paths, reuse=True)
            except LeanIndexError:
                if link_target(paths) == link:
                    raise
                continue  # a rebuild switched the link during the verification
            files = list(verified.manifest.catalog.files)
            if catalog_stamps(paths, files) != verified.stamps:
                continue
            try:
                loaded = run_with_deadline(functools.partial(cls._opened, paths, verified), OPEN_TIMEOUT_S, dispose=cls.close)
            except DeadlineExceeded:
                raise LeanIndexError(
                    ErrorCode.CATALOG_UNAVAILABLE,
                    f"the catalog of profile {paths.profile!r} could not be opened within {OPEN_TIMEOUT_S:g} s",
                    {"profile": paths.profile},
                ) from None
            if catalog_stamps(paths, files) == verified.stamps:
                return loaded
            loaded.close()
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE,
            f"the catalog of profile {paths.profile!r} changed while it was verified, {OPEN_ATTEMPTS} times; retry later",
            {"profile": paths.profile},
        )

    @classmethod
    def _opened(cls, paths: CatalogPaths, verified: VerifiedCatalog) -> LoadedCatalog:
        """The verified catalog's files opened (memory maps and the text index; the constant
        and module names are read from the maps on first use)."""
        try:
            index = SearchIndex.load(paths.catalog_dir)
            text = TextIndex(paths.catalog_dir)
        except (OSError, ValueError) as error:
            raise _unavailable(paths.profile, error) from None
        return cls(paths=paths, manifest=verified.manifest, index=index, text=text, stamps=verified.stamps)

    def _strings(self, text: np.ndarray, starts: np.ndarray) -> list[str]:
        """`catalog.index.joined_strings` of two index arrays; raises `catalog_unavailable`
        when they do not hold UTF-8 strings (as opening does for a file it cannot read)."""
        try:
            return joined_strings(text, starts)
        except ValueError as error:
            raise _unavailable(self.paths.profile, error) from None

    @cached_property
    def constant_names(self) -> list[str]:
        """The type constants by posting-list id, read on first use."""
        return self._strings(self.index.constant_names, self.index.constant_name_starts)

    @cached_property
    def constant_ids(self) -> dict[str, int]:
        """Each type constant's posting-list id, built on first use."""
        return {name: i for i, name in enumerate(self.constant_names)}

    @cached_property
    def modules(self) -> list[str]:
        """The module names by id, read on first use."""
        return self._strings(self.index.module_names, self.index.module_name_starts)

    def unchanged(self) -> bool:
        """True when no catalog file, link or manifest changed since verification.

        The first call starts a change watch (`catalog.watch`) and then compares every stamp
        (`files.catalog_stamps`: one `lstat` per file, 65 on Mathlib); later calls skip the
        comparison while the watch is quiet and the last comparison is under `STAMPS_VALID_S`
        old (one `ioctl`), and compare again otherwise. Without a watch every call compares."""
        with self._check_lock:
            now = time.monotonic()
            watch = self._watch
            if watch is not None and watch.quiet() and now - self._compared_at < STAMPS_VALID_S:
                return True
            if not self._watch_started:
                # Before the comparison: a change after it is then an event.
                self._watch_started = True
                files = [*self.manifest.catalog.files, MANIFEST_FILE]
                self._watch = watch = CatalogWatch.start(watched_paths(os.fspath(self.paths.catalog_dir), files))
                if watch is not None:
                    weakref.finalize(self, watch.close)
            elif watch is not None:
                watch.quiet()  # drain what the comparison below covers
            same = catalog_stamps(self.paths, self.manifest.catalog.files) == self.stamps
            self._compared_at = now if same else float("-inf")
            return same

    def close(self) -> None:
        """Retire the catalog: no new lease is granted; its change watch ends. The memory maps
        go with the object."""
        self.leases.retire()
        with self._check_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None

    def identity(self) -> EnvironmentIdentity:
        """The environment identity every response carries."""
        return environment_identity(self.paths.profile, self.manifest)

    def all_names(self) -> list[str]:
        """Every printed name in `pos` order, loaded on first use (for suggestions only)."""
        with self._lock:
            return self.all_names_unlocked()

    def all_names_unlocked(self) -> list[str]:
        """`all_names` for a caller that holds the lock."""
        if self._names is None:
            # The index's names: each after a NUL, with a final NUL (`catalog.index`).
            self._names = self.index.names[1:-1].tobytes().decode().split("\x00") if self.index.size else []
        return self._names

    def name_table(self) -> NameTable:
        """The visible names grouped by last component (`suggest.NameTable`), built on first use
        (one pass over every name; `benchmarks/suggest_bench.py` times it) and kept."""
        from .suggest import NameTable  # rapidfuzz: for suggestions only

        with self._lock:
            if self._name_table is None:
                self._name_table = NameTable.build(self.all_names_unlocked(), self.index.hidden)
            return self._name_table

    def close_fragments(self, fragment: str, limit: int = 5) -> list[str]:
        """Visible names whose last component is closest to `fragment` by edit similarity
        (rapidfuzz; the shortest name per last component), for a name fragment that nothing
        contains (`sqrrt` -> `Nat.sqrt`, `Real.sqrt`...)."""
        from rapidfuzz import fuzz, process

        table = self.name_table()
        found = process.extract(fragment.rsplit(".", 1)[-1], table.lasts, scorer=fuzz.ratio, limit=limit)
        return [table.shortest(match) for match, _score, _key in found]

    def mentioned(self, constant: str, where: str = "type") -> bool:
        """True when some declaration's type (`where="type"`) or value (`"value"`) mentions
        `constant`."""
        constant_id = self.constant_ids.get(constant)
        # The stored list's length: no int64 copy of a list that can hold most of the catalog.
        return constant_id is not None and len(self.index.posting_list(constant_id, where)) > 0

    @cached_property
    def _recorded(self) -> tuple[bool, bool]:
        """(conclusions recorded for every record, value constants recorded for every record);
        one scan of two index arrays, at the first search that needs them."""
        return bool((np.asarray(self.index.head) != -2).all()), bool(np.asarray(self.index.has_values).all())

    def conclusions_recorded(self) -> bool:
        """True when every record of the catalog has its conclusion recorded."""
        return self._recorded[0]

    def values_recorded(self) -> bool:
        """True when every record of the catalog has its value constants recorded."""
        return self._recorded[1]

    def instances_recorded(self) -> bool:
        """True when the catalog records the class of every instance (its instance table), so
        instance look-ups read that table instead of the conclusions (`catalog.instances`)."""
        return instances_recorded(self.index)

    def instance_count(self, position: int) -> int:
        """How many instances the instance table lists for the declaration at `position` as
        their class (from the index: `catalog.records`); only for a catalog whose
        `instances_recorded()`."""
        return instance_count(self.index.class_positions, self.index.class_instance_counts, position)

    def instance_positions(self, class_name: str) -> np.ndarray:
        """Positions (int64, ascending) of the instances the instance table lists for exactly
        `class_name` (one binary search over the class names, `catalog.instances`); only for a
        catalog whose `instances_recorded()`."""
        return instance_positions(self.index, class_name)

    def has_instances(self, class_name: str) -> bool:
        """True when the instance table lists an instance of exactly `class_name`."""
        return len(self.instance_positions(class_name)) > 0

    @cached_property
    def _missing_modules(self) -> dict[str, str]:
        """Linked name -> its missing module, from the manifest's `gaps` (built on first use)."""
        return {name: gap.module for gap in self.manifest.gaps.missing_modules for name in gap.linked_names}

    def missing_module_of(self, name: str) -> str | None:
        """The module the catalog lacks whose declaration `name` is, as known from the links in
        its signatures (`CatalogGaps.missing_modules`); None for any other name."""
        return self._missing_modules.get(name)

    def constants_ending_with(self, name: str) -> list[str]:
        """Known type constants of which `name` is a proper trailing part, component-wise
        (`Measure.map` -> `MeasureTheory.Measure.map`), sorted; built on first use."""
        with self._lock:
            if self._by_suffix is None:
                by_suffix: dict[str, list[str]] = {}
                for constant in self.constant_names:
                    components = format_components(constant)
                    for start in range(1, len(components)):
                        by_suffix.setdefault(format_name(components[start:]), []).append(constant)
                self._by_suffix = by_suffix
            return sorted(self._by_suffix.get(name, []))

    def close_constants(self, name: str, limit: int = 5) -> list[str]:
        """Known type constants close to `name` by edit similarity (rapidfuzz)."""
        from rapidfuzz import fuzz, process

        found = process.extract(name, self.constant_names, scorer=fuzz.ratio, limit=limit)
        return [match for match, _score, _key in found]
