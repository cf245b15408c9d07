"""The query engine: every profile under a root, verified before it serves.

`Engine(root)` answers `search`, `inspect` (and, for 1-100 names at once, `inspect_many` and
`exists`) and `environments` for each profile under `root` (a pinned manifest or a served
catalog). A profile is verified (`catalog.verify`: every catalog file's sha256 against the
manifest switched in with it, and its counts) when first used
and again whenever a stat shows that its manifest, catalog link or a catalog file changed
(`catalog.files.catalog_stamps`: device, inode, type, size, modification and change time, so
an in-place edit shows even with size and modification time put back); a failed verification
fails closed with `catalog_unavailable` or `digest_mismatch` on every call until the catalog is
whole again, and the next call after the repair serves again. Calls that arrive while a profile
is being verified wait for that one verification and share its outcome; verification never
blocks on a file (`catalog.files`), so a broken profile holds up neither the others nor the
process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.layout import CatalogPaths, discover_profiles, normalize_profile
from ..errors import ErrorCode, LeanIndexError
from ..home import resolve_root
from ..models import (
    EnvironmentIdentity,
    EnvironmentsResponse,
    EnvironmentSummary,
    ExistsRequest,
    ExistsResponse,
    InspectManyRequest,
    InspectManyResponse,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
    display_profile,
)
from .inspect import exists as _exists
from .inspect import inspect as _inspect
from .inspect import inspect_many as _inspect_many
from .loaded import LoadedCatalog
from .search import search as _search

if TYPE_CHECKING:  # a diff's code loads with its first call: a search never pays for it
    from .diff import DeclarationDiff, DiffRequest

__all__ = ["Engine"]

#: Seconds a call waits for another call's verification of the same profile before it is
#: refused with `catalog_unavailable` (a verification reads every file; see `catalog.files`).
SHARED_WAIT_S = 120.0


class _Opening:
    """One verification of a profile in progress; the calls that arrive meanwhile wait for it
    (`done`) and share its `error`, or take the catalog it published."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: LeanIndexError | None = None


class _Profile:
    """What the engine holds for one profile: its verified catalog, the verification in
    progress, and the lock guarding both (held for stats only, never for a verification)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded: LoadedCatalog | None = None
        self.opening: _Opening | None = None


class Engine:
    """Search and inspect over the catalogs under `root` (thread-safe); `root` None is the
    default root (`leanindex.home.default_root`: `$LEANINDEX_ROOT`, else the user data folder)."""

    def __init__(self, root: str | Path | None = None):
        self.root = resolve_root(root).resolve()
        self._profiles: dict[str, _Profile] = {}
        self._lock = threading.Lock()

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
        call that reads its files takes a `lease` instead.

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
        taken under the profile lock, so no swap can retire it in between. One call verifies a
        profile at a time; the others wait for it (at most `SHARED_WAIT_S`) and share its outcome."""
        profile = normalize_profile(environment)
        with self._lock:
            state = self._profiles.get(profile)
        if state is None:
            # before holding anything for an id a client made up
            self._known(CatalogPaths.of(self.root, profile), environment)
            with self._lock:
                state = self._profiles.setdefault(profile, _Profile())
        while True:
            with state.lock:
                loaded = state.loaded
                if loaded is not None and loaded.unchanged():
                    return self._held(loaded, lease)
                if loaded is not None:
                    state.loaded = None
                    loaded.close()
                opening = state.opening
                if opening is None:
                    opening = state.opening = _Opening()
                    break
            if not opening.done.wait(SHARED_WAIT_S):
                raise LeanIndexError(
                    ErrorCode.CATALOG_UNAVAILABLE,
                    f"the catalog of profile {profile!r} is still being verified; retry shortly",
                    {"profile": profile},
                )
            if opening.error is not None:
                shared = opening.error
                raise LeanIndexError(shared.code, shared.message, dict(shared.details))
        try:
            # Resolved only here: `CatalogPaths.of` resolves the root (a few stats), which a
            # call answered by the loaded catalog does not need.
            paths = CatalogPaths.of(self.root, profile)
            self._known(paths, environment)
            loaded = LoadedCatalog.open(paths)
        except BaseException as error:
            with state.lock:
                state.opening = None
            opening.error = (
                error
                if isinstance(error, LeanIndexError)
                else LeanIndexError(ErrorCode.CATALOG_UNAVAILABLE, f"verifying profile {profile!r} failed", {"profile": profile})
            )
            opening.done.set()
            raise
        with state.lock:
            state.opening = None
            state.loaded = loaded
            opening.done.set()
            return self._held(loaded, lease)

    def _known(self, paths: CatalogPaths, environment: str) -> None:
        """Raise `unknown_environment` (the known ids in `details.known`; no server path) when
        `paths.profile` has neither a pinned nor a served manifest."""
        if paths.manifest.exists() or paths.served_manifest.exists():
            return
        known = [display_profile(p) for p in self.profiles()]
        hint = (
            f"known here: {', '.join(known)}"
            if known
            else "no catalog is built on this root yet (try `leanindex demo --root DIR`, `leanindex catalog import-docgen` or `leanindex catalog build`)"
        )
        raise LeanIndexError(
            ErrorCode.UNKNOWN_ENVIRONMENT,
            f"unknown environment {environment!r}; {hint}",
            {"environment": environment, "known": known},
        )

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

    def inspect_many(self, request: InspectManyRequest) -> InspectManyResponse:
        """Look up 1-100 declarations in one lease, each answered or refused in its own entry;
        see `leanindex.engine.inspect.inspect_many`."""
        with self.lease(request.environment) as loaded:
            return _inspect_many(loaded, request)

    def exists(self, request: ExistsRequest) -> ExistsResponse:
        """Whether 1-100 names are declarations, from the name index; see
        `leanindex.engine.inspect.exists`."""
        with self.lease(request.environment) as loaded:
            return _exists(loaded, request)

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
        `leanindex.engine.diff.diff_declarations` for the rules, pages and errors (and, from
        here, `unknown_environment`, `catalog_unavailable`, `digest_mismatch`)."""
        from .diff import diff_declarations

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
            states = list(self._profiles.values())
        for state in states:
            with state.lock:
                if state.loaded is not None:
                    state.loaded.close()
                    state.loaded = None


def _unverified(profile: str, error: LeanIndexError) -> EnvironmentSummary:
    return EnvironmentSummary(
        **EnvironmentIdentity.unpinned(profile, error.details.get("environment_digest", "")).model_dump(),
        imports=[],
        declaration_count=None,
        visible_count=None,
        verified=False,
        problem=error.body(),
    )
