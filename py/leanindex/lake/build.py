"""Build a profile's catalog end to end: extractor → stream → catalog builder → manifest.

`build_profile` finds `lake`, builds the extractor (or takes a given executable), runs it with
`lake env` inside the profile's Lake project, and feeds its stdout straight into
`build_catalog` (no temporary NDJSON file). The manifest gets what the stream cannot say: the
project's packages (`lake-manifest.json`), its `lean-toolchain` line, the `modules_digest`
over the loaded modules' `.olean` files, the extractor source digest and the platform; and the
build fills each record's `source_url` from the packages' repositories (`catalog/links.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog.builder import EnvironmentFacts, build_catalog, host_platform
from ..catalog.layout import CatalogPaths
from ..catalog.links import ModuleFiles
from ..catalog.manifest import Manifest, mathlib_commit_of
from ..errors import ErrorCode, LeanIndexError
from .extractor import ExtractorRun
from .oleans import modules_digest
from .profiles import pinned_profile, profile_imports
from .project import package_trees, read_lake_packages, read_toolchain, require_project
from .tools import (
    LakeEnvironment,
    build_extractor,
    extractor_source_digest,
    find_lake,
    find_source_checkout,
    lake_environment,
)


@dataclass
class ProfileBuild:
    """What to build. `project`: the Lake project whose `LEAN_PATH` resolves the imports
    (default: see `default_project`); `imports`: modules to extract (default: the pinned
    profile's); `lake`: the lake executable (default: `lake` on PATH); `extractor`: a built
    extractor executable (default: build it in `source`); `source`: the LeanIndex source
    checkout (default: the one leanindex runs from); `timeout_s`: wall-clock limit of the
    extraction in seconds (default: none)."""

    profile: str
    root: Path
    project: Path | None = None
    imports: list[str] = field(default_factory=list)
    lake: str | None = None
    extractor: Path | None = None
    source: Path | None = None
    with_values: bool = True
    threads: int | None = None
    timeout_s: float | None = None


def default_projects_dir(root: Path) -> Path:
    """Where `leanindex profile init` puts profile projects by default: `ROOT/projects/`."""
    return Path(root).resolve() / "projects"


def default_project(profile: str, root: Path, source: Path | None) -> Path:
    """The project a profile is built in when `--project` is not given: a pinned profile
    without packages (CORE) runs in the LeanIndex source checkout itself (its `Init` comes
    with the toolchain); one with packages runs in `ROOT/projects/<profile>` (made by
    `leanindex profile init`). Raises `LeanIndexError(invalid_request)` saying what to pass."""
    definition = pinned_profile(profile)
    if definition is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"profile {profile!r} is not pinned: pass --project DIR (your Lake project) and --imports MODULE",
            {"profile": profile},
        )
    if definition.require is None:
        if source is None:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"no LeanIndex source checkout found to run profile {definition.name!r} in: pass --project DIR "
                f"(e.g. one made by `leanindex profile init {definition.name}`) or --source DIR",
                {"profile": profile},
            )
        return source
    project = default_projects_dir(root) / definition.name
    if not project.is_dir():
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"no project for profile {definition.name!r} at {project}: create it with "
            f"`leanindex profile init {definition.name}` or pass --project DIR",
            {"profile": profile, "project": str(project)},
        )
    return project


def _extractor_flags(build: ProfileBuild) -> list[str]:
    flags = [] if build.with_values else ["--without-values"]
    if build.threads is not None:
        flags += ["--threads", str(build.threads)]
    return flags


def _check_toolchains(project: Path, project_toolchain: str | None, source: Path | None, profile: str) -> None:
    definition = pinned_profile(profile)
    expected = definition.toolchain if definition else (read_toolchain(source) if source else None)
    if expected and project_toolchain and project_toolchain != expected:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{project} is pinned to {project_toolchain} but the extractor uses {expected}; .olean files "
            f"only load on the toolchain that wrote them",
            {"project_toolchain": project_toolchain, "expected_toolchain": expected},
        )


def _digesting_modules(lines: Iterator[bytes], facts: EnvironmentFacts, env: LakeEnvironment) -> Iterator[bytes]:
    """Pass `lines` through; once they end (the extractor exited successfully), compute the
    `modules_digest` of the header's module list into `facts`. `build_catalog` reads `facts`
    only when it writes the manifest, after the stream is exhausted, so the digest is there in
    time; a failed run never spends time hashing."""
    first: bytes | None = None
    for raw in lines:
        if first is None:
            first = raw
        yield raw
    if first is not None:
        # read_stream validated this header before asking for the next line.
        facts.modules_digest = modules_digest(json.loads(first)["modules"], env.search_path())


def build_profile(build: ProfileBuild, on_line: Callable[[int], None] | None = None) -> Manifest:
    """Extract `build.profile`'s environment and publish its catalog and manifest under
    `build.root`; returns the manifest. `on_line(n)` is called with each stream line number.

    Raises `LeanIndexError`: `invalid_request` (bad profile id, missing project or imports,
    toolchain mismatch, unreadable `lake-manifest.json`), `backend_error` (lake missing, extractor
    build or run failing, `.olean` not found), `timeout` (`timeout_s` exceeded; the extractor is
    killed), `invalid_stream` (the extractor wrote a bad stream). Error messages from the run end
    with the extractor's stderr tail. On any failure no catalog is published and an earlier one
    stays as it was.
    """
    paths = CatalogPaths.of(build.root, build.profile)
    imports = profile_imports(paths.profile, build.imports)
    source = find_source_checkout(build.source)
    project = require_project(build.project or default_project(paths.profile, build.root, source))
    packages = read_lake_packages(project)
    definition = pinned_profile(paths.profile)
    if packages is None and definition is not None and definition.require is not None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{project} has no lake-manifest.json, so the revision of {definition.require.name} is unknown: "
            f"run `lake update` there (or `leanindex profile init {definition.name}`)",
            {"project": str(project)},
        )
    toolchain = read_toolchain(project)
    _check_toolchains(project, toolchain, source, paths.profile)
    lake = find_lake(build.lake)
    if build.extractor is not None:
        executable = build.extractor.resolve()
        if not executable.is_file():
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"no extractor at {executable}", {"extractor": str(executable)})
    elif source is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "cannot find the LeanIndex sources to build the extractor from: pass --source DIR (the repository "
            "checkout) or --extractor PATH (a built leanindex-extract)",
        )
    else:
        executable = build_extractor(lake, source)
    env = lake_environment(lake, project)
    facts = EnvironmentFacts(
        source="lean",
        packages=packages,
        toolchain=toolchain,
        extractor_digest=extractor_source_digest(source) if source else None,
        platform=host_platform(),
        mathlib_commit=mathlib_commit_of(packages),
        module_files=ModuleFiles(package_trees(project)),
    )
    command = [lake, "env", str(executable), *_extractor_flags(build), *imports]
    with ExtractorRun(command, project, build.timeout_s) as run:
        try:
            return build_catalog(_digesting_modules(run.lines(), facts, env), build.root, paths.profile, facts, on_line)
        except LeanIndexError as error:
            run.stop()
            raise run.with_stderr(error) from None
