"""Helpers for the checker tests and benchmark: a Lake project, a built-REPL layout and a `lake`
that run the stand-in REPL (tests/standin/), driven through lean-interact's real classes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from leanindex.checker import CheckerConfig

STANDIN = Path(__file__).resolve().parent / "standin"
#: The toolchain the recorded transcripts were made with (their README).
TRANSCRIPT_TOOLCHAIN = "leanprover/lean4:v4.33.0-rc2"


def shared_dir() -> Path | None:
    """../shared next to the repository, or $LEANINDEX_SHARED."""
    candidate = Path(__file__).resolve().parents[1].parent / "shared"
    if candidate.is_dir():
        return candidate
    env = os.environ.get("LEANINDEX_SHARED")
    return Path(env) if env and Path(env).is_dir() else None


def transcripts_dir() -> Path | None:
    shared = shared_dir()
    folder = shared / "fixtures" / "repl-transcripts" if shared else None
    return folder if folder and folder.is_dir() else None


def make_layout(tmp: Path, *, instant: bool = False, transcripts: Path | None = None) -> tuple[Path, Path, Path]:
    """(project_dir, repl_dir, control_file) for a stand-in REPL under `tmp`."""
    project = tmp / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "lean-toolchain").write_text(TRANSCRIPT_TOOLCHAIN + "\n")
    repl = tmp / "repl"
    binary = repl / ".lake" / "build" / "bin" / "repl"
    binary.parent.mkdir(parents=True, exist_ok=True)
    (repl / "lean-toolchain").write_text(TRANSCRIPT_TOOLCHAIN + "\n")
    control = tmp / "control.json"
    control.write_text("{}")
    args = ["--instant"] if instant else ["--transcripts", str(transcripts), "--control", str(control)]
    binary.write_text(
        "#!/bin/sh\nexec " + " ".join(f'"{a}"' for a in [sys.executable, str(STANDIN / "repl.py"), *args]) + ' "$@"\n'
    )
    binary.chmod(0o755)
    return project, repl, control


def set_control(control: Path, **settings: object) -> None:
    control.write_text(json.dumps(settings))


def standin_config(
    tmp: Path, *, instant: bool = False, transcripts: Path | None = None, lake: Path = STANDIN / "lake", **settings: object
) -> tuple[CheckerConfig, Path]:
    """A checker config for profile TEST (imports `Lean`, whose header is the recorded
    `import_lean` transcript) on the stand-in, launched by `lake`, and its control file."""
    project, repl, control = make_layout(tmp, instant=instant, transcripts=transcripts)
    config = CheckerConfig.for_profile(
        tmp / "root",
        "TEST",
        project_dir=project,
        repl_dir=repl,
        lake_path=lake,
        imports=["Lean"],
        **settings,
    )
    return config, control
