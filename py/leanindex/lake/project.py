"""Facts read from a Lake project's files: `lean-toolchain` and `lake-manifest.json`.

`lake-manifest.json` is written by Lake (`lake update`, `lake resolve-deps`); the formats read
here are the ones Lake's `Lake/Load/Manifest.lean` accepts today: `version` 7 (an integer) and
the semantic versions `"1.0.0"`, `"1.1.0"` (adds `scope`) and `"1.2.0"` (adds
`fixedToolchain`). Every one lists `packages[]` with `type` (`git` or `path`), `name`,
`inherited`, and for git packages `url`, `rev` (the resolved commit), `inputRev` (the tag or
branch asked for) and `scope`. Older formats (nested `{"git": {...}}` entries) are refused:
Lake itself rewrites them on `lake update`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..catalog.links import PackageTree, github_blob_base
from ..catalog.manifest import PackageRevision
from ..errors import ErrorCode, LeanIndexError

LAKE_MANIFEST = "lake-manifest.json"
TOOLCHAIN_FILE = "lean-toolchain"
LAKEFILES = ("lakefile.lean", "lakefile.toml")
DEFAULT_PACKAGES_DIR = ".lake/packages"
"""Lake's `defaultPackagesDir`, where git packages are checked out when the manifest names none."""
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def require_project(project: Path) -> Path:
    """`project` resolved, after checking it is a Lake project (has a lakefile).

    Raises `LeanIndexError(invalid_request)` otherwise.
    """
    project = project.resolve()
    if not any((project / name).is_file() for name in LAKEFILES):
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{project} is not a Lake project (no lakefile.lean or lakefile.toml)",
            {"project": str(project)},
        )
    return project


def read_toolchain(project: Path) -> str | None:
    """The `lean-toolchain` line of `project` (e.g. `leanprover/lean4:v4.35.0`), or None when
    the project has no such file (elan then uses its default toolchain)."""
    path = project / TOOLCHAIN_FILE
    if not path.is_file():
        return None
    line = path.read_text(encoding="utf-8").strip()
    return line or None


def _strip_guillemets(name: str) -> str:
    # Lake writes package names that are not identifiers escaped, e.g. "«doc-gen4»".
    return name[1:-1] if name.startswith("«") and name.endswith("»") else name


def _supported_version(version: Any) -> bool:
    if isinstance(version, int) and not isinstance(version, bool):
        return version == 7
    if isinstance(version, str) and (match := _SEMVER.match(version)):
        return int(match.group(1)) == 1
    return False


def _manifest_entries(project: Path) -> tuple[Path, dict[str, Any], list[dict[str, Any]]] | None:
    """`(path, manifest, packages[])` of `project`'s `lake-manifest.json`, each entry checked as
    `read_lake_packages` says; None without the file. Raises `LeanIndexError(invalid_request)`."""
    path = project / LAKE_MANIFEST
    if not path.is_file():
        return None

    def refuse(reason: str) -> LeanIndexError:
        return LeanIndexError(ErrorCode.INVALID_REQUEST, f"{path}: {reason}", {"path": str(path)})

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise refuse(f"unreadable: {error}") from None
    if not isinstance(data, dict):
        raise refuse("not a JSON object")
    if not _supported_version(data.get("version")):
        raise refuse(
            f"manifest version {data.get('version')!r} is not supported (7 or 1.x.y); "
            "run `lake update` with the pinned toolchain to rewrite it"
        )
    entries = data.get("packages", [])
    if not isinstance(entries, list):
        raise refuse("'packages' is not a list")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise refuse(f"packages[{index}] has no name")
        kind = entry.get("type")
        if kind == "git":
            if not isinstance(entry.get("rev"), str) or not isinstance(entry.get("url"), str):
                raise refuse(f"git package {entry['name']!r} lacks 'rev' or 'url'")
            if not isinstance(entry.get("subDir"), str | None):
                raise refuse(f"git package {entry['name']!r} has a 'subDir' that is not a string")
        elif kind == "path":
            if not isinstance(entry.get("dir"), str):
                raise refuse(f"path package {entry['name']!r} has no 'dir'")
        else:
            raise refuse(f"package {entry['name']!r} has unknown type {kind!r}")
    if not isinstance(data.get("packagesDir", DEFAULT_PACKAGES_DIR), str):
        raise refuse("'packagesDir' is not a string")
    return path, data, entries


def read_lake_packages(project: Path) -> list[PackageRevision] | None:
    """Every package of `project`'s `lake-manifest.json` (direct and inherited), in file order.

    Git packages carry their resolved commit (`rev`) and `url`; path packages have neither.
    Returns None when the project has no `lake-manifest.json` (Lake writes one once it has
    resolved dependencies). Raises `LeanIndexError(invalid_request)` for a file that is not a
    manifest of a supported version, or whose entries lack what their type needs (`rev` and
    `url` of a git package, `dir` of a path package).
    """
    read = _manifest_entries(project)
    if read is None:
        return None
    return [
        PackageRevision(name=_strip_guillemets(entry["name"]), rev=entry["rev"], url=entry["url"])
        if entry["type"] == "git"
        else PackageRevision(name=_strip_guillemets(entry["name"]), rev=None, url=None)
        for entry in read[2]
    ]


def package_trees(project: Path) -> list[PackageTree]:
    """Where each package of `project`'s `lake-manifest.json` has its sources, as Lake's
    `PackageEntry.materialize` (lean4 `src/lake/Lake/Load/Materialize.lean`) places them: a
    path package at `project/dir`; a git package checked out at `project/packagesDir/NAME`
    (the name unescaped, `toString (escape := false)`; `packagesDir` defaults to
    `.lake/packages`), below its `subDir` when it names one. A tree that is not there simply
    holds no module, so a layout Lake changes gives null links, never wrong ones. Each tree's `blob_base` is its GitHub link at the resolved `rev` (with the
    `subDir`), None for path packages and other hosts (`catalog.links.github_blob_base`).
    Empty without a manifest; raises what `read_lake_packages` raises.
    """
    read = _manifest_entries(project)
    if read is None:
        return []
    _, data, entries = read
    packages_dir = project / data.get("packagesDir", DEFAULT_PACKAGES_DIR)
    trees = []
    for entry in entries:
        name = _strip_guillemets(entry["name"])
        if entry["type"] == "path":
            trees.append(PackageTree(name=name, directory=project / entry["dir"], blob_base=None))
            continue
        sub_dir = (entry.get("subDir") or "").strip("/")
        base = github_blob_base(entry["url"], entry["rev"])
        trees.append(
            PackageTree(
                name=name,
                directory=packages_dir / name / sub_dir if sub_dir else packages_dir / name,
                blob_base=base + quote(sub_dir) + "/" if base and sub_dir else base,
            )
        )
    return trees
