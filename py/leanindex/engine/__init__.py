"""The query engine: every profile under a root, verified before it serves.

`Engine(root)` answers `search`, `inspect` and `environments` for each profile that has a
manifest under `root/manifests/`. A profile is verified (every catalog file's sha256 against its
manifest) when first used and again whenever a stat shows that its manifest, catalog link or a
catalog file changed; a failed verification fails closed with `catalog_unavailable` or
`digest_mismatch` on every call until the catalog is whole again.
"""

from __future__ import annotations

import threading
from pathlib import Path

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
        """Profile ids (lower case) that have a manifest under the root."""
        return discover_profiles(self.root)

    def served_profile(self, environment: str) -> str | None:
        """`environment`'s display id (upper case) when it names a profile with a manifest under
        the root, else None (a malformed id included). One stat, no listing of `manifests/`."""
        try:
            profile = normalize_profile(environment)
        except LeanIndexError:
            return None
        return display_profile(profile) if CatalogPaths(self.root, profile).manifest.exists() else None

    def catalog(self, environment: str) -> LoadedCatalog:
        """The verified catalog of `environment` (any case).

        Raises `LeanIndexError`: `unknown_environment` (no manifest of that id, with the known
        ids in `details.known`), `catalog_unavailable` or `digest_mismatch`.
        """
        profile = normalize_profile(environment)
        paths = CatalogPaths.of(self.root, profile)
        # One lock per profile: re-hashing a large catalog must not hold up the others.
        with self._lock:
            profile_lock = self._profile_locks.setdefault(profile, threading.Lock())
        with profile_lock:
            loaded = self._loaded.get(profile)
            if loaded is not None and loaded.unchanged():
                return loaded
            if loaded is not None:
                del self._loaded[profile]
                loaded.close()
            if not paths.manifest.exists():
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
            return loaded

    def search(self, request: SearchRequest) -> SearchResponse:
        """Run a bounded search; see `leanindex.engine.search.search`."""
        return _search(self.catalog(request.environment), request)

    def inspect(self, request: InspectRequest) -> InspectResponse:
        """Look up one declaration; see `leanindex.engine.inspect.inspect`."""
        return _inspect(self.catalog(request.environment), request)

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
        """Close every open catalog."""
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
