"""`leanindex profile init`: create the Lake project a pinned profile is extracted in.

The project is minimal: a `lakefile.lean` requiring the profile's package (for MATHLIB:
`require mathlib from git "https://github.com/leanprover-community/mathlib4" @ "<rev>"`, the
Lake DSL form Mathlib documents for downstream projects), a `lean-toolchain` with the pinned
toolchain, and one root module importing the profile's imports. Then `lake update` resolves the
dependencies and writes `lake-manifest.json` (the exact revisions the manifest records), and for
a package with published build artefacts `lake exe cache get` fetches its prebuilt `.olean`
files instead of compiling them.
"""

from __future__ import annotations

from pathlib import Path

from ..base import Frozen
from ..catalog.manifest import PackageRevision
from ..errors import ErrorCode, LeanIndexError
from .profiles import ProfileDefinition, require_pinned_profile
from .project import read_lake_packages, read_toolchain
from .tools import find_lake, run_lake

ROOT_MODULE = "LeanIndexProfile"


class ProfileProject(Frozen):
    """The result of `profile init`: where the project is, its toolchain, the required package
    revision asked for (`rev`), the Lake commands run, and the packages Lake resolved."""

    profile: str
    directory: str
    toolchain: str
    rev: str | None
    commands: list[list[str]]
    packages: list[PackageRevision] | None


def project_files(definition: ProfileDefinition, rev: str | None) -> dict[str, str]:
    """The files of the profile's project (relative path → text); `rev` overrides the pinned
    revision of the required package."""
    lines = ["import Lake", "open Lake DSL", "", f"package «leanindex-{definition.name}»", ""]
    if definition.require is not None:
        require = definition.require
        lines += [f'require {require.name} from git "{require.git}" @ "{rev or require.rev}"', ""]
    lines += [f"lean_lib {ROOT_MODULE}", ""]
    imports = [module for module in definition.imports if module != "Init"]
    root = "".join(f"import {module}\n" for module in imports) or (
        "-- Every Lean file imports `Init` implicitly; this profile needs nothing more.\n"
    )
    return {
        "lakefile.lean": "\n".join(lines),
        "lean-toolchain": definition.toolchain + "\n",
        f"{ROOT_MODULE}.lean": root,
    }


def init_profile_project(profile: str, directory: Path, rev: str | None = None, lake: str | None = None) -> ProfileProject:
    """Create (or complete) `directory` as the Lake project of pinned `profile`, run
    `lake update` and, when the required package publishes a cache, `lake exe cache get`.

    Re-running on a project this function made is fine (files with the same content are kept).
    Raises `LeanIndexError`: `unknown_environment` for a profile that is not pinned,
    `invalid_request` when `rev` is given for a profile without packages or a file exists with
    other content (nothing is written then), `backend_error` when lake is missing or a Lake
    command fails, or when `lake update` left a toolchain other than the pinned one.
    """
    definition = require_pinned_profile(profile)
    if rev is not None and definition.require is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"profile {definition.name!r} requires no package, so --rev does not apply",
            {"profile": definition.name},
        )
    directory = directory.resolve()
    files = project_files(definition, rev)
    clashes = [name for name, text in files.items() if (directory / name).exists() and (directory / name).read_text(encoding="utf-8") != text]
    if clashes:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{directory} already has {', '.join(clashes)} with other content; remove them or choose another --dir",
            {"directory": str(directory), "files": clashes},
        )
    lake_exe = find_lake(lake)
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    commands = [["update"]]
    if definition.require is not None and definition.require.cache:
        commands.append(["exe", "cache", "get"])
    for args in commands:
        run_lake(lake_exe, args, directory)
    toolchain = read_toolchain(directory)
    if toolchain != definition.toolchain:
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"after `lake update` {directory} is pinned to {toolchain}, not {definition.toolchain}: the required "
            f"revision was made for another toolchain; pick the revision matching {definition.toolchain}",
            {"toolchain": toolchain, "expected_toolchain": definition.toolchain},
        )
    return ProfileProject(
        profile=definition.name,
        directory=str(directory),
        toolchain=definition.toolchain,
        rev=(rev or definition.require.rev) if definition.require else None,
        commands=[["lake", *args] for args in commands],
        packages=read_lake_packages(directory),
    )
