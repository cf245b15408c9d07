"""Batch look-ups (issue 30, item 4): one call for 100 names against 100 single inspects.

Two seeded mixes of 100 names (`MIXES`): `citations`, what an agent checking its citations might
send: 80 visible names of the catalog, 10 typos of catalog names (the last letter changed: not
found, answered with close names) and 10 linked names of modules the catalog lacks
(`missing_module`; fewer when the catalog records fewer, typos filling in); `all_found`: 100
visible names. Each round times, on one verified catalog:

- `exists`: one `Engine.exists` call for the 100 names (the name index, no record read);
- `inspect_many`: one `Engine.inspect_many` call (every record read);
- `single_inspect`: 100 `Engine.inspect` calls (a refusal caught, as a client would);

and the same three through `Client.local` (the served tools: validation, call gate, event loop
thread), where `single_inspect` is 100 tool calls. A warm-up round runs first (the first
suggestion loads the catalog's names). Reports the median and spread of each in ms, and the
ratio of 100 single inspects to one batch call measured in the same run.

Run (a root holding the catalog, e.g. `leanindex demo --root DIR` for the shipped core catalog):
    .venv/bin/python benchmarks/exists_bench.py --root DIR [--profile ID] [--rounds 15]
Writes benchmarks/results/exists.json (or --out), with the run's date, commit and load (`runinfo.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from leanindex.client import Client
from leanindex.embedded import EMBEDDED_PROFILE
from leanindex.engine import Engine
from leanindex.errors import LeanIndexError
from leanindex.models import ExistsRequest, InspectManyRequest, InspectRequest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import runinfo  # noqa: E402  (at the start: it records the run's start)

#: The mixes of 100 names timed: (existing, typos, linked names of missing modules) wanted.
MIXES = {"citations": (80, 10, 10), "all_found": (100, 0, 0)}


def names_to_check(engine: Engine, profile: str, seed: int, wanted: tuple[int, int, int]) -> tuple[list[str], dict[str, int]]:
    """100 names mixed as `wanted` (see the module docstring), shuffled, and how many of each."""
    rng = random.Random(seed)
    with engine.lease(profile) as loaded:
        hidden = loaded.index.hidden
        visible = [name for position, name in enumerate(loaded.all_names()) if not hidden[position]]
        linked = sorted(name for gap in loaded.manifest.gaps.missing_modules for name in gap.linked_names)
    existing = rng.sample(visible, wanted[0])
    of_missing = rng.sample(linked, min(wanted[2], len(linked)))
    known = set(visible) | set(linked)
    typos = [typo for typo in (name[:-1] + ("q" if name[-1] != "q" else "z") for name in rng.sample(visible, 200)) if typo not in known]
    typos = typos[: 100 - len(existing) - len(of_missing)]
    names = existing + typos + of_missing
    rng.shuffle(names)
    return names, {"existing": len(existing), "typos": len(typos), "missing_module": len(of_missing)}


def timed(call: Callable[[], object], rounds: int) -> dict[str, float]:
    """Median, min and max wall ms of `call` over `rounds` runs."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(samples), 2), "min_ms": round(min(samples), 2), "max_ms": round(max(samples), 2), "n": rounds}


def calls_for(engine: Engine, client: Client, environment: str, names: list[str]) -> dict[str, dict[str, Callable[[], object]]]:
    """The three calls timed, per surface, for `names`."""
    return {
        "engine": {
            "exists": lambda: engine.exists(ExistsRequest(environment=environment, names=names)),
            "inspect_many": lambda: engine.inspect_many(InspectManyRequest(environment=environment, names=names)),
            "single_inspect": lambda: singles(lambda n: engine.inspect(InspectRequest(environment=environment, declaration_name=n)), names),
        },
        "client_local": {
            "exists": lambda: client.exists(environment, names),
            "inspect_many": lambda: client.inspect_many(environment, names),
            "single_inspect": lambda: singles(lambda n: client.inspect(environment, n), names),
        },
    }


def singles(inspect_one: Callable[[str], object], names: list[str]) -> None:
    """One inspect per name, a refusal counting as an answer."""
    for name in names:
        try:
            inspect_one(name)
        except LeanIndexError:
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="Folder holding catalog/ and manifests/.")
    parser.add_argument("--profile", default=EMBEDDED_PROFILE, help="Default: the shipped core catalog's profile.")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "exists.json"))
    args = parser.parse_args()

    engine = Engine(args.root)
    client = Client.local(args.root)
    environment = args.profile
    report: dict[str, object] = {
        "rounds": args.rounds,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "mixes": {},
    }
    for mix, wanted in MIXES.items():
        names, parts = names_to_check(engine, environment, args.seed, wanted)
        calls = calls_for(engine, client, environment, names)
        answer = engine.exists(ExistsRequest(environment=environment, names=names))
        for warm_up in calls.values():  # names loaded, name tables built
            for call in warm_up.values():
                call()
        report["catalog"] = {"profile": answer.environment, "environment_digest": answer.environment_digest, "source": answer.source}
        figures_of: dict[str, object] = {"names": parts, "answers": answer.counts}
        print(f"{answer.environment} {mix}: 100 names {parts}; answers {answer.counts}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
        print(f"{'surface':<14}{'exists':>12}{'inspect_many':>14}{'100 singles':>13}{'singles/exists':>16}{'singles/many':>14}")
        for surface, surface_calls in calls.items():
            figures = {label: timed(call, args.rounds) for label, call in surface_calls.items()}
            single = figures["single_inspect"]["median_ms"]
            ratios = {
                "single_over_exists": round(single / figures["exists"]["median_ms"], 1),
                "single_over_inspect_many": round(single / figures["inspect_many"]["median_ms"], 2),
            }
            figures_of[surface] = {**figures, **ratios}
            print(
                f"{surface:<14}{figures['exists']['median_ms']:>10.1f}ms{figures['inspect_many']['median_ms']:>12.1f}ms"
                f"{single:>11.1f}ms{ratios['single_over_exists']:>16.1f}{ratios['single_over_inspect_many']:>14.2f}"
            )
        report["mixes"][mix] = figures_of  # type: ignore[index]
    report["run"] = runinfo.run_info()
    client.close()
    engine.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
