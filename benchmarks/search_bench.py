"""Search engine benchmark (issue 2): build throughput, cold start, query latency, memory.

Usage: `python benchmarks/search_bench.py [--declarations 800000] [--queries 200]
[--mathlib-archive PATH] [--work DIR]`. Prints a table and writes
`benchmarks/results/search.json`.

- Builds a synthetic catalog with the shape of `import Mathlib` (benchmarks/synthetic.py) in a
  child process and reports records/s and that process's peak RSS.
- Cold start: a fresh process constructs `Engine` and answers one search (verification of every
  file's sha256 included); the time from `Engine(...)` to the first answer, and the whole child
  process wall time including imports.
- Query classes, each over `--queries` different queries, timed in-process: p50/p95/p99 in ms.
  A brute-force baseline (pyarrow compute over the same Parquet table: substring match, list
  membership counts, masks) answers a sample of the same queries in the same run; the ratio is
  baseline p50 / engine p50. Every baseline answer is also compared with the engine's
  `total_matches`, so the two cannot silently disagree. A second baseline in the same run is
  DuckDB SQL over the same Parquet file as a user would write it (`LIKE`/`ILIKE`,
  `list_has_all`, `starts_with`), checked the same way.
- Serving RSS: peak RSS of the process that ran all queries.
- With `--mathlib-archive`, the same classes run on the real Mathlib catalog imported from
  doc-gen4 output (import time reported too).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from leanindex.engine import Engine  # noqa: E402
from leanindex.models import InspectRequest, SearchRequest  # noqa: E402
from leanindex.names import parse_name  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "search.json"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _build_piped(root: Path, profile: str, n: int) -> dict:
    """Generate the stream in one process and pipe it into `leanindex catalog build --input -`
    in another, as an extractor would; the builder's peak RSS is sampled with psutil."""
    here = Path(__file__).resolve().parent
    start = time.perf_counter()
    generator = subprocess.Popen([sys.executable, str(here / "synthetic.py"), str(n)], stdout=subprocess.PIPE)
    builder = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "catalog", "build", "--input", "-", "--profile", profile, "--root", str(root), "--json"],
        stdin=generator.stdout,
        stdout=subprocess.PIPE,
    )
    generator.stdout.close()
    watched, peak = psutil.Process(builder.pid), 0
    while builder.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    output = builder.stdout.read()
    if builder.wait() != 0 or generator.wait() != 0:
        raise SystemExit("synthetic build failed")
    manifest = json.loads(output)
    return {"seconds": time.perf_counter() - start, "count": manifest["catalog"]["declaration_count"], "peak_rss_mb": peak / 2**20}


def _import_child(root: str, profile: str, archive: str, out: multiprocessing.Queue) -> None:
    from leanindex.docgen import import_docgen

    start = time.perf_counter()
    manifest = import_docgen(Path(archive), root, profile).manifest
    out.put({"seconds": time.perf_counter() - start, "count": manifest.catalog.declaration_count, "peak_rss_mb": _peak_rss_mb()})


def _cold_child(root: str, profile: str, out: multiprocessing.Queue) -> None:
    start = time.perf_counter()
    engine = Engine(root)
    engine.search(SearchRequest(environment=profile, name_contains="comm", result_limit=10))
    out.put({"seconds": time.perf_counter() - start})


def _in_child(target, *args) -> dict:
    queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    process = multiprocessing.get_context("spawn").Process(target=target, args=(*args, queue))
    started = time.perf_counter()
    process.start()
    result = queue.get()
    process.join()
    result["process_seconds"] = time.perf_counter() - started
    return result


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"p50_ms": at(0.5), "p95_ms": at(0.95), "p99_ms": at(0.99), "n": len(ordered)}


class Baseline:
    """Brute force over the canonical Parquet table with pyarrow compute (no index)."""

    def __init__(self, parquet: Path):
        columns = ["name", "kind", "module", "type_constants", "is_private", "is_internal", "is_instance", "is_class", "is_structure",
                   "is_deprecated", "is_unsafe", "conclusion_constants", "conclusion_head", "value_constants"]
        table = pq.read_table(parquet, columns=columns)
        self.table = table
        self.names = table["name"].combine_chunks()
        self.kinds = table["kind"].combine_chunks()
        self.modules = table["module"].combine_chunks()
        self.lists = {
            column: (pc.list_flatten(table[column].combine_chunks()), pc.list_parent_indices(table[column].combine_chunks()).to_numpy())
            for column in ("type_constants", "conclusion_constants", "value_constants")
        }
        self.hidden = pc.or_(table["is_private"], table["is_internal"]).combine_chunks().to_numpy(zero_copy_only=False)
        self.components = [parse_name(n) for n in table["name"].to_pylist()]

    def _all_in(self, column: str, wanted: list[str]) -> np.ndarray:
        flat, parents = self.lists[column]
        hits = pc.is_in(flat, value_set=pa.array(wanted)).to_numpy(zero_copy_only=False)
        return np.bincount(parents[hits], minlength=len(self.names)) == len(wanted)

    def count(self, request: SearchRequest) -> int:
        mask = np.ones(len(self.names), dtype=bool)
        for fragment in request.name_fragments():
            mask &= pc.match_substring(self.names, fragment, ignore_case=not request.case_sensitive).to_numpy(zero_copy_only=False)
        if request.type_pattern is not None:
            for column, given in (("type_constants", request.type_pattern.constants), ("conclusion_constants", request.type_pattern.conclusion)):
                if given:
                    mask &= self._all_in(column, list(dict.fromkeys(given)))
        if request.instances_of:
            mask &= pc.fill_null(pc.equal(self.table["conclusion_head"], request.instances_of), False).to_numpy(zero_copy_only=False)
            mask &= self.table["is_instance"].to_numpy()
        if request.uses_constants:
            mask &= self._all_in("value_constants", list(dict.fromkeys(request.uses_constants)))
        if request.flags is not None:
            for key, value in request.flags.model_dump().items():
                if value is not None:
                    mask &= self.table[f"is_{key}"].to_numpy() == value
        if request.kinds:
            mask &= pc.is_in(self.kinds, value_set=pa.array([k.value for k in request.kinds])).to_numpy(zero_copy_only=False)
        if request.module_prefixes:
            m = np.zeros(len(self.names), dtype=bool)
            for p in request.module_prefixes:
                m |= pc.fill_null(pc.or_(pc.equal(self.modules, p), pc.starts_with(self.modules, p + ".")), False).to_numpy(zero_copy_only=False)
            mask &= m
        if request.namespace_prefixes:
            prefixes = [parse_name(p) for p in request.namespace_prefixes]
            candidates = np.flatnonzero(mask)
            keep = [i for i in candidates if any(len(self.components[i]) > len(p) and tuple(self.components[i][: len(p)]) == p for p in prefixes)]
            mask = np.zeros(len(self.names), dtype=bool)
            mask[keep] = True
        return int((mask & ~self.hidden).sum())


class DuckdbBaseline:
    """The same counts as a user would write them in DuckDB SQL over the same Parquet file
    (`LIKE`, `list_has_all`, `starts_with`), one query per request."""

    def __init__(self, parquet: Path):
        import duckdb

        self.con = duckdb.connect()
        self.con.execute(f"CREATE VIEW d AS SELECT * FROM read_parquet('{parquet}')")

    def sql(self, request: SearchRequest) -> tuple[str, list]:
        where, params = ["NOT (is_private OR is_internal)"], []
        for fragment in request.name_fragments():
            where.append("name LIKE ? ESCAPE '\\'" if request.case_sensitive else "name ILIKE ? ESCAPE '\\'")
            params.append("%" + fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if request.type_pattern is not None:
            for column, given in (("type_constants", request.type_pattern.constants), ("conclusion_constants", request.type_pattern.conclusion)):
                if given:
                    where.append(f"list_has_all({column}, ?)")
                    params.append(list(given))
        if request.instances_of:
            where.append("is_instance AND conclusion_head = ?")
            params.append(request.instances_of)
        if request.uses_constants:
            where.append("list_has_all(value_constants, ?)")
            params.append(list(request.uses_constants))
        if request.flags is not None:
            where += [f"is_{key} = {str(value).lower()}" for key, value in request.flags.model_dump().items() if value is not None]
        if request.kinds:
            where.append("kind IN (" + ", ".join("?" for _ in request.kinds) + ")")
            params += [k.value for k in request.kinds]
        if request.module_prefixes:
            where.append("(" + " OR ".join("(module = ? OR starts_with(module, ?))" for _ in request.module_prefixes) + ")")
            for p in request.module_prefixes:
                params += [p, p + "."]
        if request.namespace_prefixes:
            where.append("(" + " OR ".join("starts_with(name, ?)" for _ in request.namespace_prefixes) + ")")
            params += [p + "." for p in request.namespace_prefixes]
        return "SELECT count(*) FROM d WHERE " + " AND ".join(where), params

    def count(self, request: SearchRequest) -> int:
        query, params = self.sql(request)
        return int(self.con.execute(query, params).fetchone()[0])


def _query_classes(engine: Engine, profile: str, queries: int, seed: int) -> dict[str, list[SearchRequest]]:
    """Query sets drawn from the catalog itself, so every class has real matches."""
    rng = np.random.default_rng(seed)
    catalog = engine.catalog(profile)
    names = catalog.all_names()
    index = catalog.index
    visible = np.flatnonzero(~np.asarray(index.hidden, dtype=bool))
    counts = np.diff(np.asarray(index.postings_offsets))
    common = [catalog.constant_names[i] for i in np.argsort(-counts)[:40]]
    rare_ids = np.flatnonzero((counts >= 1) & (counts <= 20))
    rare = [catalog.constant_names[int(i)] for i in rng.choice(rare_ids, size=min(len(rare_ids), 400), replace=False)]
    namespaces = sorted({n.split(".")[0] for n in (names[int(i)] for i in rng.choice(visible, 2000)) if "." in n})

    def pick_name() -> str:
        return names[int(rng.choice(visible))]

    def rare_substring() -> str:
        name = pick_name()
        last = name.rsplit(".", 1)[-1]
        return last if len(last) >= 6 else name

    common_substrings = ["_comm", "add", "_le", "mul_", "_of_", "map", "eq_", "ne_"]
    env = profile
    classes: dict[str, list[SearchRequest]] = {
        "name_rare": [SearchRequest(environment=env, name_contains=rare_substring()) for _ in range(queries)],
        "name_common": [SearchRequest(environment=env, name_contains=common_substrings[i % len(common_substrings)] + ("" if i < len(common_substrings) else "")) for i in range(queries)],
        "const1_common": [SearchRequest(environment=env, type_pattern={"constants": [common[i % len(common)]]}) for i in range(queries)],
        "const1_rare": [SearchRequest(environment=env, type_pattern={"constants": [rare[i % len(rare)]]}) for i in range(queries)],
        "const2_common": [SearchRequest(environment=env, type_pattern={"constants": list(rng.choice(common[:20], 2, replace=False))}) for _ in range(queries)],
        "const2_mixed": [SearchRequest(environment=env, type_pattern={"constants": [common[i % 20], rare[i % len(rare)]]}) for i in range(queries)],
        "const4_common": [SearchRequest(environment=env, type_pattern={"constants": list(rng.choice(common[:12], 4, replace=False))}) for _ in range(queries)],
        "combined": [
            SearchRequest(environment=env, name_contains=common_substrings[i % 4], type_pattern={"constants": [common[i % 10]]}, kinds=["theorem"], namespace_prefixes=[namespaces[i % len(namespaces)]])
            for i in range(queries)
        ],
        "namespace_kind": [
            SearchRequest(environment=env, name_contains=common_substrings[i % len(common_substrings)], namespace_prefixes=[namespaces[i % len(namespaces)]], kinds=["theorem"])
            for i in range(queries)
        ],
        "browse_namespace_kind": [
            SearchRequest(environment=env, namespace_prefixes=[namespaces[i % len(namespaces)]], kinds=["theorem"]) for i in range(queries)
        ],
        "flag_filter": [
            SearchRequest(environment=env, flags=[{"instance": True}, {"class": True}, {"deprecated": True, "instance": False}][i % 3], kinds=[["definition"], ["theorem"], ["inductive"]][i % 3])
            for i in range(queries)
        ],
        "name_two_fragments_ci": [
            SearchRequest(environment=env, name_contains=[common_substrings[i % 4].upper(), common_substrings[4 + i % 4]], case_sensitive=False)
            for i in range(queries)
        ],
    }
    head_counts = np.bincount(np.asarray(index.head)[np.asarray(index.head) >= 0], minlength=len(catalog.constant_names))
    conclusion_counts = np.diff(np.asarray(index.conclusion_postings_offsets))
    value_counts = np.diff(np.asarray(index.value_postings_offsets))
    if conclusion_counts.sum():
        in_conclusions = [catalog.constant_names[i] for i in np.argsort(-conclusion_counts)[:200]]
        classes["conclusion"] = [SearchRequest(environment=env, type_pattern={"conclusion": [in_conclusions[i % len(in_conclusions)]]}) for i in range(queries)]
        heads = [catalog.constant_names[i] for i in np.argsort(-head_counts)[:200] if head_counts[i]]
        classes["instances_of"] = [SearchRequest(environment=env, instances_of=heads[i % len(heads)]) for i in range(queries)]
    if value_counts.sum():
        used = [catalog.constant_names[i] for i in np.argsort(-value_counts)[:200]]
        classes["uses_constants"] = [SearchRequest(environment=env, uses_constants=[used[i % len(used)]]) for i in range(queries)]
    return classes


def _time_baseline(baseline: Baseline | DuckdbBaseline, classes: dict[str, list[SearchRequest]], results: dict, sample: int, key: str = "baseline") -> None:
    """Add the baseline's p50 and the ratio to each class of `results` (under `key`), checking
    every count against the engine's total."""
    for label, requests in classes.items():
        base = []
        for r, total in zip(requests[:sample], results[label]["totals"]):
            start = time.perf_counter()
            count = baseline.count(r)
            base.append((time.perf_counter() - start) * 1000)
            if count != total:
                raise SystemExit(f"{key} disagrees on {r.model_dump(exclude_none=True)}: {count} != {total}")
        results[label][f"{key}_p50_ms"] = statistics.median(base)
        results[label][f"speedup_vs_{key}"] = results[label][f"{key}_p50_ms"] / max(results[label]["p50_ms"], 1e-6)


def _time_baselines(parquet: Path, classes: dict[str, list[SearchRequest]], results: dict, sample: int) -> None:
    """Both baselines over `parquet`; the engine's totals are dropped from `results` after."""
    _time_baseline(Baseline(parquet), classes, results, sample)
    _time_baseline(DuckdbBaseline(parquet), classes, results, sample, key="duckdb")
    for label in classes:
        results[label].pop("totals")


def _time_classes(engine: Engine, profile: str, classes: dict[str, list[SearchRequest]]) -> dict:
    out: dict[str, dict] = {}
    for label, requests in classes.items():
        for r in requests[:5]:  # warm the page cache and code paths
            engine.search(r)
        samples, totals = [], []
        for r in requests:
            start = time.perf_counter()
            response = engine.search(r)
            samples.append((time.perf_counter() - start) * 1000)
            totals.append(response.total_matches)
        out[label] = _percentiles(samples) | {"median_total_matches": statistics.median(totals), "totals": totals}
    cursor_samples = []
    for r in classes["name_common"][:50]:
        first = engine.search(r.model_copy(update={"result_limit": 20}))
        cursor = first.next_cursor
        for _ in range(4):
            if cursor is None:
                break
            start = time.perf_counter()
            page = engine.search(r.model_copy(update={"result_limit": 20, "after": cursor}))
            cursor_samples.append((time.perf_counter() - start) * 1000)
            cursor = page.next_cursor
    out["cursor_continuation"] = _percentiles(cursor_samples)
    catalog = engine.catalog(profile)
    names = catalog.all_names()
    rng = np.random.default_rng(3)
    inspect_samples = []
    for i in rng.choice(len(names), 400):
        request = InspectRequest(environment=profile, declaration_name=names[int(i)])
        start = time.perf_counter()
        engine.inspect(request)
        inspect_samples.append((time.perf_counter() - start) * 1000)
    out["inspect"] = _percentiles(inspect_samples)
    return out


def engine_count(root: Path, profile: str) -> int:
    """Declarations in a built catalog, from its manifest."""
    return json.loads((root / "manifests" / f"{profile}.json").read_text())["catalog"]["declaration_count"]


def _print(title: str, results: dict) -> None:
    print(f"\n== {title}")
    print(f"{'class':22} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'base p50':>9} {'ratio':>7} {'duck p50':>9} {'ratio':>7} {'matches':>8}")
    for label, e in results.items():
        cells = []
        for key in ("baseline", "duckdb"):
            cells.append(f"{e[f'{key}_p50_ms']:9.1f}" if f"{key}_p50_ms" in e else f"{'':9}")
            cells.append(f"{e[f'speedup_vs_{key}']:6.0f}x" if f"speedup_vs_{key}" in e else f"{'':7}")
        total = f"{e.get('median_total_matches', ''):>8}"
        print(f"{label:22} {e['p50_ms']:8.2f} {e['p95_ms']:8.2f} {e['p99_ms']:8.2f} {' '.join(cells)} {total}")


def benchmark_arguments(description: str) -> argparse.ArgumentParser:
    """The options every catalog benchmark takes: size, queries, Mathlib archive, work folder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--declarations", type=int, default=800_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--mathlib-archive", type=Path)
    parser.add_argument("--work", type=Path, help="Keep the built catalogs here (default: a temporary folder).")
    parser.add_argument("--reuse", action="store_true", help="With --work: reuse the synthetic catalog built there by an earlier run (no build figures).")
    return parser


def machine() -> dict:
    """Where a benchmark ran: CPU count, Python, platform."""
    return {"cpus": multiprocessing.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def main() -> None:
    parser = benchmark_arguments(__doc__.split("\n")[0])
    parser.add_argument("--baseline-sample", type=int, default=15)
    args = parser.parse_args()
    report: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory(prefix="leanindex-bench-") as scratch:
        root = args.work or Path(scratch)
        if not (args.reuse and (root / "manifests" / "synthetic.json").exists()):
            build = _build_piped(root, "synthetic", args.declarations)
            build["records_per_second"] = build["count"] / build["seconds"]
            report["build"] = build
            print(f"build: {build['count']:,} records in {build['seconds']:.1f} s = {build['records_per_second']:,.0f} records/s, peak RSS {build['peak_rss_mb']:.0f} MB")
        colds = [_in_child(_cold_child, str(root), "synthetic") for _ in range(5)]
        report["cold_start"] = {
            "engine_to_first_answer_ms": _percentiles([c["seconds"] * 1000 for c in colds]),
            "process_with_imports_ms": _percentiles([c["process_seconds"] * 1000 for c in colds]),
        }
        print(f"cold start (Engine() to first answer, median of 5): {report['cold_start']['engine_to_first_answer_ms']['p50_ms']:.0f} ms; whole process with imports {report['cold_start']['process_with_imports_ms']['p50_ms']:.0f} ms")
        engine = Engine(root)
        classes = _query_classes(engine, "synthetic", args.queries, seed=11)
        report["synthetic"] = _time_classes(engine, "synthetic", classes)
        report["serving_peak_rss_mb"] = _peak_rss_mb()
        engine.close()
        _time_baselines(root / "catalog" / "synthetic" / "declarations.parquet", classes, report["synthetic"], args.baseline_sample)
        _print(f"synthetic catalog, {engine_count(root, 'synthetic'):,} declarations", report["synthetic"])
        print(f"serving process peak RSS (engine, all queries, before the baseline loads): {report['serving_peak_rss_mb']:.0f} MB")
        if args.mathlib_archive:
            imported = _in_child(_import_child, str(root), "mathlib", str(args.mathlib_archive))
            imported["records_per_second"] = imported["count"] / imported["seconds"]
            report["mathlib_import"] = imported
            print(f"\nMathlib doc-gen4 import: {imported['count']:,} records in {imported['seconds']:.1f} s, peak RSS {imported['peak_rss_mb']:.0f} MB")
            engine = Engine(root)
            classes = _query_classes(engine, "mathlib", args.queries, seed=12)
            report["mathlib"] = _time_classes(engine, "mathlib", classes)
            engine.close()
            _time_baselines(root / "catalog" / "mathlib" / "declarations.parquet", classes, report["mathlib"], args.baseline_sample)
            _print(f"Mathlib (doc-gen4, {imported['count']:,} declarations)", report["mathlib"])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
