"""`leanindex check-batch IN.jsonl --out OUT.jsonl`: Lean's verdicts on many requests, one JSON
line each in and out, with a progress bar, resumable; and the `--ray` options it shares with
`leanindex serve` and `leanindex mcp`.

Input lines are `BatchItem`s (`{"id", "environment", "code", ...}`; `environment` defaults to
`-e`, `timeout_s` to `--timeout`); output lines are `BatchResult`s (`{"id", "response"}` or
`{"id", "error"}`), appended in completion order (see `leanindex.checker.batchfile`). Ids
already in OUT are skipped, so rerunning the same command after a kill finishes the work.

Exit status: 0 every request answered with a verdict (whatever it is), 19 every request answered
but OUT holds some tool errors (`timeout`, `busy`, `backend_error`, `invalid_request`, ...: the
lines' `error`, from this run or an earlier one); a failure of the run itself exits with its code's `EXIT_STATUS` (3 a malformed
input line, a repeated id, or an OUT that is not a results file; 11 backend error, ...) after
writing every result it has; 2 is a usage error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..codes import OUTCOME_EXIT, Outcome
from . import main
from .check import checker_config, checker_options, run_once
from .output import emit_json, handles_errors, stderr
from .progress import batch_progress
from .shown import ON_ACTOR_DEATH

if TYPE_CHECKING:
    from ..checker import CheckerConfig
    from ..checker.backend import CheckerBackend
    from ..checker.checker import CloseNames
    from ..checker.cluster import ActorDeathPolicy

ray_options = [
    click.option("--ray", "ray_address", default=None, metavar="auto|ADDRESS", help="Check on a Ray cluster: `auto` (RAY_ADDRESS, else a cluster started on this machine, else a new local one) or the cluster's address (needs leanindex[ray])."),
    click.option("--ray-actors", type=click.IntRange(1, 10_000), default=2, show_default=True, help="Checker actors on the cluster, each with its own warm REPLs."),
    click.option("--ray-actor-cpus", type=click.FloatRange(min=0), default=None, help="CPUs each actor reserves (default: its REPLs per profile)."),
    click.option("--ray-actor-memory-mb", type=click.IntRange(min=1), default=None, help="Memory each actor reserves in MiB (a Mathlib REPL needs about 9 GiB)."),
    click.option("--on-actor-death", type=click.Choice(ON_ACTOR_DEATH), default="retry", show_default=True, help="A check whose actor died: retried once on another actor, or answered backend_error."),
]


def with_ray_options(command):
    """Add the `--ray` options to a command."""
    for option in reversed(ray_options):
        command = option(command)
    return command


def checker_backend(
    configs: Sequence[CheckerConfig],
    *,
    root: str | Path,
    close_names: CloseNames,
    ray_address: str | None,
    ray_actors: int,
    ray_actor_cpus: float | None,
    ray_actor_memory_mb: int | None,
    on_actor_death: ActorDeathPolicy,
) -> CheckerBackend:
    """The local `Checker` for `configs` (unknown-name suggestions from `close_names`, the
    catalogs' `Engine.close_names`), or with `ray_address` the Ray front
    (`leanindex.checker.cluster.RayChecker`) whose actors each own one such checker, with the
    suggestions of the catalogs under `root` on the actor's node."""
    # The checker stack (and Ray's front) loads when a command runs, not for its --help.
    from ..checker import Checker
    from ..checker.cluster import RayChecker, RaySettings

    if ray_address is None:
        return Checker(configs, close_names=close_names)
    settings = RaySettings(
        address=ray_address, actors=ray_actors, actor_cpus=ray_actor_cpus, actor_memory_mb=ray_actor_memory_mb, on_actor_death=on_actor_death
    )
    return RayChecker(configs, settings, catalog_root=root)


@main.command("check-batch")
@click.argument("source", type=click.Path(allow_dash=True, dir_okay=False, path_type=str))
@click.option("--out", "-o", "out", required=True, type=click.Path(dir_okay=False, path_type=str), help="Results file (JSON lines), appended to; ids already in it are skipped.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True, help="Warm REPLs per profile (per actor with --ray).")
@click.option("--max-in-flight", type=click.IntRange(min=1), default=None, help="Requests checked at once (default: twice the REPLs).")
@click.option("--progress/--no-progress", "show_progress", default=None, help="Draw the progress bar on stderr (default: on a terminal).")
@with_ray_options
@checker_options
@handles_errors()
def check_batch(
    source: str,
    out: str,
    workers: int,
    max_in_flight: int | None,
    show_progress: bool | None,
    timeout_s: float | None,
    as_json: bool,
    ray_address: str | None,
    ray_actors: int,
    ray_actor_cpus: float | None,
    ray_actor_memory_mb: int | None,
    on_actor_death: ActorDeathPolicy,
    **shared: Any,
) -> None:
    """Check every request of SOURCE (JSON lines, - for stdin) against ENVIRONMENT's warm REPLs
    (or a Ray cluster's), appending one result line per request to OUT as checks complete.
    Requests whose id is already in OUT are skipped: rerun after a kill to finish."""
    from ..checker.batch import ending
    from ..checker.batchfile import BatchRunReport, RequestReader, ResultLog, count_lines
    from ..engine import Engine

    config = checker_config(**shared).model_copy(update={"workers": workers, "cache_entries": 1024})
    engine = Engine(shared["root"])
    checker = checker_backend(
        [config], root=shared["root"], close_names=engine.close_names, ray_address=ray_address, ray_actors=ray_actors,
        ray_actor_cpus=ray_actor_cpus, ray_actor_memory_mb=ray_actor_memory_mb, on_actor_death=on_actor_death,
    )
    total = count_lines(source)
    counts: Counter[str] = Counter({"accepted": 0, "incomplete": 0, "rejected": 0, "error": 0})
    with closing(engine), ResultLog(out, source) as log, batch_progress(total, show_progress) as advance:
        reader = RequestReader(
            source, log.done, environment=shared["environment"], timeout_s=timeout_s, on_skip=(lambda: advance(False)) if advance else None
        )

        async def run() -> None:
            await checker.start()
            try:
                async for result in checker.check_stream(reader, max_in_flight):
                    log.write(result)
                    counts[ending(result)] += 1
                    if advance is not None:
                        advance(True)
            finally:
                await checker.close()

        import asyncio  # ~20 ms: not for `--help`

        run_once(lambda: asyncio.run(run()))
    report = BatchRunReport(
        out=out, answered=sum(counts.values()), skipped=reader.skipped, repaired_bytes=log.repaired_bytes, counts=dict(counts),
        out_errors=log.errors,
    )
    if as_json:
        emit_json(report)
    else:
        stderr.print(
            f"{report.answered} answered ({counts['accepted']} accepted, {counts['incomplete']} incomplete, "
            f"{counts['rejected']} rejected, {counts['error']} errors); {report.skipped} already in {out}, "
            f"which holds {report.out_errors} errors"
            + (f"; removed a cut-short last line ({report.repaired_bytes} bytes)" if report.repaired_bytes else ""),
            markup=False,
        )
    raise SystemExit(OUTCOME_EXIT[Outcome.ITEM_ERRORS] if report.out_errors else OUTCOME_EXIT[Outcome.OK])
