"""How `engine.textrank`'s weights were chosen: coordinate search on the tuning half only.

    python benchmarks/nl_tune.py --root DIR [--profile mathlib] [--rounds 3]

Starts from `textrank.DEFAULT` and, weight by weight, tries it scaled by each of `FACTORS`
(a weight at 0 is tried at each factor of 1), keeping a change only when the tuning half's mean
nDCG@10 (`nl_bench.ndcg`) rises by more than 0.001; prints the best weights found and their
score on both halves. The test half (`questions-b.jsonl`) is scored once at the end, never
used to choose. Each question's terms (`textrank.features`) are computed once: a trial only
sums them with other weights.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import fields, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "py"))

import nl_bench  # noqa: E402
from leanindex.catalog.layout import CatalogPaths  # noqa: E402
from leanindex.engine import relevance, textrank  # noqa: E402
from leanindex.engine.loaded import LoadedCatalog  # noqa: E402
from leanindex.models import SearchRequest  # noqa: E402

FACTORS = (0.0, 0.25, 0.5, 0.75, 1.5, 2.0, 3.0, 5.0)


class Prepared:
    """One question read once: its query, match set, static sort keys and the score's terms
    (`textrank.features`, which do not depend on the weights)."""

    def __init__(self, catalog: LoadedCatalog, question: dict):
        self.gold = question["gold"]
        self.query = textrank.TextQuery.read(catalog.text, catalog.index, question["query"])
        self.positions = textrank.match_set(catalog.text, self.query, "any")
        self.keys = relevance.sort_keys(catalog.index, SearchRequest(environment="x", text=question["query"]), self.positions)
        self.features = textrank.features(catalog.text, catalog.index, self.query, self.positions) if len(self.positions) else {}


def score(catalog: LoadedCatalog, prepared: list[Prepared], weights: textrank.Weights, names: dict[int, str]) -> float:
    """Mean nDCG@10 of `prepared` with `weights` (`names`: position -> name, filled as read)."""
    values = []
    for p in prepared:
        if not len(p.positions):
            values.append(0.0)
            continue
        chosen, _ = relevance.scored_page(p.keys, textrank.combine(p.features, weights), -1, nl_bench.K)
        top = [int(x) for x in p.positions[chosen]]
        if any(x not in names for x in top):
            names.update({pos: row["name"] for pos, row in catalog.index.result_rows(p.positions[chosen]).items()})
        values.append(nl_bench.ndcg([names[x] for x in top], p.gold))
    return statistics.fmean(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--profile", default="mathlib")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    catalog = LoadedCatalog.open(CatalogPaths(args.root, args.profile))
    questions = nl_bench.load_questions()
    tune = [Prepared(catalog, q) for q in questions if q["split"] == "tune"]
    test = [Prepared(catalog, q) for q in questions if q["split"] == "test"]
    names: dict[int, str] = {}
    best = textrank.DEFAULT
    best_score = score(catalog, tune, best, names)
    print(f"start: tune {best_score:.4f}")
    scalar = [f.name for f in fields(textrank.Weights) if f.name != "fields"]
    for _ in range(args.rounds):
        for name in [*scalar, *(f"fields.{f}" for f in best.fields)]:
            for factor in FACTORS:
                if name.startswith("fields."):
                    key = name.split(".", 1)[1]
                    trial = replace(best, fields={**best.fields, key: (best.fields[key] or 1.0) * factor})
                else:
                    trial = replace(best, **{name: (getattr(best, name) or 1.0) * factor})
                value = score(catalog, tune, trial, names)
                if value > best_score + 0.001:
                    best, best_score = trial, value
                    print(f"{name} x{factor}: tune {value:.4f}")
    print(f"best weights: {best}")
    print(f"tune {best_score:.4f}, test {score(catalog, test, best, names):.4f} (default: test {score(catalog, test, textrank.DEFAULT, names):.4f})")


if __name__ == "__main__":
    main()
