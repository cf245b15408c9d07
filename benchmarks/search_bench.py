"""Search engine benchmark (issue 2): build throughput, cold start, query latency, memory.

Usage: `python benchmarks/search_bench.py [--declarations 800000] [--queries 200]
[--mathlib-archive PATH] [--work DIR [--reuse]] [--baseline-sample 15] [--out PATH]`. Prints a
table and writes `--out` (default `benchmarks/results/search.json`).

- Builds a synthetic catalog with the shape of `import Mathlib` (benchmarks/synthetic.py) in a
  child process and reports records/s and that process's peak RSS.
- Cold start: a fresh process constructs `Engine` and answers one search (the first such process
  hashes every catalog file and writes the verification record; the later ones stat the files
  against it, `catalog.verify`); the time from `Engine(...)` to the first answer, and the whole
  child process wall time including imports, medians over the runs.
- Query classes, each over `--queries` different queries drawn from the catalog, timed
  in-process in two passes. The first pass (`first_pass_p50_ms`, `first_pass_p99_ms`) meets
  every query for the first time, with nothing but the engine loaded: it pays whatever the
  engine builds on first use. The second pass gives p50/p95/p99 in ms; in it, every
  `len / --baseline-sample`-th query is also answered, right after the engine, by a brute-force
  baseline (pyarrow compute over the same Parquet table: substring match, list membership
  counts, masks) and by DuckDB SQL over the same Parquet file as a user would write it
  (`LIKE`/`ILIKE`, `list_has_all`, `starts_with`). So engine and baselines are timed
  alternately on the same queries under the same load: `baseline_p50_ms` / `duckdb_p50_ms` are
  the baselines' medians over those sampled queries, `engine_sample_p50_ms` the engine's median
  over the same queries, and `speedup_vs_baseline` / `speedup_vs_duckdb` their ratios. Every
  baseline answer is compared with the engine's `total_matches`, so the two cannot silently
  disagree. `median_total_matches` is the median query's match count; a class whose median
  query matches nothing is marked `empty_median` (and in the table) rather than passed off as
  a timing of real answers.
- Serving RSS: peak RSS of the process after the engine answered every query once (the first
  pass), before the baselines load.
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

import runinfo  # noqa: E402  (at the start: it records the run's start)
from leanindex.catalog.instances import instance_counts  # noqa: E402
from leanindex.catalog.manifest import flag_fact  # noqa: E402
from leanindex.engine import Engine  # noqa: E402
from leanindex.models import SEARCH_FLAGS, InspectRequest, SearchRequest  # noqa: E402
from leanindex.names import parse_name  # noqa: E402
from leanindex.records import FLAG_FIELDS, KIND_ORDER  # noqa: E402

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
                   "is_deprecated", "is_unsafe", "conclusion_constants", "conclusion_head", "value_constants", "instance_class"]
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
        self.classes = instance_classes(table)

    def _instances_of(self, wanted: str) -> np.ndarray:
        """The engine's rule: the instance table's class where every instance has one and it
        lists `wanted`, else the conclusion's head."""
        column = "instance_class" if wanted in self.classes else "conclusion_head"
        return pc.fill_null(pc.equal(self.table[column], wanted), False).to_numpy(zero_copy_only=False)

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
            mask &= self._instances_of(request.instances_of)
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


def instance_classes(table: pa.Table) -> set[str]:
    """The classes of the instance table when every instance records its class (the engine
    then answers `instances_of` from the table), else none."""
    instances = table.filter(table["is_instance"])
    if instances["instance_class"].null_count:
        return set()
    return set(instances["instance_class"].to_pylist())


class DuckdbBaseline:
    """The same counts as a user would write them in DuckDB SQL over the same Parquet file
    (`LIKE`, `list_has_all`, `starts_with`), one query per request."""

    def __init__(self, parquet: Path, classes: set[str]):
        import duckdb

        self.con = duckdb.connect()
        self.con.execute(f"CREATE VIEW d AS SELECT * FROM read_parquet('{parquet}')")
        self.classes = classes

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
            where.append("is_instance AND " + ("instance_class" if request.instances_of in self.classes else "conclusion_head") + " = ?")
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


def _matched_kind(index, flags: dict[str, bool], kind: str) -> str:
    """`kind` when some visible declaration of that kind has `flags`, else the kind most such
    declarations have (doc-gen4 data has no class theorem and no deprecated inductive: the
    query would only time the empty answer)."""
    keep = ~np.asarray(index.hidden, dtype=bool)
    bits = np.asarray(index.flags)
    for key, value in flags.items():
        keep &= ((bits >> FLAG_FIELDS.index(SEARCH_FLAGS[key])) & 1).astype(bool) == value
    counts = np.bincount(np.asarray(index.kind)[keep], minlength=len(KIND_ORDER))
    return kind if counts[KIND_ORDER.index(kind)] else KIND_ORDER[int(np.argmax(counts))]


def _instance_classes(catalog, queries: int) -> list[str]:
    """`queries` classes with instances, most instances first, cycled: from the instance table
    where the catalog records every instance's class, else the conclusion heads of instances
    (conclusion heads in general are mostly no classes: `Eq`, `LE.le`)."""
    index = catalog.index
    if catalog.instances_recorded():
        counts = instance_counts(index)
        ranked = sorted(counts, key=lambda name: -counts[name])[:200]
    else:
        head = np.asarray(index.head)
        instance = ((np.asarray(index.flags) >> FLAG_FIELDS.index("is_instance")) & 1).astype(bool)
        head_counts = np.bincount(head[instance & (head >= 0)], minlength=len(catalog.constant_names))
        ranked = [catalog.constant_names[i] for i in np.argsort(-head_counts)[:200] if head_counts[i]]
    return [ranked[i % len(ranked)] for i in range(queries)] if ranked else []


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
    # Only flags the catalog's source records (doc-gen4 output has no `deprecated`): a filter on
    # another is refused (`not_recorded`), not an answer to time.
    absent = set(catalog.manifest.source.absent_facts)
    flag_queries = [
        (flags, _matched_kind(index, flags, kind))
        for flags, kind in (({"instance": True}, "definition"), ({"class": True}, "theorem"), ({"deprecated": True, "instance": False}, "inductive"))
        if not any(flag_fact(SEARCH_FLAGS[key]) in absent for key in flags)
    ]
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
        "flag_filter": [SearchRequest(environment=env, flags=flags, kinds=[kind]) for flags, kind in (flag_queries[i % len(flag_queries)] for i in range(queries))],
        "name_two_fragments_ci": [
            SearchRequest(environment=env, name_contains=[common_substrings[i % 4].upper(), common_substrings[4 + i % 4]], case_sensitive=False)
            for i in range(queries)
        ],
    }
    conclusion_counts = np.diff(np.asarray(index.conclusion_postings_offsets))
    value_counts = np.diff(np.asarray(index.value_postings_offsets))
    if conclusion_counts.sum():
        in_conclusions = [catalog.constant_names[i] for i in np.argsort(-conclusion_counts)[:200]]
        classes["conclusion"] = [SearchRequest(environment=env, type_pattern={"conclusion": [in_conclusions[i % len(in_conclusions)]]}) for i in range(queries)]
        drawn = _instance_classes(catalog, queries)
        if drawn:
            classes["instances_of"] = [SearchRequest(environment=env, instances_of=c) for c in drawn]
    if value_counts.sum():
        used = [catalog.constant_names[i] for i in np.argsort(-value_counts)[:200]]
        classes["uses_constants"] = [SearchRequest(environment=env, uses_constants=[used[i % len(used)]]) for i in range(queries)]
    return classes


def _timed(call) -> tuple[float, object]:
    """(milliseconds `call()` took, its answer)."""
    start = time.perf_counter()
    answer = call()
    return (time.perf_counter() - start) * 1000, answer


def _first_pass(engine: Engine, classes: dict[str, list[SearchRequest]]) -> dict:
    """Every query answered once by the engine alone, in class order: the latency of meeting
    each query first (whatever the engine builds on first use included), and the totals."""
    out: dict[str, dict] = {}
    for label, requests in classes.items():
        samples, totals = [], []
        for r in requests:
            elapsed, response = _timed(lambda r=r: engine.search(r))
            samples.append(elapsed)
            totals.append(response.total_matches)
        first = _percentiles(samples)
        out[label] = {"first_pass_p50_ms": first["p50_ms"], "first_pass_p99_ms": first["p99_ms"], "totals": totals}
    return out


def _second_pass(engine: Engine, classes: dict[str, list[SearchRequest]], first: dict, baselines: dict[str, Baseline | DuckdbBaseline], sample: int) -> dict:
    """Every query again, timed (p50/p95/p99); every `len / sample`-th one also answered right
    after by each baseline, whose count must equal the engine's total. Engine and baselines
    thus run alternately on the same queries, and each ratio is the baseline's median over the
    sampled queries / the engine's median over the same queries."""
    out: dict[str, dict] = {}
    for label, requests in classes.items():
        step = max(1, len(requests) // max(sample, 1))
        samples: list[float] = []
        sampled_engine: list[float] = []
        sampled: dict[str, list[float]] = {key: [] for key in baselines}
        for i, r in enumerate(requests):
            elapsed, response = _timed(lambda r=r: engine.search(r))
            samples.append(elapsed)
            if response.total_matches != first[label]["totals"][i]:
                raise SystemExit(f"the engine's total changed between passes on {r.model_dump(exclude_none=True)}")
            if i % step or len(sampled_engine) >= sample:
                continue
            sampled_engine.append(elapsed)
            for key, baseline in baselines.items():
                took, count = _timed(lambda r=r, baseline=baseline: baseline.count(r))
                if count != response.total_matches:
                    raise SystemExit(f"{key} disagrees on {r.model_dump(exclude_none=True)}: {count} != {response.total_matches}")
                sampled[key].append(took)
        median_total = statistics.median(first[label]["totals"])
        row = _percentiles(samples) | {"median_total_matches": median_total, "empty_median": median_total == 0}
        row |= {k: v for k, v in first[label].items() if k != "totals"}
        if sampled_engine:
            row["engine_sample_p50_ms"] = statistics.median(sampled_engine)
            row["baseline_sample"] = len(sampled_engine)
            for key, took in sampled.items():
                row[f"{key}_p50_ms"] = statistics.median(took)
                row[f"speedup_vs_{key}"] = row[f"{key}_p50_ms"] / max(row["engine_sample_p50_ms"], 1e-6)
        out[label] = row
    return out


def _time_classes(engine: Engine, profile: str, classes: dict[str, list[SearchRequest]], parquet: Path, sample: int) -> tuple[dict, float]:
    """Both passes over `classes`, cursor continuations and inspect; returns the per-class
    figures and the process's peak RSS (MiB) after the first pass, before the baselines load."""
    first = _first_pass(engine, classes)
    serving_rss = _peak_rss_mb()
    table = Baseline(parquet)
    baselines = {"baseline": table, "duckdb": DuckdbBaseline(parquet, table.classes)}
    out = _second_pass(engine, classes, first, baselines, sample)
    cursor_samples = []
    for r in classes["name_common"][:50]:
        first_page = engine.search(r.model_copy(update={"result_limit": 20}))
        cursor = first_page.next_cursor
        for _ in range(4):
            if cursor is None:
                break
            elapsed, page = _timed(lambda r=r, cursor=cursor: engine.search(r.model_copy(update={"result_limit": 20, "after": cursor})))
            cursor_samples.append(elapsed)
            cursor = page.next_cursor
    out["cursor_continuation"] = _percentiles(cursor_samples)
    catalog = engine.catalog(profile)
    names = catalog.all_names()
    rng = np.random.default_rng(3)
    inspect_samples = []
    for i in rng.choice(len(names), 400):
        request = InspectRequest(environment=profile, declaration_name=names[int(i)])
        inspect_samples.append(_timed(lambda request=request: engine.inspect(request))[0])
    out["inspect"] = _percentiles(inspect_samples)
    return out, serving_rss


def engine_count(root: Path, profile: str) -> int:
    """Declarations in a built catalog, from its manifest."""
    return json.loads((root / "manifests" / f"{profile}.json").read_text())["catalog"]["declaration_count"]


def _print(title: str, results: dict) -> None:
    print(f"\n== {title}")
    print("(ratios: a baseline's median / the engine's median over the same sampled queries, timed alternately)")
    print(f"{'class':22} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'base p50':>9} {'ratio':>7} {'duck p50':>9} {'ratio':>7} {'matches':>8}")
    for label, e in results.items():
        cells = []
        for key in ("baseline", "duckdb"):
            cells.append(f"{e[f'{key}_p50_ms']:9.1f}" if f"{key}_p50_ms" in e else f"{'':9}")
            cells.append(f"{e[f'speedup_vs_{key}']:6.0f}x" if f"speedup_vs_{key}" in e else f"{'':7}")
        total = f"{e.get('median_total_matches', ''):>8}" + ("  (median query matches nothing)" if e.get("empty_median") else "")
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
    parser.add_argument("--baseline-sample", type=int, default=15, help="Queries per class also answered by each baseline.")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"Where to write the JSON (default: {RESULTS.relative_to(RESULTS.parents[2])}).")
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
        parquet = root / "catalog" / "synthetic" / "declarations.parquet"
        report["synthetic"], report["serving_peak_rss_mb"] = _time_classes(engine, "synthetic", classes, parquet, args.baseline_sample)
        engine.close()
        _print(f"synthetic catalog, {engine_count(root, 'synthetic'):,} declarations", report["synthetic"])
        print(f"serving process peak RSS (engine, every query once, before the baselines load): {report['serving_peak_rss_mb']:.0f} MB")
        if args.mathlib_archive:
            imported = _in_child(_import_child, str(root), "mathlib", str(args.mathlib_archive))
            imported["records_per_second"] = imported["count"] / imported["seconds"]
            report["mathlib_import"] = imported
            print(f"\nMathlib doc-gen4 import: {imported['count']:,} records in {imported['seconds']:.1f} s, peak RSS {imported['peak_rss_mb']:.0f} MB")
            engine = Engine(root)
            classes = _query_classes(engine, "mathlib", args.queries, seed=12)
            report["mathlib"], _ = _time_classes(engine, "mathlib", classes, root / "catalog" / "mathlib" / "declarations.parquet", args.baseline_sample)
            engine.close()
            _print(f"Mathlib (doc-gen4, {imported['count']:,} declarations)", report["mathlib"])
    report["run"] = runinfo.run_info()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
