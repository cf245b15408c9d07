"""Per-declaration diff benchmark (issue 12, item 4): wall time of `diff_declarations` (counts of
every category and the first page of 100) on real catalogs.

Usage: `python benchmarks/diff_bench.py [--work DIR] [--runs N] [--no-mathlib] [--out PATH]`. Catalogs are
imported into `--work` (a temporary folder by default; pass a folder to reuse its catalogs
between runs): `core-v4-19`, the Lean core part (`Init`, `Std`, `Lean`, `Lake`) of the Mathlib
archive (Lean v4.19.0-rc3, from `../shared/realdata`), `core-v4-33`, the shipped core v4.33.0
archive, and `mathlib`, the whole Mathlib archive, compared with itself (the largest join, no
change). Catalogs are verified once before timing (as the CLI does; the verification's time is
reported apart). Each pair runs `--runs` times; the median and the spread are reported in ms,
with the ratio of the Mathlib pair to the core pair measured in the same run. Prints a table
and writes `benchmarks/results/diff.json` (or `--out`), with the run's date, commit and load (`runinfo.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import runinfo  # noqa: E402  (at the start: it records the run's start)

CORE_PREFIXES = ["Init", "Std", "Lean", "Lake"]


def ensure(root: Path, profile: str, archive: Path, lean_version: str | None, prefixes: list[str] | None) -> float | None:
    """Import `archive` as `profile` unless a verified catalog is there; the import's wall s."""
    from leanindex.docgen import import_docgen
    from leanindex.engine.diff import open_verified
    from leanindex.errors import LeanIndexError

    try:
        open_verified(root, profile)
        return None
    except LeanIndexError:
        start = time.monotonic()
        import_docgen(archive, root, profile, lean_version=lean_version, module_prefixes=prefixes)
        return round(time.monotonic() - start, 1)


def timed_pair(root: Path, older: str, newer: str, runs: int) -> dict[str, object]:
    from leanindex.engine.diff import diff_declarations, open_verified

    start = time.monotonic()
    old, new = open_verified(root, older), open_verified(root, newer)
    verify_ms = (time.monotonic() - start) * 1000
    times, report = [], None
    for _ in range(runs):
        start = time.perf_counter()
        report = diff_declarations(old, new, limit=100)
        times.append((time.perf_counter() - start) * 1000)
    assert report is not None
    return {
        "older": older,
        "newer": newer,
        "declarations": [report.older.declaration_count, report.newer.declaration_count],
        "counts": report.counts,
        "runs": runs,
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
        "verify_both_ms": round(verify_ms, 1),
    }


def main() -> None:
    from leanindex.embedded import embedded_archive

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-mathlib", action="store_true", help="Leave out Mathlib against itself.")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "diff.json")
    args = parser.parse_args()
    mathlib = REPO.parent / "shared" / "realdata" / "docgen-mathlib-0cc1f97.tar.xz"
    if not mathlib.exists():
        raise SystemExit(f"needs {mathlib} (real doc-gen4 data)")
    root = Path(args.work or tempfile.mkdtemp(prefix="leanindex-diff-bench-"))
    imports = {
        "core-v4-19": ensure(root, "core-v4-19", mathlib, "v4.19.0-rc3", CORE_PREFIXES),
        "core-v4-33": ensure(root, "core-v4-33", embedded_archive(), "v4.33.0", None),
    }
    pairs = [timed_pair(root, "core-v4-19", "core-v4-33", args.runs)]
    if not args.no_mathlib:
        imports["mathlib"] = ensure(root, "mathlib", mathlib, None, None)
        pairs.append(timed_pair(root, "mathlib", "mathlib", args.runs))
    results: dict[str, object] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "import_wall_s": imports,
        "pairs": pairs,
    }
    if len(pairs) == 2:
        results["mathlib_to_core_median_ratio"] = round(pairs[1]["median_ms"] / pairs[0]["median_ms"], 2)
    print(f"{'older':<12} {'newer':<12} {'decls':>17} {'median ms':>10} {'min':>8} {'max':>8} {'verify ms':>10}  counts")
    for pair in pairs:
        declarations = "/".join(f"{n:,}" for n in pair["declarations"])
        print(f"{pair['older']:<12} {pair['newer']:<12} {declarations:>17} {pair['median_ms']:>10} {pair['min_ms']:>8} "
              f"{pair['max_ms']:>8} {pair['verify_both_ms']:>10}  {pair['counts']}")
    if "mathlib_to_core_median_ratio" in results:
        print(f"Mathlib/core median ratio: {results['mathlib_to_core_median_ratio']}")
    results["run"] = runinfo.run_info()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
