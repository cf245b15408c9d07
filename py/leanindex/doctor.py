"""`leanindex doctor`: what works for each kind of user, what is missing, and the fix for each gap.

Three uses, each with its own checks (`Check.use`):

- `search` (searching and inspecting catalogs; needs no Lean): the Python version, every
  dependency of the distribution, and each profile's catalog;
- `indexing` (building catalogs from a Lean environment): elan, the pinned toolchain, `lake`,
  `lean`, the built extractor;
- `checking` (Lean's verdict on proofs): `lake`/`lean` as for indexing, and a built REPL
  checkout (`--repl DIR`).

A use is `ready` (every check passes), `not set up` (nothing of it is there: the user does not
use it) or `broken` (part of it is there and something fails); the rule is `use_state`. The
report is ok, and the command exits 0, when no use is broken and at least one is ready: a
mathematician with the embedded core catalog and no Lean is fine.

Checks, in order: the Python version and every dependency of the `leanindex` distribution
(installed version against its requirement); elan, whether the pinned toolchain is installed;
`lake` and `lean` and the Lean version they report against the pinned toolchain; the LeanIndex
source checkout and its built extractor; each profile the user has (a manifest or catalog under
the root) and whether its catalog verifies against its manifest, or, with none, the ways to get
one. Profiles the user never built are not reported missing (`leanindex profile list` lists the
pinned ones). Every fix is a command that runs as printed: a pack's pull URL is given only when
the installed distribution names its GitHub repository (`published_repository`).

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
from .catalog.pack import release_url
from .catalog.verify import verify_catalog
from .embedded import EMBEDDED_PROFILE
from .errors import LeanIndexError
from .home import default_root
from .lake.profiles import load_profiles
from .lake.tools import EXTRACTOR_RELATIVE, EXTRACTOR_TARGET, INSTALL_ELAN, find_source_checkout

Status = Literal["ok", "missing", "mismatch", "failed"]
Use = Literal["search", "indexing", "checking"]
UseStateName = Literal["ready", "not set up", "broken"]
USES: tuple[Use, ...] = ("search", "indexing", "checking")
REPL_RELATIVE = Path(".lake/build/bin/repl")
_VERSION_TIMEOUT_S = 60


class Check(Frozen):
    """One finding: `name` (what was checked), `use` (the kind of use it serves; a toolchain
    check serves indexing and checking, listed under indexing), `status`, `detail` (versions,
    paths, errors), `fix` (shell commands, or null when nothing needs fixing)."""

    name: str
    use: Use
    status: Status
    detail: str
    fix: str | None = None


class UseState(Frozen):
    """How one use stands: `state` (see `use_state`) and the names of its failing checks."""

    use: Use
    state: UseStateName
    failing: list[str]


class DoctorReport(Frozen):
    """All checks and the state of each use; `ok`: no use is broken and at least one is ready."""

    ok: bool
    pinned_toolchain: str
    uses: list[UseState]
    checks: list[Check]


def use_state(use: Use, checks: list[Check]) -> UseState:
    """The state of `use` from its checks (checking also counts the `lake` and `lean` checks).

    `ready`: every check of the use passes, and for search at least one catalog verifies.
    `not set up`: the use's own piece is not there (search: no catalog at all, a catalog that
    fails is broken; indexing: no built extractor, whatever Lean tools other projects put on
    PATH; checking: no REPL given).
    `broken`: otherwise.
    """
    own = [c for c in checks if c.use == use]
    if use == "checking":
        own += [c for c in checks if c.name in ("lake", "lean")]
    failing = [c.name for c in own if c.status != "ok"]
    profiles = [c for c in own if c.name.startswith("profile")]
    if use == "search":
        installed = all(c.status == "ok" for c in own if not c.name.startswith("profile"))
        if installed and any(c.status == "ok" for c in profiles) and all(c.status in ("ok", "missing") for c in profiles):
            return UseState(use=use, state="ready", failing=[c.name for c in profiles if c.status != "ok"])
        absent = installed and all(c.status == "missing" for c in profiles)
    elif use == "checking":
        absent = all(c.status == "missing" for c in own if c.use == "checking")
    else:
        absent = any(c.name == "extractor" and c.status == "missing" for c in own)
    if not failing:
        return UseState(use=use, state="ready", failing=[])
    return UseState(use=use, state="not set up" if absent else "broken", failing=failing)


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
    checks.append(Check(use="search", name="python", status="ok" if ok else "mismatch", detail=f"{version} at {sys.executable}",
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
            checks.append(Check(use="search", name=name, status="missing", detail=f"not installed (needs {requirement.specifier or 'any version'})", fix=fix))
            continue
        if requirement.specifier.contains(installed, prereleases=True):
            checks.append(Check(use="search", name=name, status="ok", detail=installed))
        else:
            checks.append(Check(use="search", name=name, status="mismatch", detail=f"{installed}, needs {requirement.specifier}", fix=fix))
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
        checks.append(Check(use="indexing", name="elan", status="missing", detail="not on PATH", fix=INSTALL_ELAN))
    else:
        status, output = _run([elan, "--version"], cwd)
        checks.append(Check(use="indexing", name="elan", status="ok" if status == 0 else "failed", detail=output.splitlines()[0] if output else "no output",
                            fix=None if status == 0 else "elan self update"))
        status, output = _run([elan, "toolchain", "list"], cwd)
        toolchain_ready = status == 0 and any(line.split()[0] == pinned for line in output.splitlines() if line.strip())
        checks.append(Check(
            use="indexing",
            name="toolchain",
            status="ok" if toolchain_ready else "missing",
            detail=f"{pinned} {'installed' if toolchain_ready else 'not installed'}",
            fix=None if toolchain_ready else f"elan toolchain install {pinned}",
        ))
    for tool in ("lake", "lean"):
        path = shutil.which(tool)
        if path is None:
            checks.append(Check(use="indexing", name=tool, status="missing", detail="not on PATH", fix=INSTALL_ELAN))
            continue
        if not toolchain_ready:
            checks.append(Check(use="indexing", name=tool, status="missing", detail=f"{path}; its version is not asked for until {pinned} is installed",
                                fix=f"elan toolchain install {pinned}"))
            continue
        status, output = _run([path, "--version"], cwd)
        found = re.search(r"[Vv]ersion (\d[^,\s)]*)", output.split("Lean", 1)[-1] if tool == "lake" else output)
        if status != 0 or found is None:
            checks.append(Check(use="indexing", name=tool, status="failed", detail=output or f"exit status {status}", fix=f"elan toolchain install {pinned}"))
        elif found.group(1) != wanted:
            checks.append(Check(use="indexing", name=tool, status="mismatch", detail=f"Lean {found.group(1)}, pinned {wanted} ({path})",
                                fix=f"elan toolchain install {pinned} (run leanindex from the checkout, whose lean-toolchain selects it)"))
        else:
            checks.append(Check(use="indexing", name=tool, status="ok", detail=f"Lean {found.group(1)} ({path})"))
    return checks


def extractor_checks(source: Path | None) -> list[Check]:
    """The LeanIndex source checkout and the built `leanindex-extract` in it."""
    if source is None:
        return [Check(use="indexing", name="extractor", status="missing", detail="no LeanIndex source checkout found next to this installation",
                      fix="git clone the leanindex repository and `pip install -e .` from it (or pass --source/--extractor to catalog build)")]
    binary = source / EXTRACTOR_RELATIVE
    if binary.is_file():
        return [Check(use="indexing", name="extractor", status="ok", detail=str(binary))]
    return [Check(use="indexing", name="extractor", status="missing", detail=f"{binary} not built", fix=f"cd {source} && lake build {EXTRACTOR_TARGET}")]


def _build_command(profile: str) -> str:
    definition = load_profiles().get(profile)
    if definition is None:
        return f"leanindex catalog build --profile {profile} --project DIR --imports MODULE"
    if definition.require is not None:
        return f"leanindex profile init {profile} && leanindex catalog build --profile {profile}"
    return f"leanindex catalog build --profile {profile}"


def published_repository() -> str | None:
    """`owner/name` of the GitHub repository the installed distribution names in its metadata
    (a `Project-URL` or `Home-page` on github.com), whose releases publish the catalog packs;
    None when it names none (e.g. a checkout without project URLs)."""
    try:
        meta = metadata.metadata("leanindex")
    except metadata.PackageNotFoundError:
        return None
    for url in [*(entry.split(",", 1)[-1] for entry in meta.get_all("Project-URL") or []), *(meta.get_all("Home-page") or [])]:
        found = re.match(r"\s*https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$", url)
        if found:
            return found.group(1)
    return None


def catalog_fixes(profile: str, root_flag: str) -> str:
    """The ways to get `profile`'s catalog, cheapest first: the embedded import (no download,
    for the embedded profile), pulling a published pack (no Lean; only when the repository that
    publishes them is known), building it (Lean)."""
    ways = []
    if profile == EMBEDDED_PROFILE:
        ways.append(f"leanindex demo{root_flag}  (imports the Lean core v4.33.0 catalog shipped with leanindex)")
    repository = published_repository()
    if repository is not None:
        ways.append(f"leanindex catalog pull {release_url(repository, profile)}{root_flag}  (a published pack; no Lean)")
    if profile != EMBEDDED_PROFILE:
        ways.append(_build_command(profile) + root_flag + "  (with Lean)")
    return " | ".join(ways)


def profile_checks(root: Path) -> list[Check]:
    """One check per profile under `root` (a manifest or a catalog there): the catalog verifies
    against its manifest, or what is wrong and the ways to get it again. With no profile at all,
    one `profiles` check, missing, whose fix gets the shipped core catalog."""
    checks = []
    root_flag = "" if root.resolve() == default_root().resolve() else f" --root {root.resolve()}"
    found = sorted(discover_profiles(root)) if root.is_dir() else []
    if not found:
        return [Check(use="search", name="profiles", status="missing", detail="no catalog under the root yet",
                      fix=catalog_fixes(EMBEDDED_PROFILE, root_flag) + "; other profiles: leanindex profile list")]
    for profile in found:
        paths = CatalogPaths.of(root, profile)
        name = f"profile {profile}"
        if not paths.manifest.is_file() and not paths.served_manifest.is_file():
            checks.append(Check(use="search", name=name, status="missing", detail=f"no manifest at {paths.manifest}", fix=catalog_fixes(profile, root_flag)))
            continue
        try:
            manifest = verify_catalog(paths)
        except LeanIndexError as error:
            checks.append(Check(use="search", name=name, status="failed", detail=f"{error.code.value}: {error.message}", fix=catalog_fixes(profile, root_flag)))
            continue
        checks.append(Check(use="search", name=name, status="ok",
                            detail=f"{manifest.catalog.declaration_count:,} declarations, Lean {manifest.lean.version}, verified"))
    return checks


def repl_checks(repl: Path | None) -> list[Check]:
    """The REPL checkout the checker runs (`--check-repl` of `leanindex serve`): its binary is
    built at `.lake/build/bin/repl`."""
    fix = "build a REPL checkout for the pinned toolchain (see docs/checker.md) and pass it with --repl DIR"
    if repl is None:
        return [Check(use="checking", name="repl", status="missing", detail="no REPL checkout given (--repl DIR)", fix=fix)]
    binary = repl / REPL_RELATIVE
    if binary.is_file():
        return [Check(use="checking", name="repl", status="ok", detail=str(binary))]
    return [Check(use="checking", name="repl", status="failed", detail=f"{binary} not built", fix=f"cd {repl} && lake build")]


def run_doctor(root: str | Path, source: str | Path | None = None, repl: str | Path | None = None) -> DoctorReport:
    """Run every check (see the module docstring) for the catalogs under `root`; `source` is the
    LeanIndex checkout (default: the one leanindex runs from), `repl` a built REPL checkout.
    Raises `LeanIndexError(invalid_request)` only when an explicit `source` is not a checkout."""
    checkout = find_source_checkout(source)
    checks = [
        *python_checks(),
        *toolchain_checks(checkout or Path(root)),
        *extractor_checks(checkout),
        *repl_checks(Path(repl) if repl is not None else None),
        *profile_checks(Path(root)),
    ]
    uses = [use_state(use, checks) for use in USES]
    ok = all(u.state != "broken" for u in uses) and any(u.state == "ready" for u in uses)
    return DoctorReport(ok=ok, pinned_toolchain=pinned_toolchain(), uses=uses, checks=checks)
