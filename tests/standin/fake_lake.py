"""A stand-in for Lean's `lake`, for tests on machines without Lean.

Handles what leanindex asks of Lake: `lake env CMD...` (runs CMD as a child, the way Lake does,
with LEAN_PATH and LEAN_SYSROOT taken from FAKE_LAKE_LEAN_PATH and FAKE_LAKE_SYSROOT),
`lake build leanindex-extract` (writes `.lake/build/bin/leanindex-extract`, a launcher of
standin_extractor.py), `lake --version`, `lake update` (copies FAKE_LAKE_MANIFEST to
lake-manifest.json and writes FAKE_LAKE_UPDATE_TOOLCHAIN to lean-toolchain when set) and
`lake exe cache get`; a leading `-d DIR` (Lake's `--dir`) is accepted before any of them. Every
call is appended to FAKE_LAKE_LOG as one JSON line {"cwd", "args", "toolchain", "env"}: its
working directory, arguments, the toolchain elan's proxy would have chosen for it (see
`elan_toolchain`) and its whole environment. FAKE_LAKE_FAIL=<subcommand> makes that subcommand
fail with a message on stderr.
"""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def elan_toolchain() -> str:
    """The toolchain elan's `lake` proxy would run for this process: `ELAN_TOOLCHAIN` when set
    and not empty, else the first line of the first `lean-toolchain` found walking up from the
    working directory, else elan's default (elan `Cfg::find_override`, src/elan/config.rs;
    `elan override` entries, which this stand-in has none of, would come before the file)."""
    pinned = os.environ.get("ELAN_TOOLCHAIN", "").strip()
    if pinned:
        return pinned
    for folder in [Path.cwd(), *Path.cwd().parents]:
        candidate = folder / "lean-toolchain"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8").splitlines()[0].strip()
    return "(elan default)"


def main(args: list[str]) -> int:
    log = os.environ.get("FAKE_LAKE_LOG")
    if log:
        entry = {"cwd": os.getcwd(), "args": args, "toolchain": elan_toolchain(), "env": dict(os.environ)}
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
    if args[:1] == ["-d"]:
        args = args[2:]
    command = args[0] if args else ""
    if os.environ.get("FAKE_LAKE_FAIL") == command:
        print(f"error: fake lake was told to fail `{command}`", file=sys.stderr)
        return 1
    if command == "--version":
        print("Lake version 5.0.0-src+fake (Lean version 4.35.0)")
        return 0
    if command == "env":
        env = dict(os.environ)
        env["LEAN_PATH"] = os.environ.get("FAKE_LAKE_LEAN_PATH", "")
        if "FAKE_LAKE_SYSROOT" in os.environ:
            env["LEAN_SYSROOT"] = os.environ["FAKE_LAKE_SYSROOT"]
        return subprocess.run(args[1:], env=env).returncode
    if args == ["build", "leanindex-extract"]:
        binary = Path.cwd() / ".lake" / "build" / "bin" / "leanindex-extract"
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "standin_extractor.py"}" "$@"\n')
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
        print("Build completed successfully.")
        return 0
    if command == "update":
        # As Lake does: record the resolved packages; Mathlib's update hook may rewrite the toolchain.
        if "FAKE_LAKE_MANIFEST" in os.environ:
            Path("lake-manifest.json").write_text(Path(os.environ["FAKE_LAKE_MANIFEST"]).read_text())
        if "FAKE_LAKE_UPDATE_TOOLCHAIN" in os.environ:
            Path("lean-toolchain").write_text(os.environ["FAKE_LAKE_UPDATE_TOOLCHAIN"] + "\n")
        print("fake lake: update done")
        return 0
    if args == ["exe", "cache", "get"]:
        print("fake lake: cache get done")
        return 0
    print(f"fake lake: unsupported arguments {args}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
