"""A sandbox with a stand-in `lake` and extractor (tests/standin/), for tests without Lean.

`make_sandbox(tmp_path)` lays out: `bin/lake` (launcher of fake_lake.py), a LeanIndex source
checkout (`source/`), a Lake project (`project/`, with tests/fixtures/lake-manifest.json), a
LEAN_PATH folder and a toolchain sysroot holding stand-in `.olean` files for every module of the
embedded sample stream, and `env` (the variables the stand-ins read).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from leanindex.sample import sample_stream_path

TESTS = Path(__file__).resolve().parent
STANDIN = TESTS / "standin"
FIXTURES = TESTS / "fixtures"
TOOLCHAIN = "leanprover/lean4:v4.35.0"


@dataclass
class Sandbox:
    root: Path
    bin: Path
    lake: Path
    source: Path
    project: Path
    lean_path: Path
    sysroot: Path
    log: Path
    args_log: Path
    env: dict[str, str] = field(default_factory=dict)

    def lake_calls(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def sample_modules() -> list[str]:
    with open(sample_stream_path(), "rb") as handle:
        return json.loads(handle.readline())["modules"]


def _olean(base: Path, module: str, content: bytes) -> Path:
    path = base.joinpath(*module.split(".")).with_suffix(".olean")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def write_launcher(path: Path, script: Path, env: dict[str, str] | None = None) -> Path:
    """An executable `path` that runs `script` with this Python; `env` is exported first (for
    callers that scrub the environment, as the checker's sandbox does)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in (env or {}).items())
    path.write_text(f'#!/bin/sh\n{exports}exec "{sys.executable}" "{script}" "$@"\n')
    path.chmod(0o755)
    return path


def make_sandbox(tmp: Path) -> Sandbox:
    bin_dir = tmp / "bin"
    lake = write_launcher(bin_dir / "lake", STANDIN / "fake_lake.py")

    source = tmp / "source"
    (source / "LeanIndex").mkdir(parents=True)
    (source / "lakefile.lean").write_text('lean_exe «leanindex-extract» {\n  root := `Main\n}\n')
    (source / "lean-toolchain").write_text(TOOLCHAIN + "\n")
    (source / "Main.lean").write_text("def main : IO Unit := pure ()\n")
    (source / "LeanIndex.lean").write_text("import LeanIndex.Extract\n")
    (source / "LeanIndex" / "Extract.lean").write_text("-- extraction\n")
    (source / "README.md").write_text("not an extractor source\n")

    project = tmp / "project"
    project.mkdir()
    (project / "lakefile.lean").write_text("import Lake\nopen Lake DSL\npackage demo\n")
    (project / "lean-toolchain").write_text(TOOLCHAIN + "\n")
    shutil.copy(FIXTURES / "lake-manifest.json", project / "lake-manifest.json")

    # Init.Prelude is on both: LEAN_PATH comes first, so its copy there must be the one hashed.
    lean_path = tmp / "packages" / "lib"
    sysroot = tmp / "toolchain"
    for module in sample_modules():
        _olean(sysroot / "lib" / "lean", module, f"sysroot olean of {module}".encode())
    _olean(lean_path, "Init.Prelude", b"LEAN_PATH olean of Init.Prelude")

    sandbox = Sandbox(
        root=tmp / "root",
        bin=bin_dir,
        lake=lake,
        source=source,
        project=project,
        lean_path=lean_path,
        sysroot=sysroot,
        log=tmp / "lake-calls.jsonl",
        args_log=tmp / "extractor-args.json",
    )
    sandbox.root.mkdir()
    sandbox.env = {
        "FAKE_LAKE_LOG": str(sandbox.log),
        "FAKE_LAKE_LEAN_PATH": os.pathsep.join([str(lean_path), str(tmp / "missing-dir")]),
        "FAKE_LAKE_SYSROOT": str(sysroot),
        "STANDIN_STREAM": str(sample_stream_path()),
        "STANDIN_ARGS_LOG": str(sandbox.args_log),
    }
    return sandbox


def expected_modules_digest(sandbox: Sandbox) -> str:
    """The modules digest recomputed independently: first search-path hit per module."""
    lines = []
    for module in sorted(sample_modules()):
        relative = Path(*module.split(".")).with_suffix(".olean")
        for base in (sandbox.lean_path, sandbox.sysroot / "lib" / "lean"):
            if (base / relative).is_file():
                lines.append(f"{module} {hashlib.sha256((base / relative).read_bytes()).hexdigest()}\n")
                break
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def expected_source_digest(source: Path) -> str:
    """The extractor source digest recomputed independently (`sha256sum` lines, sorted)."""
    files = ["LeanIndex.lean", "LeanIndex/Extract.lean", "Main.lean", "lakefile.lean", "lean-toolchain"]
    text = "".join(f"{hashlib.sha256((source / f).read_bytes()).hexdigest()}  {f}\n" for f in sorted(files))
    return hashlib.sha256(text.encode()).hexdigest()
