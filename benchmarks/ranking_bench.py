"""Relevance order and text search benchmark (issue 12).

Usage: `python benchmarks/ranking_bench.py [--declarations 800000] [--queries 200]
[--mathlib-archive PATH] [--work DIR] [--reuse] [--out PATH]`. Prints a table and writes
`benchmarks/results/ranking.json` (or PATH), with the run's date, commit and load (`runinfo.py`).

- Synthetic catalog (benchmarks/synthetic.py, the shape of `import Mathlib`): every query class
  of `search_bench.py` runs in name order and in relevance order, the two interleaved request by
  request in the same process, so the added cost is measured against a baseline of the same run:
  p50 of each and the difference (relevance p50 - name p50, ms).
- Mathlib (doc-gen4 archive imported in a child process, wall time measured): text search
  p50/p99 over word queries (a fixed set a user would type, then pairs of words drawn from
  docstrings), each checked to match at least one declaration.
- The text index's share: bytes of `index/text/` against the rest of the catalog, and the time
  to build it (`catalog.text.write_text_index` on the same `declarations.parquet`, rerun into a
  scratch folder) against the import's wall time less that time.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

import runinfo  # noqa: E402  (at the start: it records the run's start)
from leanindex.catalog.text import TEXT_DIR, write_text_index  # noqa: E402
from leanindex.engine import Engine  # noqa: E402
from leanindex.models import SearchRequest  # noqa: E402
from search_bench import (  # noqa: E402
    _build_piped,
    _import_child,
    _in_child,
    _percentiles,
    _query_classes,
    benchmark_arguments,
    machine,
)

RESULTS = Path(__file__).resolve().parent / "results" / "ranking.json"
USER_QUERIES = [
    "pushforward measure", "commutativity addition natural", "prime factorization", "continuous compact bounded",
    "derivative chain rule", "integral monotone convergence", "group homomorphism kernel", "matrix determinant product",
    "finite sum geometric", "square root nonnegative", "limit sequence tendsto", "ideal quotient ring",
    "polynomial degree root", "cardinal countable", "metric space complete", "linear map injective",
    "vector space basis dimension", "open set union", "filter convergence", "inverse function",
]


def _timed_pair(engine: Engine, requests: list[SearchRequest]) -> dict:
    """p50 of each request in name order and in relevance order, alternating."""
    by_name, ranked = [], []
    for r in requests[:5]:
        engine.search(r)
        engine.search(r.model_copy(update={"order": "relevance"}))
    for r in requests:
        for order, samples in (("name", by_name), ("relevance", ranked)):
            request = r.model_copy(update={"order": order})
            start = time.perf_counter()
            engine.search(request)
            samples.append((time.perf_counter() - start) * 1000)
    name_p50, ranked_p50 = statistics.median(by_name), statistics.median(ranked)
    return {"name_p50_ms": name_p50, "relevance_p50_ms": ranked_p50, "added_p50_ms": ranked_p50 - name_p50, "n": len(requests)}


def _text_queries(parquet: Path, count: int, seed: int) -> list[str]:
    """`USER_QUERIES`, then pairs of words from one docstring each, up to `count`."""
    rng = np.random.default_rng(seed)
    docs = [d for d in pq.read_table(parquet, columns=["doc"]).column(0).to_pylist() if d]
    queries = list(USER_QUERIES)
    while len(queries) < count:
        words = re.findall(r"(?<![\w-])[a-z]{5,}(?![\w-])", docs[int(rng.integers(len(docs)))])
        if len(words) >= 2:
            queries.append(" ".join(rng.choice(words, 2, replace=False)))
    return queries


def _text_search(engine: Engine, queries: list[str]) -> dict:
    for q in queries[:5]:
        engine.search(SearchRequest(environment="mathlib", text=q))
    samples, totals = [], []
    for q in queries:
        start = time.perf_counter()
        response = engine.search(SearchRequest(environment="mathlib", text=q))
        samples.append((time.perf_counter() - start) * 1000)
        totals.append(response.total_matches)
        if not response.total_matches:
            raise SystemExit(f"text query {q!r} matched nothing")
    return _percentiles(samples) | {"median_total_matches": statistics.median(totals)}


def _text_share(catalog: Path, import_seconds: float) -> dict:
    """Size and build time of the text index against the rest of the catalog."""
    files = [p for p in catalog.rglob("*") if p.is_file()]
    text_bytes = sum(p.stat().st_size for p in files if TEXT_DIR in p.as_posix())
    total_bytes = sum(p.stat().st_size for p in files)
    with tempfile.TemporaryDirectory(prefix="leanindex-text-") as scratch:
        folder = Path(scratch)
        (folder / "declarations.parquet").symlink_to(catalog / "declarations.parquet")
        (folder / "index").mkdir()
        start = time.perf_counter()
        write_text_index(folder)
        text_seconds = time.perf_counter() - start
    rest_bytes, rest_seconds = total_bytes - text_bytes, import_seconds - text_seconds
    return {
        "text_index_bytes": text_bytes, "catalog_without_text_bytes": rest_bytes, "size_added_pct": 100 * text_bytes / rest_bytes,
        "text_index_build_s": text_seconds, "import_without_text_s": rest_seconds, "build_time_added_pct": 100 * text_seconds / rest_seconds,
    }


def main() -> None:
    parser = benchmark_arguments(__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    report: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory(prefix="leanindex-rank-") as scratch:
        root = args.work or Path(scratch)
        if not (args.reuse and (root / "manifests" / "synthetic.json").exists()):
            build = _build_piped(root, "synthetic", args.declarations)
            report["synthetic_build"] = build
            print(f"synthetic build: {build['count']:,} records in {build['seconds']:.1f} s")
        engine = Engine(root)
        classes = _query_classes(engine, "synthetic", args.queries, seed=11)
        report["synthetic"] = {label: _timed_pair(engine, requests) for label, requests in classes.items()}
        engine.close()
        print(f"\n== relevance vs name order, synthetic catalog ({args.declarations:,} declarations)")
        print(f"{'class':22} {'name p50':>9} {'rel. p50':>9} {'added':>8}")
        for label, e in report["synthetic"].items():
            print(f"{label:22} {e['name_p50_ms']:9.2f} {e['relevance_p50_ms']:9.2f} {e['added_p50_ms']:+8.2f}")
        if args.mathlib_archive:
            imported = _in_child(_import_child, str(root), "mathlib", str(args.mathlib_archive))
            report["mathlib_import"] = imported
            catalog = (root / "catalog" / "mathlib").resolve()
            report["text_share"] = _text_share(catalog, imported["seconds"])
            engine = Engine(root)
            report["mathlib_text"] = _text_search(engine, _text_queries(catalog / "declarations.parquet", args.queries, seed=5))
            engine.close()
            t, s = report["mathlib_text"], report["text_share"]
            print(f"\n== text search, Mathlib doc-gen4 ({imported['count']:,} declarations, import {imported['seconds']:.1f} s)")
            print(f"p50 {t['p50_ms']:.2f} ms · p95 {t['p95_ms']:.2f} ms · p99 {t['p99_ms']:.2f} ms over {t['n']} queries (median {t['median_total_matches']} matches)")
            print(
                f"text index {s['text_index_bytes'] / 2**20:.1f} MiB on {s['catalog_without_text_bytes'] / 2**20:.1f} MiB (+{s['size_added_pct']:.1f}%); "
                f"built in {s['text_index_build_s']:.1f} s on {s['import_without_text_s']:.1f} s (+{s['build_time_added_pct']:.1f}%)"
            )
    report["run"] = runinfo.run_info()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
