"""Quality of text search on questions people ask: nDCG@10 and recall@10 per question style.

    python benchmarks/nl_bench.py --archive …/docgen-mathlib-0cc1f97.tar.xz --work DIR [--json benchmarks/results/nl.json]
    python benchmarks/nl_bench.py --root DIR [--profile mathlib]

With `--archive`, the run imports the archive into `DIR` (`leanindex catalog import-docgen`,
timed: wall and CPU seconds, worker processes included) and times the text index alone on the
same records, as the import builds it (`catalog.text.write_text_index` into a scratch folder),
so the share the text index adds to the import is measured in one run; with `--root`, it uses a catalog already
there (`DIR/catalog/mathlib`) and reports no build figures. The questions are
`benchmarks/nl/questions-a.jsonl` (the tuning half: the ranking's weights were chosen on it)
and `questions-b.jsonl` (the test half: written by another person on other areas, never used
to choose anything), each line `{"id", "style", "query", "gold": [names], "area"}`, written by
hand without reading the docstrings they are matched against; every gold name is checked to
exist in the catalog before a run (a missing one stops the run).

Methods, each run on every question in the same process:

- `before` (with `--baseline FILE`): another version's answers, e.g. the text search before
  issue 29 (`nl_baseline.py` runs that version's engine on its own catalog of the same archive);
- `all-words`: `text_match: "all"` (every word must occur), the shipped score;
- `any-bm25f`: any word, BM25 per field only (`BM25F`);
- `+names`: the shipped score without its nickname, popularity and theorem terms
  (`WITH_NAMES`): coordination, names, concepts and formulas on BM25F;
- `shipped`: the engine's defaults (`engine.textrank.DEFAULT`), as every surface answers.

Gains are binary (a gold name in the top 10); a gold name counts once; the ideal DCG has
min(len(gold), 10) hits. Latency is the engine's `search` call for the shipped method (p50,
p99 over every question, ms).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "py"))

import runinfo  # noqa: E402  (at the start: it records the run's start)
from leanindex.catalog.layout import DECLARATIONS_FILE, CatalogPaths  # noqa: E402
from leanindex.catalog.text import TEXT_FILES, write_text_index  # noqa: E402
from leanindex.docgen.importer import import_docgen  # noqa: E402
from leanindex.engine import relevance, textrank  # noqa: E402
from leanindex.engine.loaded import LoadedCatalog  # noqa: E402
from leanindex.engine.search import search  # noqa: E402
from leanindex.models import SearchRequest  # noqa: E402

QUESTION_FILES = {"tune": HERE / "nl" / "questions-a.jsonl", "test": HERE / "nl" / "questions-b.jsonl"}
STYLES = ("lean", "latex", "english", "slogan", "nickname")
K = 10


def load_questions() -> list[dict]:
    """Every question, with its half (`split`) added."""
    questions = []
    for split, path in QUESTION_FILES.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                question = json.loads(line)
                question["split"] = split
                questions.append(question)
    return questions


def ndcg(ranked: list[str], gold: list[str]) -> float:
    """nDCG@K with binary gains, each gold name counted once."""
    wanted = set(gold)
    dcg = sum(1 / math.log2(i + 2) for i, name in enumerate(ranked[:K]) if name in wanted)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(wanted), K)))
    return dcg / ideal


def recall(ranked: list[str], gold: list[str]) -> float:
    """Share of gold names in the top K."""
    return len(set(ranked[:K]) & set(gold)) / len(set(gold))


#: BM25 per field alone (no coordination, name, concept, formula, theorem, nickname or
#: popularity term), with the shipped field weights, the docstring's at 1 where it is 0.
BM25F = replace(
    textrank.DEFAULT,
    fields={f: w or 1.0 for f, w in textrank.DEFAULT.fields.items()},
    coordination=0, name_cover=0, contained=0, namespace_extra=0, concept=0, nickname=0, popularity=0,
    formula_statement=0, formula_conclusion=0, theorem=0,
)
#: BM25F with the terms that read names and formulas (no nickname, popularity or theorem term).
WITH_NAMES = replace(textrank.DEFAULT, nickname=0, popularity=0, theorem=0)


def ranked_names(catalog: LoadedCatalog, text: str, match: str, weights: textrank.Weights) -> list[str]:
    """The top K names for `text` with `weights`: the engine's match set and score, ties by the
    relevance rule, as `engine.search` orders them."""
    index, text_index = catalog.index, catalog.text
    query = textrank.TextQuery.read(text_index, index, text)
    positions = textrank.match_set(text_index, query, match)
    if not len(positions):
        return []
    request = SearchRequest(environment="x", text=text)
    keys = relevance.sort_keys(index, request, positions)
    chosen, _ = relevance.scored_page(keys, textrank.scores(text_index, index, query, positions, weights), -1, K)
    rows = index.result_rows(positions[chosen])
    return [rows[int(p)]["name"] for p in positions[chosen]]


def write_candidates(catalog: LoadedCatalog, questions: list[dict], path: Path, k: int = 50) -> None:
    """Each question's top `k` in the shipped order, one JSON line per question: its id,
    style, split, query, gold and `candidates` (name, and a text of name, type and the first
    300 characters of the docstring), the input `nl_models.py eval` reranks."""
    docs = pq.read_table(catalog.paths.catalog_dir / DECLARATIONS_FILE, columns=["doc"]).column("doc").to_pylist()
    with path.open("w", encoding="utf-8") as out:
        for q in questions:
            answer = search(catalog, SearchRequest(environment="x", text=q["query"], result_limit=k))
            candidates = []
            for r in answer.results:
                doc = docs[catalog.index.position_of(r.name)]
                candidates.append({"name": r.name, "text": f"{r.name} : {r.type}" + (f" -- {doc[:300]}" if doc else "")})
            out.write(json.dumps({**{key: q[key] for key in ("id", "style", "split", "query", "gold")}, "candidates": candidates}, ensure_ascii=False) + "\n")


def _cpu() -> float:
    """CPU seconds (user + system) of this process and of its finished children (the import's
    and the text index's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build_figures(archive: Path, work: Path, profile: str) -> dict[str, float]:
    """Import `archive` into `work` and time it (wall and CPU seconds, workers included), then
    time the text index alone on the same records, as the import builds it; sizes in MiB."""
    wall, cpu = time.perf_counter(), _cpu()
    import_docgen(archive, work, profile)
    import_wall, import_cpu = time.perf_counter() - wall, _cpu() - cpu
    catalog_dir = CatalogPaths(work, profile).catalog_dir
    text_bytes = sum((catalog_dir / f).stat().st_size for f in TEXT_FILES)
    catalog_bytes = sum(f.stat().st_size for f in catalog_dir.rglob("*") if f.is_file())
    with tempfile.TemporaryDirectory(prefix="nl-text-") as scratch:
        os.symlink(catalog_dir / DECLARATIONS_FILE, Path(scratch) / DECLARATIONS_FILE)
        wall, cpu = time.perf_counter(), _cpu()
        write_text_index(Path(scratch))
        text_wall, text_cpu = time.perf_counter() - wall, _cpu() - cpu
        shutil.rmtree(Path(scratch) / "index")
    return {
        "import_wall_s": import_wall,
        "import_cpu_s": import_cpu,
        "text_wall_s": text_wall,
        "text_cpu_s": text_cpu,
        "text_share_wall": text_wall / (import_wall - text_wall),
        "text_share_cpu": text_cpu / (import_cpu - text_cpu),
        "text_mib": text_bytes / 2**20,
        "catalog_mib": catalog_bytes / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="a folder with the catalog already imported")
    parser.add_argument("--archive", type=Path, help="the Mathlib doc-gen4 archive to import into --work")
    parser.add_argument("--work", type=Path, help="an empty folder for --archive's import")
    parser.add_argument("--profile", default="mathlib")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--split", choices=("tune", "test", "both"), default="both")
    parser.add_argument("--candidates", type=Path, help="write each question's top 50 with their texts (for nl_models.py eval)")
    parser.add_argument("--baseline", type=Path, help="another version's top 10 per question (`nl_baseline.py --out`), scored as `before`")
    args = parser.parse_args()
    build: dict[str, float] = {}
    if args.archive:
        if not args.work:
            parser.error("--archive needs --work")
        args.root = args.work
        build = build_figures(args.archive, args.work, args.profile)
    elif not args.root:
        parser.error("give --root or --archive")
    catalog = LoadedCatalog.open(CatalogPaths(args.root, args.profile))
    questions = [q for q in load_questions() if args.split == "both" or q["split"] == args.split]
    absent = sorted({g for q in questions for g in q["gold"] if catalog.index.position_of(g) is None})
    if absent:
        raise SystemExit(f"gold names not in the catalog: {absent}")
    before = json.loads(args.baseline.read_text(encoding="utf-8")) if args.baseline else None
    methods = {
        **({"before": lambda t: before_top[t]} if before is not None else {}),
        "all-words": lambda t: ranked_names(catalog, t, "all", textrank.DEFAULT),
        "any-bm25f": lambda t: ranked_names(catalog, t, "any", BM25F),
        "+names": lambda t: ranked_names(catalog, t, "any", WITH_NAMES),
        "shipped": lambda t: [r.name for r in search(catalog, SearchRequest(environment=args.profile, text=t, result_limit=K)).results],
    }
    table: dict[str, dict[str, dict[str, float]]] = {}
    latencies: list[float] = []
    per_question: dict[str, dict[str, list[str]]] = {}
    before_top = {q["query"]: (before or {}).get(q["id"], []) for q in questions}
    for method, run in methods.items():
        scores: dict[str, list[tuple[float, float]]] = {}
        for q in questions:
            started = time.perf_counter()
            ranked = run(q["query"])
            if method == "shipped":
                latencies.append((time.perf_counter() - started) * 1000)
            per_question.setdefault(q["id"], {})[method] = ranked[:K]
            pair = (ndcg(ranked, q["gold"]), recall(ranked, q["gold"]))
            for group in ("all", q["split"], q["style"], f"{q['split']}:{q['style']}"):
                scores.setdefault(group, []).append(pair)
        table[method] = {g: {"ndcg": statistics.fmean(p[0] for p in v), "recall": statistics.fmean(p[1] for p in v), "n": len(v)} for g, v in scores.items()}
    groups = ["all", "tune", "test", *STYLES]
    print(f"{'method':<12}" + "".join(f"{g:>10}" for g in groups))
    for method, row in table.items():
        print(f"{method:<12}" + "".join(f"{row[g]['ndcg']:>10.3f}" if g in row else f"{'-':>10}" for g in groups))
    for split in ("tune", "test"):
        print(f"\n{split} half, nDCG@10 per style")
        for method, row in table.items():
            print(f"{method:<12}" + "".join(f"{row[f'{split}:{s}']['ndcg']:>10.3f}" if f"{split}:{s}" in row else f"{'-':>10}" for s in STYLES))
    if args.candidates:
        write_candidates(catalog, questions, args.candidates)
    lat = np.asarray(latencies)
    print(f"\nshipped latency: p50 {np.percentile(lat, 50):.2f} ms, p99 {np.percentile(lat, 99):.2f} ms over {len(lat)} questions")
    if build:
        print(
            f"import {build['import_wall_s']:.1f} s wall, {build['import_cpu_s']:.1f} s CPU; the text index in it "
            f"{build['text_wall_s']:.1f} s wall (+{build['text_share_wall']:.1%} on the rest), {build['text_cpu_s']:.1f} s CPU "
            f"(+{build['text_share_cpu']:.1%}); text index {build['text_mib']:.1f} MiB of a {build['catalog_mib']:.1f} MiB catalog"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "catalog": {"profile": args.profile, "declarations": catalog.index.size},
                    "questions": {s: sum(1 for q in questions if q["split"] == s) for s in ("tune", "test")},
                    "methods": table,
                    "latency_ms": {"p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99)), "n": len(lat)},
                    "build": build,
                    "run": runinfo.run_info(),
                    "per_question": per_question,
                },
                indent=1,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
