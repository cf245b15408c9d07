"""doc-gen4 import benchmark (issue 15): wall time, CPU and peak memory of `leanindex catalog
import-docgen` on the real archives, and of `leanindex demo`'s first run on a fresh root.

Usage: `python benchmarks/docgen_bench.py [--core PATH] [--mathlib PATH | --no-mathlib] [--work DIR] [--out PATH]`
(defaults: the shipped core archive, `../shared/realdata/docgen-mathlib-0cc1f97.tar.xz` when
present, `benchmarks/results/docgen.json`). Each command runs as a child of a fresh helper
process, one at a time, into an empty root; per command, in MiB and seconds:
- `wall_s`; `cpu_s`, user + system of the command and every descendant it waited for
  (`getrusage(RUSAGE_CHILDREN)` in the helper);
- `largest_process_peak_rss_mib`: the peak RSS of the largest single process of the tree
  (`RUSAGE_CHILDREN.ru_maxrss`, the kernel's figure);
- `tree_peak_rss_sampled_mib`: the largest sum of RSS over the command's process and all its
  descendants, sampled every 50 ms with psutil (a peak between two samples is missed; pages
  shared between processes count once per process, so a forked worker counts its parent's
  pages again);
- `tree_peak_pss_sampled_mib`: the same with each process's proportional set size (PSS: a page
  shared by n processes counts 1/n in each), so the sum is the memory the tree holds.
Then the reading and converting phase alone (`collect_docgen`) of each archive with no worker
process and with `CONVERT_WORKERS`, each in a fresh child process, the two in the same run.
Prints a table and writes the JSON, with the run's date, commit and load (`runinfo.py`).
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
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import runinfo  # noqa: E402  (at the start: it records the run's start)

LEANINDEX = [str(Path(sys.executable).with_name("leanindex"))]


#: Seconds between two samples of the process tree's memory.
SAMPLE_S = 0.05


def measure_here(command: list[str]) -> None:
    """Run `command` as a child of this process, sampling its process tree's RSS every
    `SAMPLE_S`; print one JSON line: `status`, `stderr` (its last 2,000 characters), `wall_s`,
    `cpu_s`, `largest_process_peak_rss_mib`, `tree_peak_rss_sampled_mib` (see the module
    docstring). Meant to run in a fresh helper process, so that `RUSAGE_CHILDREN` holds this
    command alone."""
    import resource

    import psutil

    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Read stderr on a thread: a full pipe would block the command while we sample.
    tail: list[str] = []
    reader = threading.Thread(target=lambda: tail.append(child.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    root, tree_peak, pss_peak = psutil.Process(child.pid), 0, 0
    while child.poll() is None:
        total = proportional = 0
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for process in processes:
            try:
                memory = process.memory_full_info()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue  # ended between the listing and the reading: its memory is gone
            total += memory.rss
            proportional += memory.pss
        tree_peak = max(tree_peak, total)
        pss_peak = max(pss_peak, proportional)
        time.sleep(SAMPLE_S)
    status = child.wait()
    wall = time.monotonic() - start
    reader.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "status": status, "stderr": "".join(tail)[-2000:], "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
        "largest_process_peak_rss_mib": usage.ru_maxrss / 1024, "tree_peak_rss_sampled_mib": tree_peak / 2**20,
        "tree_peak_pss_sampled_mib": pss_peak / 2**20,
    }))


def measured(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """`measure_here(command)` in a fresh helper process: its figures rounded to 0.1; raises
    `SystemExit` when the command fails."""
    helper = f"import sys; sys.path.insert(0, {str(HERE)!r}); from docgen_bench import measure_here; measure_here(sys.argv[1:])"
    out = subprocess.run([sys.executable, "-c", helper, *command], capture_output=True, text=True, env=env, check=True)
    result = json.loads(out.stdout)
    if result["status"] != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result['stderr']}")
    keys = ("wall_s", "cpu_s", "largest_process_peak_rss_mib", "tree_peak_rss_sampled_mib", "tree_peak_pss_sampled_mib")
    return {key: round(result[key], 1) for key in keys}


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
    parser.add_argument("--no-mathlib", action="store_true", help="Leave out the Mathlib import (a quick run on the core archive).")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "docgen.json")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="leanindex-docgen-bench-"))
    env = dict(os.environ)
    results: dict[str, object] = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}}
    runs = {"core_import": (args.core, "core", "4.33.0")}
    if args.mathlib is not None and not args.no_mathlib:
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
    results["run"] = runinfo.run_info()
    for label in ("core_import", "mathlib_import", "first_demo"):
        if label in results:
            row = results[label]
            print(f"{label:<16} wall {row['wall_s']:>6} s  cpu {row['cpu_s']:>6} s  peak RSS: largest process {row['largest_process_peak_rss_mib']:>7} MiB,"  # type: ignore[index]
                  f" whole tree (sampled) {row['tree_peak_rss_sampled_mib']:>7} MiB, whole tree PSS (sampled) {row['tree_peak_pss_sampled_mib']:>7} MiB")  # type: ignore[index]
        if f"{label}_collect" in results:
            phase = results[f"{label}_collect"]
            print(f"{label + ' read+convert':<28} " + "  ".join(f"{k} {v}" for k, v in phase.items()))  # type: ignore[union-attr]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
