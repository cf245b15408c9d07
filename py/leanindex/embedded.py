"""The embedded Lean core catalog: doc-gen4's output for Lean core v4.33.0, shipped in the package.

`data/docgen-core-v4.33.0.tar.xz` (5.3 MB, Apache-2.0; what and where from: `data/NOTICE-docgen-core.md`)
holds one doc-gen4 declaration file per module of Init, Std, Lean and Lake at Lean v4.33.0
(lean4 commit d8b18978): 86,957 declarations. `import_embedded` imports it through the doc-gen4
front end as profile `core-docgen` (shown `CORE-DOCGEN`), so searching real Lean needs neither
a toolchain nor a download. The import is deterministic: the manifest it writes is pinned as
`manifests/core-docgen.json` in the source repository and CI rebuilds and diffs it.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from .catalog.layout import CatalogPaths
from .catalog.links import CORE_ROOTS
from .catalog.manifest import Manifest
from .catalog.verify import verify_catalog
from .docgen import DocgenImport, import_docgen
from .docgen.files import ProgressCallback
from .errors import LeanIndexError

EMBEDDED_PROFILE = "core-docgen"
EMBEDDED_LEAN_VERSION = "4.33.0"
EMBEDDED_ARCHIVE = "docgen-core-v4.33.0.tar.xz"
EMBEDDED_LEAN_COMMIT = "d8b18978322de05a8f3dba51ef03cf5461676c17"


def embedded_archive() -> Path:
    """Path of the embedded doc-gen4 archive inside the installed package."""
    return Path(str(resources.files("leanindex") / "data" / EMBEDDED_ARCHIVE))


def embedded_catalog(root: str | Path) -> Manifest | None:
    """The manifest of the embedded import under `root` when it is there and verifies (every
    file's sha256 against the manifest, the lean4 commit the archive's); None otherwise."""
    paths = CatalogPaths.of(root, EMBEDDED_PROFILE)
    if not paths.manifest.is_file() and not paths.served_manifest.is_file():
        return None
    try:
        manifest = verify_catalog(paths)
    except LeanIndexError:
        return None
    return manifest if manifest.lean.githash == EMBEDDED_LEAN_COMMIT else None


def import_embedded(
    root: str | Path,
    on_read: ProgressCallback | None = None,
    on_build: Callable[[int], None] | None = None,
    on_line: Callable[[int], None] | None = None,
) -> DocgenImport:
    """Import the embedded archive as `core-docgen` under `root` (Lean version 4.33.0; the
    profile's packages are Lean core's, so the modules of the project the documentation was
    built in are listed as host modules); the callbacks are `import_docgen`'s. Raises what
    `import_docgen` raises; on any error nothing under `root` changes."""
    return import_docgen(
        embedded_archive(), root, EMBEDDED_PROFILE, lean_version=EMBEDDED_LEAN_VERSION,
        on_read=on_read, on_build=on_build, on_line=on_line, package_roots=sorted(CORE_ROOTS),
    )
