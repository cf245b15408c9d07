"""Finding Lake, the LeanIndex sources and the built extractor; running Lake commands.

The extractor is the `leanindex-extract` executable of the Lake package at the root of this
repository (`lakefile.lean`, `LeanIndex/`, `Main.lean`). leanindex finds that checkout from
where the Python package was loaded (an editable install or a run from the checkout), unless a
folder is given explicitly; Lake builds the executable to `.lake/build/bin/leanindex-extract`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ..errors import ErrorCode, LeanIndexError

EXTRACTOR_TARGET = "leanindex-extract"
EXTRACTOR_RELATIVE = Path(".lake") / "build" / "bin" / EXTRACTOR_TARGET
#: Files whose content defines the extractor; their digest goes into every manifest.
EXTRACTOR_SOURCE_GLOBS = ("LeanIndex.lean", "LeanIndex/**/*.lean", "Main.lean", "lakefile.lean", "lean-toolchain")
INSTALL_ELAN = (
    "curl -sSfL https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh | "
    "sh -s -- -y --default-toolchain none"
)
#: Lines of a failing command's stderr kept for the error message.
STDERR_TAIL_LINES = 40


def find_lake(lake: str | None = None) -> str:
    """The `lake` executable: `lake` itself when it is a path or a name on PATH, else `lake` on
    PATH. Raises `LeanIndexError(backend_error)` with the command that installs it when absent."""
    found = shutil.which(lake or "lake")
    if found is None:
        where = f"{lake!r} is not an executable" if lake else "`lake` is not on PATH"
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"Lean's build tool is missing: {where}. Install elan (it provides lake and lean for "
            f"the toolchain in lean-toolchain): {INSTALL_ELAN}",
            {"lake": lake},
        )
    return found


def is_source_checkout(folder: Path) -> bool:
    """Whether `folder` holds the LeanIndex Lake package (its lakefile declares the extractor)."""
    lakefile = folder / "lakefile.lean"
    try:
        return (folder / "LeanIndex").is_dir() and EXTRACTOR_TARGET in lakefile.read_text(encoding="utf-8")
    except OSError:
        return False


def find_source_checkout(source: str | Path | None = None) -> Path | None:
    """The LeanIndex source checkout: `source` when given (it must be one), else the repository
    the `leanindex` package was loaded from (`py/leanindex/` sits two levels below its root),
    else None. Raises `LeanIndexError(invalid_request)` when `source` is not a checkout."""
    if source is not None:
        folder = Path(source).resolve()
        if not is_source_checkout(folder):
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"{folder} is not a LeanIndex source checkout (needs LeanIndex/ and a lakefile.lean "
                f"declaring {EXTRACTOR_TARGET})",
                {"source": str(folder)},
            )
        return folder
    candidate = Path(__file__).resolve().parents[3]
    return candidate if is_source_checkout(candidate) else None


def extractor_sources(source: Path) -> list[Path]:
    """The extractor's source files under `source`, sorted by relative POSIX path."""
    files = {path for pattern in EXTRACTOR_SOURCE_GLOBS for path in source.glob(pattern) if path.is_file()}
    return sorted(files, key=lambda path: path.relative_to(source).as_posix())


def extractor_source_digest(source: Path) -> str:
    """sha256 (hex) identifying the extractor sources: the sha256 of the text made of one line
    `<sha256 of file>  <relative POSIX path>\\n` per file of `EXTRACTOR_SOURCE_GLOBS`, sorted by
    path (the `sha256sum` format, so it can be recomputed by hand)."""
    lines = []
    for path in extractor_sources(source):
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(source).as_posix()}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    """The last `lines` lines of `text`, without trailing blank space."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_lake(lake: str, args: list[str], cwd: Path) -> None:
    """Run `lake ARGS...` in `cwd`, copying its output (stdout and stderr, merged) to our stderr
    line by line as it comes, so stdout stays clean for `--json`. Raises
    `LeanIndexError(backend_error)` naming the command, with the tail of its output, when it
    fails or cannot start."""
    command = [lake, *args]
    recent: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    try:
        process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as error:
        raise LeanIndexError(ErrorCode.BACKEND_ERROR, f"cannot run {lake}: {error}", {"command": command}) from None
    with process:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode("utf-8", errors="replace")
            sys.stderr.write(line)
            recent.append(line.rstrip("\n"))
        status = process.wait()
    if status != 0:
        output_tail = "\n".join(recent).rstrip()
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"`lake {' '.join(args)}` failed in {cwd} (exit status {status})"
            + (f"; its output ends with:\n{output_tail}" if output_tail else ""),
            {"command": command, "cwd": str(cwd), "exit_status": status, "stderr_tail": output_tail},
        )


def build_extractor(lake: str, source: Path) -> Path:
    """`lake build leanindex-extract` in the source checkout (Lake does nothing when the build is
    current); returns the executable. Raises `LeanIndexError(backend_error)` when the build fails
    or leaves no executable."""
    run_lake(lake, ["build", EXTRACTOR_TARGET], source)
    executable = source / EXTRACTOR_RELATIVE
    if not executable.is_file():
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"`lake build {EXTRACTOR_TARGET}` succeeded but {executable} does not exist",
            {"path": str(executable)},
        )
    return executable


@dataclass(frozen=True)
class LakeEnvironment:
    """What `lake env` sets in a project: `lean_path` (the `LEAN_PATH` entries, in order) and
    `sysroot` (`LEAN_SYSROOT`, the toolchain's prefix; None when unset)."""

    lean_path: list[Path]
    sysroot: Path | None

    def search_path(self) -> list[Path]:
        """Where Lean looks for `.olean` files: the `LEAN_PATH` entries, then
        `<sysroot>/lib/lean` (Lean's `initSearchPath`, lean4 `src/Lean/Util/Path.lean`, appends
        it; core's `Init`, `Std` and `Lean` live there)."""
        return [*self.lean_path, *([self.sysroot / "lib" / "lean"] if self.sysroot else [])]


# Run under `lake env`, this prints the variables as Lake sets them, as one JSON line. Asking a
# Python interpreter (this one) instead of `printenv` keeps an unset variable distinguishable.
_PRINT_ENV = "import json, os; print(json.dumps({k: os.environ.get(k) for k in ('LEAN_PATH', 'LEAN_SYSROOT')}))"


def lake_environment(lake: str, project: Path, timeout_s: float = 600) -> LakeEnvironment:
    """`LEAN_PATH` and `LEAN_SYSROOT` as `lake env` sets them in `project` (relative entries are
    resolved against `project`). Raises `LeanIndexError(backend_error)` when `lake env` fails."""
    command = [lake, "env", sys.executable, "-c", _PRINT_ENV]
    try:
        result = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LeanIndexError(ErrorCode.TIMEOUT, f"`lake env` in {project} did not finish within {timeout_s} s") from None
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        stderr_tail = tail(result.stderr)
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"`lake env` failed in {project} (exit status {result.returncode})"
            + (f"; its stderr ends with:\n{stderr_tail}" if stderr_tail else ""),
            {"project": str(project), "exit_status": result.returncode, "stderr_tail": stderr_tail},
        )
    try:
        values = json.loads(lines[-1])
    except ValueError:
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR, f"unexpected output from `lake env` in {project}: {lines[-1]!r}"
        ) from None
    entries = [entry for entry in (values.get("LEAN_PATH") or "").split(os.pathsep) if entry]
    sysroot = values.get("LEAN_SYSROOT")
    return LakeEnvironment(
        lean_path=[(project / entry).resolve() for entry in entries],
        sysroot=Path(sysroot) if sysroot else None,
    )
