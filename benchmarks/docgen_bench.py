"""doc-gen4 import benchmark (issue 15): wall time and peak RSS of `leanindex catalog
import-docgen` on the real archives, and of `leanindex demo`'s first run on a fresh root.

Usage: `python benchmarks/docgen_bench.py [--core PATH] [--mathlib PATH] [--work DIR]`
(defaults: the shipped core archive, `../shared/realdata/docgen-mathlib-0cc1f97.tar.xz` when
present). Each import runs as a child process into an empty root; its peak RSS is the
kernel's figure for that child (`getrusage(RUSAGE_CHILDREN).ru_maxrss`, one child at a time,
each measured in a fresh helper process), in MiB. Then the reading and converting phase alone
(`collect_docgen`) of each archive with no worker process and with `CONVERT_WORKERS`, each in
a fresh child process, the two in the same run. Prints a table and writes
`benchmarks/results/docgen.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LEANINDEX = [str(Path(sys.executable).with_name("leanindex"))]


def measured(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run `command` in a helper process that waits for it and reports the child's peak RSS."""
    helper = (
        "import resource, subprocess, sys, time, json\n"
        "start = time.monotonic()\n"
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "wall = time.monotonic() - start\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'status': done.returncode, 'stderr': done.stderr[-2000:], 'wall_s': wall,"
        " 'cpu_s': usage.ru_utime + usage.ru_stime, 'peak_rss_mib': usage.ru_maxrss / 1024}))\n"
    )
    out = subprocess.run([sys.executable, "-c", helper, *command], capture_output=True, text=True, env=env, check=True)
    result = json.loads(out.stdout)
    if result["status"] != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result['stderr']}")
    return {key: round(result[key], 1) for key in ("wall_s", "cpu_s", "peak_rss_mib")}


def collect_wall(archive: Path, workers: int) -> float:
    """Wall seconds of `collect_docgen(archive, workers=workers)` in a fresh child process."""
    script = (
        "import sys, time\n"
        "from leanindex.docgen import collect_docgen\n"
        "if __name__ == '__main__':\n"
        "    start = time.monotonic()\n"
        "    collect_docgen(sys.argv[1], workers=int(sys.argv[2])).lines.close()\n"
        "    print(time.monotonic() - start)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(archive), str(workers)], capture_output=True, text=True, check=True)
    return round(float(out.stdout), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    from leanindex.embedded import embedded_archive

    shared = REPO.parent / "shared" / "realdata" / "docgen-mathlib-0cc1f97.tar.xz"
    parser.add_argument("--core", type=Path, default=embedded_archive())
    parser.add_argument("--mathlib", type=Path, default=shared if shared.exists() else None)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="leanindex-docgen-bench-"))
    env = dict(os.environ)
    results: dict[str, object] = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}}
    runs = {"core_import": (args.core, "core", "4.33.0")}
    if args.mathlib is not None:
        runs["mathlib_import"] = (args.mathlib, "mathlib", None)
    for label, (archive, profile, version) in runs.items():
        root = work / label
        shutil.rmtree(root, ignore_errors=True)
        command = [*LEANINDEX, "catalog", "import-docgen", str(archive), "--profile", profile, "--root", str(root)]
        results[label] = {"archive": archive.name, **measured(command + (["--lean-version", version] if version else []), env)}
    demo_root = work / "demo"
    shutil.rmtree(demo_root, ignore_errors=True)
    results["first_demo"] = measured([*LEANINDEX, "demo"], {**env, "LEANINDEX_ROOT": str(demo_root)})
    from leanindex.docgen.importer import CONVERT_WORKERS

    for label, (archive, _, _) in runs.items():
        results[f"{label}_collect"] = {"workers_0_s": collect_wall(archive, 0), f"workers_{CONVERT_WORKERS}_s": collect_wall(archive, CONVERT_WORKERS)}
    results["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for label in ("core_import", "mathlib_import", "first_demo"):
        if label in results:
            row = results[label]
            print(f"{label:<16} wall {row['wall_s']:>6} s  cpu {row['cpu_s']:>6} s  peak RSS {row['peak_rss_mib']:>7} MiB")  # type: ignore[index]
        if f"{label}_collect" in results:
            phase = results[f"{label}_collect"]
            print(f"{label + ' read+convert':<28} " + "  ".join(f"{k} {v}" for k, v in phase.items()))  # type: ignore[union-attr]
    out = HERE / "results" / "docgen.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
