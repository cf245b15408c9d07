"""Checker configuration, one per profile, and where its facts come from.

`CheckerConfig.for_profile(root, profile, ...)` reads the profile's manifest when there is one
(the served `ROOT/catalog/<profile>/manifest.json`, else the pinned `ROOT/manifests/<profile>.json`;
imports and environment identity come from it); otherwise the imports must
be given and the identity fields are null apart from the profile id and a digest of the
configuration's imports.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator

from ..base import Frozen
from ..catalog.layout import CatalogPaths
from ..catalog.manifest import Manifest, environment_identity, read_manifest
from ..errors import ErrorCode, LeanIndexError
from ..lake.project import read_toolchain
from ..models import EnvironmentIdentity, display_profile
from .models import MAX_TIMEOUT_S


class CheckerConfig(Frozen):
    """Everything a checker for one profile needs.

    - `project_dir`: the Lake project whose `LEAN_PATH` resolves `imports` (holds `lean-toolchain`);
    - `lake_path`: the `lake` executable the REPL is launched with (`lake env <repl>`);
    - `repl_dir`: an already built REPL checkout (binary at `.lake/build/bin/repl`, the layout
      lean-interact's `local_repl_path` expects);
    - `imports`: the profile's header, elaborated once per worker;
    - `workers`: warm REPLs kept per profile; `queue_size`: checks allowed to wait (then `busy`);
    - `timeout_s` default per-check budget (max 300 s); `header_timeout_s` for elaborating the header;
    - `max_code_bytes`: UTF-8 size cap of a submission (`payload_too_large`);
    - `memory_limit_mb`: address-space limit (RLIMIT_AS) per REPL process; Mathlib needs about 9 GB;
    - `cpu_limit_s`, `file_size_limit_mb`, `max_processes`: further rlimits (CPU seconds over a
      worker's life, largest file it may write, processes/threads it may start);
    - `recycle_after_checks` / `recycle_rss_mb`: retire a worker after that many checks or once its
      resident size (whole process tree) exceeds that many MiB;
    - `cache_entries`: size of the verdict LRU (0 disables it);
    - `proof_state_ttl_s` / `proof_states_per_worker`: idle seconds before an open proof state
      expires, and most states open on one worker (the least recently used is closed);
    - `prepared_entries`: prepared environments (target checks) kept per worker, least recently
      used dropped first;
    - `allow_unsafe_commands`: do not refuse verdict-forging commands (responses say `protected: false`);
    - `network_isolation`: run REPLs in a new network (and PID) namespace via `unshare` when available.
    """

    profile: str
    identity: EnvironmentIdentity
    project_dir: Path
    lake_path: Path = Path("lake")
    repl_dir: Path
    imports: Annotated[list[str], Field(min_length=1)]
    workers: Annotated[int, Field(ge=1, le=64)] = 1
    queue_size: Annotated[int, Field(ge=0, le=10_000)] = 16
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S)] = 60.0
    header_timeout_s: Annotated[float, Field(gt=0)] = 600.0
    max_code_bytes: Annotated[int, Field(ge=1)] = 256 * 1024
    memory_limit_mb: Annotated[int, Field(ge=64)] | None = 12 * 1024
    cpu_limit_s: Annotated[int, Field(ge=1)] | None = 4 * 3600
    file_size_limit_mb: Annotated[int, Field(ge=1)] | None = 64
    max_processes: Annotated[int, Field(ge=1)] | None = 1024
    recycle_after_checks: Annotated[int, Field(ge=1)] = 500
    recycle_rss_mb: Annotated[int, Field(ge=16)] | None = 8 * 1024
    cache_entries: Annotated[int, Field(ge=0)] = 1024
    prepared_entries: Annotated[int, Field(ge=0, le=1024)] = 16
    proof_state_ttl_s: Annotated[float, Field(gt=0)] = 900.0
    proof_states_per_worker: Annotated[int, Field(ge=1, le=100_000)] = 256
    allow_unsafe_commands: bool = False
    network_isolation: bool = True

    @field_validator("imports")
    @classmethod
    def _module_names(cls, value: list[str]) -> list[str]:
        for module in value:
            if not module or any(not part for part in module.split(".")) or any(c.isspace() for c in module):
                raise ValueError(f"invalid module name {module!r}")
        return value

    @property
    def repl_binary(self) -> Path:
        """Where lean-interact looks for the REPL executable inside `repl_dir`."""
        return self.repl_dir / ".lake" / "build" / "bin" / "repl"

    @classmethod
    def for_profile(
        cls,
        root: str | Path,
        profile: str,
        *,
        project_dir: str | Path,
        repl_dir: str | Path,
        lake_path: str | Path = "lake",
        imports: list[str] | None = None,
        **settings: object,
    ) -> CheckerConfig:
        """A config for `profile` under `root`.

        With a manifest present (the served `ROOT/catalog/<profile>/manifest.json`, else the pinned
        `ROOT/manifests/<profile>.json`), it gives the imports and the
        identity (a given `imports` must then equal the manifest's); without it `imports` is
        required. Raises `LeanIndexError`: `unknown_environment` (no manifest and no imports),
        `invalid_request` (imports disagree with the manifest, bad profile id, missing paths),
        `digest_mismatch`/`catalog_unavailable` from reading a broken manifest.
        """
        paths = CatalogPaths.of(root, profile)
        # The served manifest is the one switched in with the catalog; the pinned copy can lag
        # behind it after a build killed between the switch and the copy.
        source = paths.served_manifest if paths.served_manifest.exists() else paths.manifest
        pinned: str | None = None
        if source.exists():
            manifest = read_manifest(source)
            pinned = manifest_toolchain(manifest)
            if imports is not None and list(imports) != list(manifest.imports):
                raise LeanIndexError(
                    ErrorCode.INVALID_REQUEST,
                    f"imports {imports} differ from the manifest's {manifest.imports} for {display_profile(profile)}",
                    {"imports": imports, "manifest_imports": manifest.imports},
                )
            if manifest.source.kind == "doc-gen4":
                raise LeanIndexError(
                    ErrorCode.INVALID_REQUEST,
                    f"{display_profile(paths.profile)}'s catalog was imported from doc-gen4 output, which pins no runnable "
                    "environment (its imports are the documented project's); check against a profile built by the "
                    "Lean extractor (`leanindex catalog build --profile ...`)",
                    {"environment": profile, "source": "doc-gen4"},
                )
            _same_toolchain(manifest.toolchain, Path(project_dir), profile)
            identity = environment_identity(paths.profile, manifest)
            imports = list(manifest.imports)
        elif imports:
            digest = hashlib.sha256(("imports:" + "\n".join(imports)).encode()).hexdigest()
            identity = EnvironmentIdentity.unpinned(paths.profile, digest)
        else:
            raise LeanIndexError(
                ErrorCode.UNKNOWN_ENVIRONMENT,
                f"no manifest for {display_profile(profile)} under {paths.root} and no imports given",
                {"environment": profile, "manifest": str(paths.manifest)},
            )
        # Lean first: without it, the REPL and project folders cannot have been built either.
        lake = _resolve_executable(lake_path, pinned)
        project = Path(project_dir).resolve()
        repl = Path(repl_dir).resolve()
        for label, path in (("project", project), ("repl", repl)):
            if not path.is_dir():
                raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"{label} directory {path} does not exist", {label: str(path)})
        return cls(
            profile=paths.profile,
            identity=identity,
            project_dir=project,
            repl_dir=repl,
            lake_path=lake,
            imports=imports,
            # The remaining fields, typed `object` here and checked by the model at run time:
            # a static type would repeat every field of the class (a TypedDict beside it).
            **settings,  # type: ignore[arg-type]
        )


def manifest_toolchain(manifest: Manifest) -> str | None:
    """The toolchain a manifest pins: its `toolchain` line, else `leanprover/lean4:v<lean.version>`
    (None when the version is unknown)."""
    if manifest.toolchain:
        return manifest.toolchain.strip()
    version = manifest.lean.version
    return f"leanprover/lean4:v{version}" if version and version != "unknown" else None


def _resolve_executable(path: str | Path, toolchain: str | None = None) -> Path:
    """An absolute path to `path` (searched on PATH when it has no slash). Raises
    `LeanIndexError(lean_not_installed)` when absent, naming `toolchain` (the one the catalog
    pins) and how to install it with elan."""
    import shutil

    from ..lake.tools import INSTALL_ELAN

    text = str(path)
    found = shutil.which(text) if os.sep not in text else (text if os.access(text, os.X_OK) else None)
    if not found:
        wanted = toolchain or "the toolchain your Lake project's lean-toolchain names"
        install = f"elan toolchain install {toolchain}" if toolchain else "elan toolchain install <that toolchain>"
        raise LeanIndexError(
            ErrorCode.LEAN_NOT_INSTALLED,
            f"checking needs Lean, and the lake executable {text!r} was not found. The catalog pins {wanted}: install elan "
            f"({INSTALL_ELAN}), then `{install}`, and build a REPL for it (docs/checker.md)",
            {"lake": text, "toolchain": toolchain, "install_elan": INSTALL_ELAN},
        )
    # Absolute but not symlink-resolved: elan's `lake` is a proxy that dispatches on its name.
    return Path(found).absolute()


def _same_toolchain(pinned: str | None, project_dir: Path, profile: str) -> None:
    """Refuse a project whose `lean-toolchain` differs from the one the manifest pins: the REPL
    would answer for another Lean than the environment identity on every response claims."""
    actual = read_toolchain(project_dir)
    if pinned is None or actual is None:
        return
    if actual != pinned.strip():
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"the project {project_dir} runs {actual}, but {display_profile(profile)}'s manifest pins {pinned}",
            {"environment": profile, "project_toolchain": actual, "manifest_toolchain": pinned},
        )
