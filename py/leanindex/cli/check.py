"""`leanindex check FILE|-`: Lean's verdict on a complete file, from a warm REPL of a profile;
`leanindex check-target FILE --target NAME --candidate FILE...` (or `--sequential`): verdicts on
replacements for one declaration against the environment before it; `leanindex proof-steps FILE`:
the goals before and after every tactic of a proof (`--tree`: as a tree of goals); `leanindex
audit FILE... [--module-prefix M]`: every declaration of each file with its axioms (for CI).
`check` and `check-target` take `--reference FILE`, a Lean file of theorems whose statements the
submission must keep (the statement fence).

Exit status: 0 `accepted`, 12 `incomplete`, 13 `rejected` (Lean's verdicts, distinct so scripts
can branch on them); a tool failure or refusal exits with its code's `EXIT_STATUS` (3 invalid
request / header mismatch / payload too large, 4 unknown environment, 9 timeout, 10 busy,
11 backend error); 2 is a usage error.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..codes import OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from . import main
from .output import emit_json, handles_errors, json_option, root_option, stdout
from .shown import MAX_TIMEOUT_S

if TYPE_CHECKING:
    from ..checker import Checker, CheckerConfig
    from ..checker.models import Reference, TargetCheckResponse
    from ..engine import Engine

T = TypeVar("T")

#: Exit status per verdict (`checker.models.Verdict`'s values, best first; tool failures use
#: `leanindex.errors.EXIT_STATUS`). Keyed by value so that a command's --help does not load the
#: checker's models.
VERDICT_EXIT: dict[str, int] = {
    "accepted": OUTCOME_EXIT[Outcome.OK],
    "incomplete": OUTCOME_EXIT[Outcome.INCOMPLETE],
    "rejected": OUTCOME_EXIT[Outcome.REJECTED],
}


@contextmanager
def catalog_checker(config: CheckerConfig, root: str) -> Iterator[tuple[Checker, Engine]]:
    """A checker for `config` whose unknown-name diagnostics get suggestions from ROOT's catalog
    of the same profile (`Engine.close_names`), and that engine (for `--include-theorems`);
    the engine is closed on the way out."""
    from ..checker import Checker
    from ..engine import Engine

    engine = Engine(root)
    try:
        yield Checker(config, close_names=engine.close_names), engine
    finally:
        engine.close()


def read_source(source: str, limit: int) -> str:
    """The file `source` (or stdin for `-`) as UTF-8 text, reading at most `limit` + 1 bytes so
    an endless input costs nothing. Raises `LeanIndexError`: `payload_too_large` past `limit`
    bytes, `invalid_request` for a missing file, closed stdin or text that is not UTF-8."""
    try:
        if source == "-":
            if sys.stdin is None:
                raise LeanIndexError(ErrorCode.INVALID_REQUEST, "stdin is closed; give a file or pipe the code in", {})
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(limit + 1)
    except OSError as error:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"cannot read {source}: {error.strerror or error}", {"source": source}) from None
    if len(data) > limit:
        raise LeanIndexError(ErrorCode.PAYLOAD_TOO_LARGE, f"the code is over the limit of {limit} bytes", {"limit": limit})
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"{source} is not UTF-8 text (byte {error.start})", {"source": source}) from None


def _raise_on_term(signum: int, frame: object) -> None:
    # Turn SIGTERM into SystemExit so the checker's close() kills every REPL process group.
    raise SystemExit(128 + signum)


def checker_options(command):
    """The options every checker command takes (profile, project, REPL, limits)."""
    for option in reversed(
        [
            click.option("--environment", "-e", required=True, help="Profile id, e.g. CORE (case-insensitive)."),
            root_option,
            click.option("--project", "project_dir", type=click.Path(file_okay=False), default=".", show_default=True, help="Lake project whose LEAN_PATH resolves the profile's imports."),
            click.option("--lake", "lake_path", default="lake", show_default=True, help="The lake executable that launches the REPL."),
            click.option("--repl", "repl_dir", type=click.Path(file_okay=False), required=True, help="An already built REPL checkout (binary at .lake/build/bin/repl)."),
            click.option("--import", "imports", multiple=True, help="Profile import when ROOT has no manifest for it (repeatable)."),
            click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True, max=MAX_TIMEOUT_S), default=None, help="Per-request timeout in seconds (default 60, max 300)."),
            click.option("--memory-limit-mb", type=click.IntRange(min=64), default=None, help="Address-space limit per REPL in MiB (default 12288)."),
            click.option("--allow-unsafe-commands", is_flag=True, help="Do not refuse commands that can forge a verdict (the answer says it is not protected)."),
            json_option,
        ]
    ):
        command = option(command)
    return command


def checker_config(
    *,
    environment: str,
    root: str,
    project_dir: str,
    lake_path: str,
    repl_dir: str,
    imports: tuple[str, ...],
    memory_limit_mb: int | None,
    allow_unsafe_commands: bool,
) -> CheckerConfig:
    """The one-shot checker's configuration from the options of `checker_options` other than
    `--timeout` and `--json` (no verdict cache: one request per process)."""
    from ..checker import CheckerConfig

    settings: dict[str, object] = {"allow_unsafe_commands": allow_unsafe_commands, "cache_entries": 0}
    if memory_limit_mb is not None:
        settings["memory_limit_mb"] = memory_limit_mb
    return CheckerConfig.for_profile(
        root,
        environment,
        project_dir=project_dir,
        repl_dir=repl_dir,
        lake_path=lake_path,
        imports=list(imports) or None,
        **settings,
    )


def run_once(call: Callable[[], T]) -> T:
    """`call()` with SIGTERM turned into `SystemExit`, so the checker's close() runs."""
    previous = signal.signal(signal.SIGTERM, _raise_on_term)
    try:
        return call()
    finally:
        signal.signal(signal.SIGTERM, previous)


reference_option = click.option(
    "--reference",
    "reference_file",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="A Lean file of theorems whose statements the submission must keep (statement fence).",
)


def read_reference(path: str | None, limit: int) -> Reference | None:
    """The statement fence of `--reference FILE` (None without one); raises as `read_source`,
    and `invalid_request` for an empty file."""
    if path is None:
        return None
    from pydantic import ValidationError

    from ..checker.models import Reference
    from ..validation import invalid_request

    try:
        return Reference(file=read_source(path, limit))
    except ValidationError as error:
        raise invalid_request(error.errors()) from None


@main.command()
@click.argument("source", type=click.Path(allow_dash=True, dir_okay=False, path_type=str))
@reference_option
@checker_options
@handles_errors()
def check(
    source: str,
    reference_file: str | None,
    timeout_s: float | None,
    as_json: bool,
    **shared: Any,
) -> None:
    """Check a complete Lean file (or - for stdin) against ENVIRONMENT's warm REPL; with
    --reference, every theorem of that file must keep its statement."""
    from ..checker import CheckRequest
    from ..render import render_check

    config = checker_config(**shared)
    environment = shared["environment"]
    code = read_source(source, config.max_code_bytes)
    reference = read_reference(reference_file, config.max_code_bytes)
    request = CheckRequest(environment=environment, code=code, timeout_s=timeout_s, reference=reference)
    with catalog_checker(config, shared["root"]) as (checker, _engine):
        response = run_once(lambda: checker.check_sync(request))
    if as_json:
        emit_json(response)
    else:
        stdout.print(render_check(response), markup=False)
    raise SystemExit(VERDICT_EXIT[response.verdict])


#: Verdicts from best to worst, for the exit status of a target check.
_VERDICT_ORDER = tuple(VERDICT_EXIT)


def target_exit(response: TargetCheckResponse) -> int:
    """Exit status of a target check: that of the best candidate's verdict (does any candidate
    work?); of a sequential pass, that of the worst command's verdict (does the whole file?)."""
    ranks = [_VERDICT_ORDER.index(unit.verdict) for unit in response.results]
    rank = min(ranks) if response.mode == "target" else max(ranks)
    return VERDICT_EXIT[_VERDICT_ORDER[rank]]


@main.command("check-target")
@click.argument("source", type=click.Path(allow_dash=True, dir_okay=False, path_type=str))
@click.option("--target", "-t", "target", default=None, help="Name of the declaration to replace (target mode).")
@click.option("--candidate", "-c", "candidates", multiple=True, type=click.Path(dir_okay=False, path_type=str), help="A file holding one whole replacement declaration (repeatable, 1-16).")
@click.option("--sequential", is_flag=True, help="Check every command of SOURCE in order, extending the environment only past accepted ones.")
@reference_option
@checker_options
@handles_errors()
def check_target(
    source: str,
    target: str | None,
    candidates: tuple[str, ...],
    sequential: bool,
    reference_file: str | None,
    timeout_s: float | None,
    as_json: bool,
    **shared: Any,
) -> None:
    """Check replacements (--candidate FILE) for declaration --target of SOURCE against the
    environment before it, or (--sequential) every command of SOURCE in order. Exit status: the
    best candidate's verdict (target), the worst command's (sequential), as `leanindex check`."""
    from pydantic import ValidationError

    from ..checker.models import TargetCheckRequest, TargetMode
    from ..render import render_target
    from ..validation import invalid_request

    config = checker_config(**shared)
    environment = shared["environment"]
    code = read_source(source, config.max_code_bytes)
    texts = [read_source(path, config.max_code_bytes) for path in candidates]
    try:
        request = TargetCheckRequest(
            environment=environment,
            code=code,
            mode=TargetMode.SEQUENTIAL if sequential else TargetMode.TARGET,
            target=target,
            candidates=texts,
            timeout_s=timeout_s,
            reference=read_reference(reference_file, config.max_code_bytes),
        )
    except ValidationError as error:
        raise invalid_request(error.errors()) from None
    with catalog_checker(config, shared["root"]) as (checker, _engine):
        response = run_once(lambda: checker.check_target_sync(request))
    if as_json:
        emit_json(response)
    else:
        stdout.print(render_target(response), markup=False)
    raise SystemExit(target_exit(response))


@main.command("proof-steps")
@click.argument("source", type=click.Path(allow_dash=True, dir_okay=False, path_type=str))
@click.option("--theorem", "-t", default=None, help="The declaration whose proof to show (may be left out when SOURCE declares one name).")
@click.option("--tree", is_flag=True, help="Show the proof as a tree of goals (lean.proof.tree) instead of a flat list.")
@click.option("--include-theorems", is_flag=True, help="Also give the signatures of the constants the tactics use, from ROOT's catalog.")
@checker_options
@handles_errors()
def proof_steps(
    source: str,
    theorem: str | None,
    tree: bool,
    include_theorems: bool,
    timeout_s: float | None,
    as_json: bool,
    **shared: Any,
) -> None:
    """Every tactic of a proof in SOURCE with the goals before and after it (or, --tree, the
    proof as a tree of goals), from a warm REPL of ENVIRONMENT."""
    from pydantic import ValidationError

    from ..checker.models import ProofStepsRequest
    from ..models import InspectRequest, InspectResponse
    from ..render import render_proof_steps
    from ..validation import invalid_request

    config = checker_config(**shared)
    environment = shared["environment"]
    code = read_source(source, config.max_code_bytes)
    try:
        request = ProofStepsRequest(environment=environment, code=code, theorem=theorem, include_theorems=include_theorems, timeout_s=timeout_s)
    except ValidationError as error:
        raise invalid_request(error.errors()) from None
    with catalog_checker(config, shared["root"]) as (checker, engine):

        async def inspect(body: InspectRequest) -> InspectResponse:
            return engine.inspect(body)

        response = run_once(lambda: checker.run_sync(checker.proof_steps, request, tree=tree, inspect=inspect if include_theorems else None))
    if as_json:
        emit_json(response)
    else:
        stdout.print(render_proof_steps(response), markup=False)


@main.command()
@click.argument("sources", nargs=-1, type=click.Path(dir_okay=False, path_type=str))
@click.option("--module-prefix", default=None, help="Also audit every file of this module prefix under --project (e.g. MyProject.Algebra).")
@checker_options
@handles_errors()
def audit(
    sources: tuple[str, ...],
    module_prefix: str | None,
    timeout_s: float | None,
    as_json: bool,
    **shared: Any,
) -> None:
    """Audit Lean files: each is checked on its own against ENVIRONMENT, and every declaration
    it adds is listed with its axioms and sorry use. Exit status 0 only when every file is
    `accepted` (all its declarations audited, at least one, no flag); otherwise that of the worst
    verdict (12 incomplete, 13 rejected), so it can gate CI."""
    from ..checker.audit import project_files
    from ..checker.models import AuditRequest, AuditResponse
    from ..render import render_audit

    config = checker_config(**shared)
    environment = shared["environment"]
    files = project_files(Path(shared["project_dir"]), sources, module_prefix)
    requests = [AuditRequest(environment=environment, code=read_source(str(path), config.max_code_bytes), timeout_s=timeout_s) for path in files]
    with catalog_checker(config, shared["root"]) as (checker, _engine):

        async def audit_all(batch: list[AuditRequest]) -> list[AuditResponse]:
            return [await checker.audit(request) for request in batch]

        responses = run_once(lambda: checker.run_sync(audit_all, requests))
    if as_json:
        emit_json({"files": [{"path": str(path), "audit": response.model_dump(mode="json")} for path, response in zip(files, responses, strict=True)]})
    else:
        for path, response in zip(files, responses, strict=True):
            stdout.print(f"== {path}", markup=False)
            stdout.print(render_audit(response), markup=False)
    worst = max(_VERDICT_ORDER.index(response.verdict) for response in responses)
    raise SystemExit(VERDICT_EXIT[_VERDICT_ORDER[worst]])
