"""Another version's text search on the NL questions: each question's top 10, for `nl_bench.py
--baseline` to score in its table beside the current methods.

    git worktree add /tmp/before c3f8f55      # the version to compare with
    python benchmarks/nl_baseline.py --code /tmp/before/py --root OLDROOT --out before.json

`--code` is the `py` folder of that version's checkout (imported instead of this one), `OLDROOT`
a root holding that version's catalog of the same archive (`leanindex catalog import-docgen` run
with that version), `--out` a JSON object: question id -> the names of its top 10 in order. A
question the version refuses (an error answer) gets an empty list.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, required=True)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--profile", default="mathlib")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    from leanindex.engine import Engine
    from leanindex.errors import LeanIndexError
    from leanindex.models import SearchRequest

    engine = Engine(args.root)
    top: dict[str, list[str]] = {}
    for path in sorted((HERE / "nl").glob("questions-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            question = json.loads(line)
            try:
                answer = engine.search(SearchRequest(environment=args.profile, text=question["query"], result_limit=10))
                top[question["id"]] = [r.name for r in answer.results]
            except LeanIndexError:
                top[question["id"]] = []
    args.out.write_text(json.dumps(top, ensure_ascii=False), encoding="utf-8")
    print(f"{len(top)} questions answered by the code at {args.code}")


if __name__ == "__main__":
    main()
