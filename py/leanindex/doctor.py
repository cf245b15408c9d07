"""`leanindex doctor`: what is installed, what is missing, and the command that fixes each gap.

Checks, in order: the Python version and every dependency of the `leanindex` distribution
(installed version against its requirement); elan, whether the pinned toolchain is installed;
`lake` and `lean` and the Lean version they report against the pinned toolchain; the LeanIndex
source checkout and its built extractor; each profile (pinned ones and any with a manifest
under the root) and whether its catalog verifies against its manifest.

Nothing here installs or downloads anything: elan downloads a missing toolchain whenever `lake`
or `lean` is run in a project pinned to it, so their versions are only asked for once the
pinned toolchain is known to be installed (or when there is no elan to download it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Literal

from packaging.requirements import Requirement

from .base import Frozen
from .catalog.layout import CatalogPaths, discover_profiles
from .catalog.verify import verify_catalog
from .errors import LeanIndexError
from .lake.profiles import load_profiles
from .lake.tools import EXTRACTOR_RELATIVE, EXTRACTOR_TARGET, INSTALL_ELAN, find_source_checkout

Status = Literal["ok", "missing", "mismatch", "failed"]
_VERSION_TIMEOUT_S = 60


class Check(Frozen):
    """One finding: `name` (what was checked), `status`, `detail` (versions, paths, errors),
    `fix` (a shell command, or null when nothing needs fixing)."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


class DoctorReport(Frozen):
    """All checks; `ok` is true when every check is `ok`."""

    ok: bool
    pinned_toolchain: str
    checks: list[Check]


def pinned_toolchain() -> str:
    """The toolchain every pinned profile uses (the extractor's `lean-toolchain`)."""
    return next(iter(load_profiles().values())).toolchain


def lean_version_of(toolchain: str) -> str:
    """`leanprover/lean4:v4.35.0` → `4.35.0` (the version Lean prints)."""
    return toolchain.rsplit(":", 1)[-1].removeprefix("v")


def python_checks() -> list[Check]:
    """The interpreter version and each runtime requirement of the distribution."""
    checks = []
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info >= (3, 11)
    checks.append(Check(name="python", status="ok" if ok else "mismatch", detail=f"{version} at {sys.executable}",
                        fix=None if ok else "install Python 3.11 or newer"))
    for text in metadata.requires("leanindex") or []:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # an optional extra
        name = f"package {requirement.name}"
        fix = f"pip install '{requirement}'"
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            checks.append(Check(name=name, status="missing", detail=f"not installed (needs {requirement.specifier or 'any version'})", fix=fix))
            continue
        if requirement.specifier.contains(installed, prereleases=True):
            checks.append(Check(name=name, status="ok", detail=installed))
        else:
            checks.append(Check(name=name, status="mismatch", detail=f"{installed}, needs {requirement.specifier}", fix=fix))
    return checks


def _run(command: list[str], cwd: Path) -> tuple[int, str]:
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=_VERSION_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return -1, str(error)
    return result.returncode, (result.stdout + result.stderr).strip()


def toolchain_checks(cwd: Path) -> list[Check]:
    """elan and the pinned toolchain, then `lake --version` and `lean --version` run in `cwd`."""
    pinned = pinned_toolchain()
    wanted = lean_version_of(pinned)
    checks = []
    elan = shutil.which("elan")
    toolchain_ready = True
    if elan is None:
        checks.append(Check(name="elan", status="missing", detail="not on PATH", fix=INSTALL_ELAN))
    else:
        status, output = _run([elan, "--version"], cwd)
        checks.append(Check(name="elan", status="ok" if status == 0 else "failed", detail=output.splitlines()[0] if output else "no output",
                            fix=None if status == 0 else "elan self update"))
        status, output = _run([elan, "toolchain", "list"], cwd)
        toolchain_ready = status == 0 and any(line.split()[0] == pinned for line in output.splitlines() if line.strip())
        checks.append(Check(
            name="toolchain",
            status="ok" if toolchain_ready else "missing",
            detail=f"{pinned} {'installed' if toolchain_ready else 'not installed'}",
            fix=None if toolchain_ready else f"elan toolchain install {pinned}",
        ))
    for tool in ("lake", "lean"):
        path = shutil.which(tool)
        if path is None:
            checks.append(Check(name=tool, status="missing", detail="not on PATH", fix=INSTALL_ELAN))
            continue
        if not toolchain_ready:
            checks.append(Check(name=tool, status="missing", detail=f"{path}; its version is not asked for until {pinned} is installed",
                                fix=f"elan toolchain install {pinned}"))
            continue
        status, output = _run([path, "--version"], cwd)
        found = re.search(r"[Vv]ersion (\d[^,\s)]*)", output.split("Lean", 1)[-1] if tool == "lake" else output)
        if status != 0 or found is None:
            checks.append(Check(name=tool, status="failed", detail=output or f"exit status {status}", fix=f"elan toolchain install {pinned}"))
        elif found.group(1) != wanted:
            checks.append(Check(name=tool, status="mismatch", detail=f"Lean {found.group(1)}, pinned {wanted} ({path})",
                                fix=f"elan toolchain install {pinned} (run leanindex from the checkout, whose lean-toolchain selects it)"))
        else:
            checks.append(Check(name=tool, status="ok", detail=f"Lean {found.group(1)} ({path})"))
    return checks


def extractor_checks(source: Path | None) -> list[Check]:
    """The LeanIndex source checkout and the built `leanindex-extract` in it."""
    if source is None:
        return [Check(name="extractor", status="missing", detail="no LeanIndex source checkout found next to this installation",
                      fix="git clone the leanindex repository and `pip install -e .` from it (or pass --source/--extractor to catalog build)")]
    binary = source / EXTRACTOR_RELATIVE
    if binary.is_file():
        return [Check(name="extractor", status="ok", detail=str(binary))]
    return [Check(name="extractor", status="missing", detail=f"{binary} not built", fix=f"cd {source} && lake build {EXTRACTOR_TARGET}")]


def _build_command(profile: str) -> str:
    definition = load_profiles().get(profile)
    if definition is None:
        return f"leanindex catalog build --profile {profile} --project DIR --imports MODULE"
    if definition.require is not None:
        return f"leanindex profile init {profile} && leanindex catalog build --profile {profile}"
    return f"leanindex catalog build --profile {profile}"


def profile_checks(root: Path) -> list[Check]:
    """One check per profile (pinned, and any with a manifest under `root`): the catalog
    verifies against its manifest, or what is wrong and how to rebuild."""
    checks = []
    for profile in sorted(set(load_profiles()) | set(discover_profiles(root))):
        paths = CatalogPaths.of(root, profile)
        name = f"profile {profile}"
        root_flag = "" if Path(root).resolve() == Path.cwd().resolve() else f" --root {paths.root}"
        if not paths.manifest.is_file():
            checks.append(Check(name=name, status="missing", detail=f"no manifest at {paths.manifest}", fix=_build_command(profile) + root_flag))
            continue
        try:
            manifest = verify_catalog(paths)
        except LeanIndexError as error:
            checks.append(Check(name=name, status="failed", detail=f"{error.code.value}: {error.message}", fix=_build_command(profile) + root_flag))
            continue
        checks.append(Check(name=name, status="ok",
                            detail=f"{manifest.catalog.declaration_count:,} declarations, Lean {manifest.lean.version}, verified"))
    return checks


def run_doctor(root: str | Path, source: str | Path | None = None) -> DoctorReport:
    """Run every check (see the module docstring) for the catalogs under `root`; `source` is the
    LeanIndex checkout (default: the one leanindex runs from). Raises `LeanIndexError
    (invalid_request)` only when an explicit `source` is not a checkout."""
    checkout = find_source_checkout(source)
    checks = [
        *python_checks(),
        *toolchain_checks(checkout or Path(root)),
        *extractor_checks(checkout),
        *profile_checks(Path(root)),
    ]
    return DoctorReport(ok=all(c.status == "ok" for c in checks), pinned_toolchain=pinned_toolchain(), checks=checks)
