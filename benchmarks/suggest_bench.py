"""Cost and quality of unknown-name suggestions (`engine.suggest`) on a real catalog, beside a
brute-force baseline measured in the same run.

The unknown names are made from a seeded sample of the catalog's own visible names, one kind of
mistake per class: `unqualified` (namespace left out: `mul_comm` for `Nat.mul_comm`),
`typo1` / `typo2` (one or two random edits in the last component, of at least 5 characters),
and `absent` (a made-up word no name is close to). Per class: latency p50 / p99 / max of one
diagnostic's look-up, and recall (the intended name among the suggestions; `absent` has none).
The baseline computes the same edit distances against every distinct last component, without
the bigram filter; the answers of both must agree, which the run checks.

Run (the catalog of PROFILE under ROOT, e.g. the Mathlib doc-gen4 import):
    .venv/bin/python benchmarks/suggest_bench.py --root ROOT --profile mathlib [--per-class 300]
Writes benchmarks/results/suggest.json (or --out), with the run's date, commit and load (`runinfo.py`).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import string
import sys
import time
from pathlib import Path

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from leanindex.engine import Engine
from leanindex.engine.suggest import NameTable, _split, max_distance

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import runinfo  # noqa: E402  (at the start: it records the run's start)

CLASSES = ("unqualified", "typo1", "typo2", "absent")


def quantiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
        "max_ms": round(ordered[-1], 3),
        "n": len(ordered),
    }


def _edit(word: str, edits: int, rng: random.Random) -> str:
    """`word` with `edits` random substitutions, insertions or deletions of lower-case letters."""
    for _ in range(edits):
        i = rng.randrange(len(word))
        kind = rng.choice("sid")
        letter = rng.choice(string.ascii_lowercase)
        word = word[:i] + letter + word[i + 1 :] if kind == "s" else word[:i] + letter + word[i:] if kind == "i" else word[:i] + word[i + 1 :]
    return word


def mistakes(table: NameTable, per_class: int, seed: int) -> dict[str, list[tuple[str, str | None]]]:
    """(unknown name, intended name or None) per class, from a seeded sample of visible names."""
    rng = random.Random(seed)
    visible = [p for positions in table.by_last.values() for p in positions]
    rng.shuffle(visible)
    out: dict[str, list[tuple[str, str | None]]] = {c: [] for c in CLASSES}
    for pos in visible:
        name = table.names[pos]
        namespace, last = _split(name)
        if namespace and len(out["unqualified"]) < per_class:
            out["unqualified"].append((last, name))
        elif len(last) >= 5 and len(out["typo1"]) < per_class:
            out["typo1"].append(((namespace + "." if namespace else "") + _edit(last, 1, rng), name))
        elif len(last) >= 8 and len(out["typo2"]) < per_class:
            out["typo2"].append(((namespace + "." if namespace else "") + _edit(last, 2, rng), name))
        if all(len(v) >= per_class for k, v in out.items() if k != "absent"):
            break
    while len(out["absent"]) < per_class:
        word = "".join(rng.choice("qxzjkvw") for _ in range(rng.randint(6, 14)))
        out["absent"].append((word, None))
    return out


def brute_close(table: NameTable, last: str) -> set[str]:
    """Last components within `max_distance` of `last`, against every distinct one (baseline)."""
    bound = max_distance(last)
    return {key for key, _d, _i in process.extract(last, table.lasts, scorer=Levenshtein.distance, score_cutoff=bound, limit=None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="Folder holding catalog/ and manifests/.")
    parser.add_argument("--profile", default="mathlib")
    parser.add_argument("--per-class", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "suggest.json"))
    args = parser.parse_args()

    engine = Engine(args.root)
    with engine.lease(args.profile) as loaded:
        started = time.perf_counter()
        names = loaded.all_names()
        loaded_s = time.perf_counter() - started
        started = time.perf_counter()
        table = loaded.name_table()
        build_s = time.perf_counter() - started
        identity = loaded.identity()
    engine.close()

    cases = mistakes(table, args.per_class, args.seed)
    report: dict[str, object] = {
        "catalog": {"profile": identity.environment, "environment_digest": identity.environment_digest, "names": len(names),
                    "visible": int(sum(len(v) for v in table.by_last.values())), "distinct_last_components": len(table.lasts)},
        "names_load_s": round(loaded_s, 3),
        "table_build_s": round(build_s, 3),
        "python": platform.python_version(),
        "classes": {},
    }
    print(f"{identity.environment}: {len(names)} names, {len(table.lasts)} distinct last components; "
          f"names loaded in {loaded_s:.2f} s, name table built in {build_s:.2f} s")
    print(f"{'class':<12}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'recall':>9}{'baseline p50':>14}{'ratio':>8}")
    for kind, pairs in cases.items():
        samples, baseline, hits = [], [], 0
        for unknown, intended in pairs:
            started = time.perf_counter()
            found = table.suggest(unknown)
            samples.append((time.perf_counter() - started) * 1000)
            hits += intended is not None and intended in found
            _namespace, last = _split(unknown)
            started = time.perf_counter()
            expected = brute_close(table, last) if len(last) >= 3 else set()
            baseline.append((time.perf_counter() - started) * 1000)
            filtered = set(table._candidates(last, max_distance(last))) if len(last) >= 3 else set()
            missed = expected - filtered
            assert not missed, f"the bigram filter dropped {sorted(missed)[:5]} for {unknown!r}"
        figures = quantiles(samples)
        base = quantiles(baseline)
        recall = round(hits / len(pairs), 3) if kind != "absent" else None
        ratio = round(figures["p50_ms"] / base["p50_ms"], 3) if base["p50_ms"] else None
        report["classes"][kind] = {**figures, "recall": recall, "baseline_brute_force": base, "p50_ratio_to_baseline": ratio}
        print(f"{kind:<12}{figures['p50_ms']:>9.3f}{figures['p99_ms']:>9.3f}{figures['max_ms']:>9.3f}"
              f"{'-' if recall is None else f'{recall:.3f}':>9}{base['p50_ms']:>14.3f}{'-' if ratio is None else f'{ratio:.3f}':>8}")
    report["run"] = runinfo.run_info()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
