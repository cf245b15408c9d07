"""The query engine: every profile under a root, verified before it serves.

`Engine(root)` answers `search`, `inspect` and `environments` for each profile under `root`
(a pinned manifest or a served catalog). A profile is verified (every catalog file's sha256
against the manifest switched in with it) when first used and again whenever a stat shows that its manifest, catalog link or a
catalog file changed; a failed verification fails closed with `catalog_unavailable` or
`digest_mismatch` on every call until the catalog is whole again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..catalog.diff import DeclarationDiff, DiffRequest, diff_declarations
from ..catalog.layout import CatalogPaths, discover_profiles, normalize_profile
from ..errors import ErrorCode, LeanIndexError
from ..home import resolve_root
from ..models import (
    EnvironmentIdentity,
    EnvironmentsResponse,
    EnvironmentSummary,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
    display_profile,
)
from .inspect import inspect as _inspect
from .loaded import LoadedCatalog
from .search import search as _search

__all__ = ["Engine"]


class Engine:
    """Search and inspect over the catalogs under `root` (thread-safe); `root` None is the
    default root (`leanindex.home.default_root`: `$LEANINDEX_ROOT`, else the user data folder)."""

    def __init__(self, root: str | Path | None = None):
        self.root = resolve_root(root).resolve()
        self._loaded: dict[str, LoadedCatalog] = {}
        self._lock = threading.Lock()
        self._profile_locks: dict[str, threading.Lock] = {}

    def profiles(self) -> list[str]:
        """Profile ids (lower case) under the root (a pinned manifest or a served catalog)."""
        return discover_profiles(self.root)

    def served_profile(self, environment: str) -> str | None:
        """`environment`'s display id (upper case) when it names a profile with a manifest under
        the root (pinned, or served inside its catalog), else None (a malformed id included). At
        most two stats, no listing of `manifests/`."""
        try:
            profile = normalize_profile(environment)
        except LeanIndexError:
            return None
        paths = CatalogPaths(self.root, profile)
        return display_profile(profile) if paths.manifest.exists() or paths.served_manifest.exists() else None

    def catalog(self, environment: str) -> LoadedCatalog:
        """The verified catalog of `environment` (any case), for its manifest and identity; a
        call that queries its database takes a `lease` instead.

        Raises `LeanIndexError`: `unknown_environment` (no manifest of that id, with the known
        ids in `details.known`), `catalog_unavailable` or `digest_mismatch`.
        """
        return self._current(environment, lease=False)

    @contextmanager
    def lease(self, environment: str) -> Iterator[LoadedCatalog]:
        """The verified catalog of `environment`, held for the block: a rebuild that swaps in a
        newer catalog meanwhile does not close this one until the block ends. Raises as
        `catalog`, and `catalog_unavailable` once the engine is closed."""
        loaded = self._current(environment, lease=True)
        try:
            yield loaded
        finally:
            loaded.leases.release()

    def _current(self, environment: str, lease: bool) -> LoadedCatalog:
        """The loaded catalog of `environment`, re-verified and swapped when a stat shows a change
        (the replaced one is retired, not closed under its users); with `lease`, a lease on it
        taken under the profile lock, so no swap can retire it in between."""
        profile = normalize_profile(environment)
        paths = CatalogPaths.of(self.root, profile)
        # One lock per profile: re-hashing a large catalog must not hold up the others.
        with self._lock:
            profile_lock = self._profile_locks.setdefault(profile, threading.Lock())
        with profile_lock:
            loaded = self._loaded.get(profile)
            if loaded is not None and loaded.unchanged():
                return self._held(loaded, lease)
            if loaded is not None:
                del self._loaded[profile]
                loaded.close()
            if not paths.manifest.exists() and not paths.served_manifest.exists():
                known = [display_profile(p) for p in self.profiles()]
                hint = (
                    f"known here: {', '.join(known)}"
                    if known
                    else "none is built there yet (try `leanindex demo --root DIR`, `leanindex catalog import-docgen` or `leanindex catalog build`)"
                )
                raise LeanIndexError(
                    ErrorCode.UNKNOWN_ENVIRONMENT,
                    f"unknown environment {environment!r} under {self.root}; {hint}",
                    {"environment": environment, "known": known, "root": str(self.root)},
                )
            loaded = LoadedCatalog.open(paths)
            self._loaded[profile] = loaded
            return self._held(loaded, lease)

    def _held(self, loaded: LoadedCatalog, lease: bool) -> LoadedCatalog:
        if lease and not loaded.leases.acquire():
            raise LeanIndexError(
                ErrorCode.CATALOG_UNAVAILABLE, "the engine is closed", {"profile": loaded.paths.profile}
            )
        return loaded

    def search(self, request: SearchRequest) -> SearchResponse:
        """Run a bounded search; see `leanindex.engine.search.search`."""
        with self.lease(request.environment) as loaded:
            return _search(loaded, request)

    def inspect(self, request: InspectRequest) -> InspectResponse:
        """Look up one declaration; see `leanindex.engine.inspect.inspect`."""
        with self.lease(request.environment) as loaded:
            return _inspect(loaded, request)

    def close_names(self, environment: str, names: Sequence[str]) -> tuple[str, list[list[str]]]:
        """Suggestions for names Lean does not know (`suggest.NameTable.suggest`: at most 8 each,
        best first), from `environment`'s catalog: (that catalog's environment digest, one list
        per name of `names`). The caller compares the digest with the environment the names
        came from. The first call on a catalog builds its name table (seconds on Mathlib; see
        `benchmarks/suggest_bench.py`). Raises as `catalog`."""
        with self.lease(environment) as loaded:
            table = loaded.name_table()
            return loaded.manifest.environment_digest, [table.suggest(name) for name in names]

    def diff(self, request: DiffRequest) -> DeclarationDiff:
        """Per-declaration changes from `request.older` to `request.newer`, two served profiles
        whose catalogs are verified and leased for the call; see
        `leanindex.catalog.diff.diff_declarations` for the rules, pages and errors (and, from
        here, `unknown_environment`, `catalog_unavailable`, `digest_mismatch`)."""
        with self.lease(request.older) as older, self.lease(request.newer) as newer:
            return diff_declarations(
                (older.paths, older.manifest), (newer.paths, newer.manifest),
                list(request.categories) or None, request.limit, request.after,
            )

    def environments(self) -> EnvironmentsResponse:
        """Every profile under the root with its identity and counts. A profile whose catalog
        fails verification is listed with `verified: false` (and no counts it cannot vouch for)
        rather than hidden."""
        summaries = []
        for profile in self.profiles():
            try:
                loaded = self.catalog(profile)
            except LeanIndexError as error:
                summaries.append(_unverified(profile, error))
                continue
            m = loaded.manifest
            summaries.append(
                EnvironmentSummary(
                    **loaded.identity().model_dump(),
                    imports=m.imports,
                    declaration_count=m.catalog.declaration_count,
                    visible_count=m.catalog.visible_count,
                    verified=True,
                )
            )
        return EnvironmentsResponse(environments=summaries)

    def close(self) -> None:
        """Retire every open catalog (each closes when its last call has finished)."""
        with self._lock:
            for loaded in self._loaded.values():
                loaded.close()
            self._loaded.clear()


def _unverified(profile: str, error: LeanIndexError) -> EnvironmentSummary:
    return EnvironmentSummary(
        **EnvironmentIdentity.unpinned(profile, error.details.get("environment_digest", "")).model_dump(),
        imports=[],
        declaration_count=None,
        visible_count=None,
        verified=False,
        problem=error.body(),
    )
