"""The tools the servers offer, described once for every transport.

A `ToolSpec` names a tool (the dotted name of DESIGN.md; its underscore alias is derived), gives
its request and response models (which are its MCP input and output schemas), the coroutine
that answers a validated request, and a compact text rendering for clients that read only
text. `server_tools` is the one list of tools: a new tool is one more `ToolSpec` there (and,
for HTTP, one route in `leanindex.service.http`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from ..checker import CheckRequest, CheckResponse
from ..checker.backend import CheckerBackend
from ..checker.goals import Goal
from ..checker.models import (
    MAX_BATCH_ITEMS,
    AuditRequest,
    AuditResponse,
    BatchCheckRequest,
    BatchCheckResponse,
    Diagnostic,
    FailureSummary,
    FenceStatus,
    ProofBox,
    ProofCloseRequest,
    ProofCloseResponse,
    ProofStateRequest,
    ProofStateResponse,
    ProofStepRequest,
    ProofStepResponse,
    ProofStepsRequest,
    ProofStepsResponse,
    Reason,
    StatementFence,
    TacticStep,
    TargetCheckRequest,
    TargetCheckResponse,
    UnitVerdict,
)
from ..engine import Engine
from ..engine.diff import DeclarationDiff, DiffRequest
from ..errors import ErrorCode, LeanIndexError
from ..models import (
    EnvironmentsRequest,
    EnvironmentsResponse,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
    inspect_details,
)
from .gate import CallGate


@dataclass(frozen=True)
class ToolSpec:
    """One tool: names, schemas (as models), behaviour and text rendering.

    `call` receives an instance of `request_model` and returns an instance of `response_model`,
    or raises `LeanIndexError` (which the transports turn into an error result). `render` turns
    a response into the compact text put beside the structured content. `http_route` is the
    HTTP API's route for the same call (`METHOD /path`, as `leanindex.service.http` declares
    it; a test checks that the app has it), `client_method` the `leanindex.Client` method. A tool that is not `enabled` on this server is
    documented but not listed over MCP. The query tools do not list an output schema
    (`lists_output_schema`): it would cost agents several KB of context per tool, and the
    response models are in `api/models.schema.json`.
    """

    name: str
    title: str
    description: str
    http_route: str
    request_model: type[BaseModel]
    response_model: type[BaseModel]
    call: Callable[[Any], Awaitable[BaseModel]]
    render: Callable[[Any], str]
    #: The `leanindex.Client` method answering the same call (a test checks that it exists).
    client_method: str
    read_only: bool = True
    idempotent: bool = True
    enabled: bool = True
    lists_output_schema: bool = True

    @property
    def alias(self) -> str:
        """The same tool under a dot-free name (`lean.check` -> `lean_check`): several widely used
        MCP clients refuse tool names with dots although the MCP specification allows them."""
        return self.name.replace(".", "_")

    def names(self, naming: ToolNaming = "both") -> tuple[str, ...]:
        """The names this tool is listed under: `dotted`, `underscore` (the alias) or `both`."""
        return {"dotted": (self.name,), "underscore": (self.alias,), "both": (self.name, self.alias)}[naming]


#: How tools are named over MCP (`--tool-names`): the dotted name, its underscore alias, or both.
ToolNaming = Literal["dotted", "underscore", "both"]
TOOL_NAMINGS: tuple[str, ...] = get_args(ToolNaming)


SEARCH_DESCRIPTION = """\
Bounded search of a Lean 4 environment's declarations (environment: see lean.environments).
Filters, all must hold: name_contains, text (words of name/doc/type), type_pattern, instances_of,
uses_constants, namespace_prefixes, kinds, module_prefixes, flags. order=relevance (default
with text): best first, see match_reasons. total_matches is exact; pass next_cursor as after."""

INSPECT_DESCRIPTION = """\
Everything the catalog holds about one declaration of a pinned Lean 4 environment, by exact full
name (`Nat.add_comm`, `Foo.«bar baz»`): kind, elaborated type, namespace, module, source range,
source_url and doc_url, docstring, universe parameters, type constants, flags, and the
environment identity. A name that is not in the catalog is an error `not_found` with close known
names."""

ENVIRONMENTS_DESCRIPTION = """\
The Lean 4 environments this server answers for: each profile id (the `environment` of the
other tools), its Lean and Mathlib revisions, imports, declaration counts, where its records come
from (`source`) and which fields that source only approximates, and whether it verified."""


def render_environments(response: EnvironmentsResponse) -> str:
    """One line per environment: id, counts, revisions, source and approximate fields, or the
    problem that keeps it from serving."""
    lines = []
    for env in response.environments:
        if not env.verified:
            lines.append(f"{env.environment}: not serving ({env.problem.code.value if env.problem else 'unverified'})")
            continue
        approximate = f", approximate: {', '.join(env.approximate_fields)}" if env.approximate_fields else ""
        lines.append(
            f"{env.environment}: {env.visible_count} visible of {env.declaration_count} declarations | lean {env.lean_version or '-'}"
            f" | mathlib {env.mathlib_commit or '-'} | source {env.source or '-'}{approximate}"
        )
    return "\n".join(lines) or "no environment is served here"


DIFF_DESCRIPTION = """\
What changed between two served Lean environments (older, newer: see lean.environments), per
declaration: counts of added, removed, retyped (printed type changed), deprecated and renamed
(old name kept as a deprecated alias of an added one), then a page of the changes. A count is
null when the catalogs do not record it (not_recorded says why). Pass next_cursor as after."""


def render_diff(response: DeclarationDiff) -> str:
    """Both sides and the counts on the first lines, then one line per change:
    `category name | type before -> after | deprecated_to since`; the next cursor last."""
    counts = ", ".join(f"{c} {'not recorded' if n is None else n}" for c, n in response.counts.items())
    lines = [
        f"{response.older.profile} (lean {response.older.lean_version}) -> {response.newer.profile} (lean {response.newer.lean_version}): {counts}",
        *(f"not recorded: {reason}" for reason in sorted(set(response.not_recorded.values()))),
    ]
    for change in response.changes:
        lines.append(" | ".join([f"{change.category} {change.name}", *change.details()]))
    if response.next_cursor is not None:
        lines.append(f"next_cursor {response.next_cursor}")
    return "\n".join(lines)


def _lean_line(response: Any) -> str:
    lean = f" lean {response.lean_version}" if response.lean_version else ""
    return f"{response.environment}{lean}"


def render_search(response: SearchResponse) -> str:
    """Stop reason and counts on the first line, then one line per result:
    `name | kind | type | module | source_url | doc_url` (`-` for null); unknown constants and
    the next cursor last."""
    lines = [
        f"{response.stop_reason.value} {response.completeness.value}: {len(response.results)} shown, "
        f"total_matches {response.total_matches}, hidden_matches {response.hidden_matches} ({_lean_line(response)})"
    ]
    lines.extend(
        f"{r.name} | {r.kind.value} | {r.type} | {r.module or '-'} | {r.source_url or '-'} | {r.doc_url or '-'}"
        for r in response.results
    )
    lines.extend(f"{r.given} resolved to {r.resolved}" for r in response.resolved_constants)
    if response.suggestions:
        lines.append(f"no visible name contains that; close names: {', '.join(response.suggestions)}")
    for unknown in response.unknown_constants:
        hint = f"; close names: {', '.join(unknown.suggestions)}" if unknown.suggestions else ""
        lines.append(f"no declaration's type mentions {unknown.name}{hint}")
    if response.approximate_fields:
        lines.append(f"approximate in this catalog ({response.source}): {', '.join(response.approximate_fields)}")
    if response.next_cursor:
        lines.append(f"next_cursor {response.next_cursor}")
    return "\n".join(lines)


def render_inspect(response: InspectResponse) -> str:
    """`name : type`, then kind, module, lines and environment, the source and doc links (when
    known), then the optional parts (flags that are set, universes, type constants, docstring),
    one line each."""
    where = f" | lines {response.range.start.line}-{response.range.end.line}" if response.range else ""
    # doc-gen4 types are signatures (binders, then `: type`), not Pi types.
    signature = "type" in response.approximate_fields
    lines = [
        f"{response.name} {response.type}" if signature else f"{response.name} : {response.type}",
        f"{response.kind.value} | {response.module or '-'}{where} | {_lean_line(response)}",
    ]
    lines.extend(f"{label} {url}" for label, url in (("source", response.source_url), ("docs", response.doc_url)) if url)
    lines.extend(inspect_details(response))
    if response.doc:
        lines.append(response.doc)
    return "\n".join(lines)


CHECK_DESCRIPTION = """\
Check a complete Lean 4 file against a pinned environment (a profile such as CORE or MATHLIB)
on a warm Lean REPL; the verdict is Lean's alone. `code` is the whole file: `import` lines that
the profile covers (e.g. `import Mathlib.Tactic` under MATHLIB), then declarations. `verdict`:
`accepted` (no error, no sorry, every new theorem uses only propext, Classical.choice and
Quot.sound), `incomplete` (sorry or open goals), `rejected` (errors, non-standard axioms, or a
command that could forge a verdict: `reasons` says which); otherwise `failure_class` (e.g.
unknown_identifier, type_mismatch, syntax_error, unsolved_goals) and `hint` say what to try
next. `diagnostics` carries every message with 1-based line and 0-based column (so #check/#print
answers come back; an unknown name's error lists the catalog's closest names in `suggestions`), `sorries` their goals,
`axioms` each theorem's axioms with the non-standard ones flagged. A tool failure (timeout, busy,
dead REPL) is an error result, never a verdict. Identical code on the same environment is
answered from a cache (`cached: true`). `reference` pins statements (statement fence): `theorems`
[{name, statement}] (statement = what follows the name in `theorem name ... := `) and/or `file`
(a Lean file of theorems); each must be declared by the file as a theorem whose type Lean finds
identical to the reference's, else `rejected` with `statement_changed` (`fence` shows both
signatures and the first differing subterm)."""


def _render_fence(fence: list[StatementFence], indent: str = "") -> list[str]:
    lines = []
    for entry in fence:
        lines.append(f"{indent}fence {entry.name}: {entry.status.value}")
        if entry.status is not FenceStatus.SAME:
            if entry.submitted:
                lines.append(f"{indent}  submitted: {entry.submitted}")
            if entry.reference:
                lines.append(f"{indent}  reference: {entry.reference}")
            if entry.first_difference:
                lines.append(f"{indent}  first difference: {entry.first_difference[0]}  vs  {entry.first_difference[1]}")
    return lines


def _render_failure(response: FailureSummary, indent: str = "") -> list[str]:
    """`failure <class>: <hint>` for a non-accepted verdict; nothing for `accepted`."""
    return [f"{indent}failure {response.failure_class.value}: {response.hint}"] if response.failure_class else []


def _render_reasons(reasons: list[Reason], indent: str = "") -> list[str]:
    lines = []
    for reason in reasons:
        where = f" {reason.start.line}:{reason.start.column}" if reason.start else ""
        lines.append(f"{indent}reason {reason.code.value} [{reason.failure_class.value}]{where}: {reason.message}")
    return lines


def _render_diagnostics(diagnostics: list[Diagnostic], indent: str = "") -> list[str]:
    """One line per diagnostic (`severity line:column: text`), then its `suggestions` if any."""
    lines = []
    for d in diagnostics:
        lines.append(f"{indent}{d.severity} {d.start.line}:{d.start.column}: {d.text}")
        if d.suggestions:
            lines.append(f"{indent}  did you mean: {', '.join(d.suggestions)}")
    return lines


def render_check(response: CheckResponse) -> str:
    """The verdict and environment first, then one line per reason, diagnostic, sorry and
    flagged axiom set (positions as `line:column`)."""
    cached = " (cached)" if response.cached else ""
    protected = "" if response.protected else " NOT PROTECTED"
    lines = [f"{response.verdict.value}{cached}{protected} ({response.environment}, {response.timings.total_ms:.0f} ms)"]
    lines.extend(_render_failure(response))
    lines.extend(_render_reasons(response.reasons))
    lines.extend(_render_diagnostics(response.diagnostics))
    for s in response.sorries:
        where = f"{s.start.line}:{s.start.column}" if s.start else "?"
        lines.append(f"sorry {where}: {s.goal}")
    for entry in response.axioms:
        if entry.flagged:
            lines.append(f"axioms {entry.name}: flagged {', '.join(entry.flagged)} (all: {', '.join(entry.axioms)})")
    lines.extend(_render_fence(response.fence))
    return "\n".join(lines)


CHECK_BATCH_DESCRIPTION = f"""\
Check up to {MAX_BATCH_ITEMS} complete Lean 4 files at once, concurrently on the server's warm REPLs
(or its Ray cluster). `items`: [{{id, environment, code, timeout_s?, reference?}}], each a lean.check
request with your own `id` (unique in the batch). `results` has one entry per item in the same
order: {{id, response}} with lean.check's answer, or {{id, error}} with the error lean.check would
have raised (a tool failure, never a verdict); `attempts` is 2 when a cluster actor died under it
and another answered. `counts` sums accepted / incomplete / rejected / error. For more files, send
several batches (or use `leanindex check-batch` on a JSON-lines file)."""


def render_check_batch(response: BatchCheckResponse) -> str:
    """The counts first, then one line per item: `id: verdict` with its reasons' codes, or
    `id: error code: message`."""
    counts = response.counts
    lines = [", ".join(f"{counts.get(k, 0)} {k}" for k in ("accepted", "incomplete", "rejected", "error"))]
    for result in response.results:
        if result.response is not None:
            reasons = ", ".join(r.code.value for r in result.response.reasons)
            lines.append(f"{result.id}: {result.response.verdict.value}" + (f" ({reasons})" if reasons else ""))
        else:
            assert result.error is not None
            lines.append(f"{result.id}: error {result.error.code}: {result.error.message}")
    return "\n".join(lines)


AUDIT_DESCRIPTION = """\
Audit a complete Lean 4 file: it is checked as lean.check does, then every declaration it adds
is listed with its kind, whether it uses sorry, and its axioms (non-standard ones flagged).
`declarations_added` and `declarations_audited` count them; the verdict is never `accepted`
unless the two agree and are above zero (`nothing_audited` for a file that adds nothing), and
`unverified` lists declarations whose axioms could not be printed (`example`s, anonymous
instances: name them). A tool failure is an error result, never a verdict."""


def render_audit(response: AuditResponse) -> str:
    """The verdict and counts first, the reasons, then one line per declaration (position, kind,
    name, sorry, axioms with the flagged ones), then Lean's errors."""
    protected = "" if response.protected else " NOT PROTECTED"
    lines = [
        f"{response.verdict.value}{protected} ({response.environment}, {response.declarations_audited} of "
        f"{response.declarations_added} declarations audited, {response.timings.total_ms:.0f} ms)"
    ]
    lines.extend(_render_failure(response))
    lines.extend(_render_reasons(response.reasons))
    for decl in response.declarations:
        where = f"{decl.start.line}:{decl.start.column}"
        if not decl.verified:
            lines.append(f"{where} {decl.kind} {decl.name or '(anonymous)'}: UNVERIFIED (axioms not printed)")
            continue
        sorry = " uses sorry" if decl.uses_sorry else ""
        flagged = f" flagged {', '.join(decl.flagged)}" if decl.flagged else ""
        lines.append(f"{where} {decl.kind} {decl.name}:{sorry}{flagged} axioms [{', '.join(decl.axioms or [])}]")
    lines.extend(_render_diagnostics([d for d in response.diagnostics if d.severity == "error"]))
    return "\n".join(lines)


TARGET_DESCRIPTION = """\
Try replacements for one declaration of a Lean 4 file, fast: the environment before the target
(imports, then every earlier command) is elaborated once and kept on the worker, so each
candidate costs only its own elaboration (`reused: true` when it was already prepared). Give
`environment`, `code` (the whole file; top-level commands start at column 0), `target` (the
declaration's name as written, or with its namespaces) and `candidates` (1-16 whole
declarations, each declaring that same name). Each of `results` is Lean's verdict on one
candidate, as `lean.check` gives it (accepted / incomplete / rejected, reasons, diagnostics at
the file's lines, sorries with goals, axioms). `mode: "sequential"` (no target, no candidates)
checks every command of the file in order and extends the environment only past `accepted`
ones (`extended`). `reference` (target mode) fences the target's statement as lean.check's does.
A tool failure (timeout, busy, dead REPL) is an error result."""


def _render_unit(unit: UnitVerdict) -> list[str]:
    label = f"candidate {unit.candidate}" if unit.candidate is not None else f"{unit.name or '-'} (line {unit.start.line})"
    extended = " extended" if unit.extended else ""
    lines = [f"{label}: {unit.verdict.value}{extended} ({unit.check_ms:.0f} ms)"]
    lines.extend(_render_failure(unit, "  "))
    lines.extend(_render_reasons(unit.reasons, "  "))
    lines.extend(_render_diagnostics(unit.diagnostics, "  "))
    for s in unit.sorries:
        where = f"{s.start.line}:{s.start.column}" if s.start else "?"
        lines.append(f"  sorry {where}: {s.goal}")
    lines.extend(_render_fence(unit.fence, "  "))
    return lines


def render_target(response: TargetCheckResponse) -> str:
    """The mode, target and reuse first, the prefix's diagnostics, then each result with its
    reasons, diagnostics and sorries (positions as `line:column` in the file)."""
    protected = "" if response.protected else " NOT PROTECTED"
    what = f"target {response.target}" if response.target else "sequential"
    reused = "reused environment" if response.reused else f"prepared environment in {response.prepare_ms:.0f} ms"
    lines = [f"{what}{protected} ({response.environment}, {reused}, {response.timings.total_ms:.0f} ms)"]
    lines.extend(f"prefix {line}" for line in _render_diagnostics(response.prefix_diagnostics))
    for unit in response.results:
        lines.extend(_render_unit(unit))
    return "\n".join(lines)


PROOF_STATE_DESCRIPTION = """\
Open a proof on a warm Lean REPL to work on it tactic by tactic. `code` is a Lean file (imports
the profile covers, then declarations) with a `sorry`, e.g. `theorem t (a b : Nat) : a + b = b + a
:= by sorry`; with several `sorry`s give `position` ({line, column} of the one to open, as
`sorries` lists them). Answers `state_id` and the goals (case, hypotheses, target). Pass the id
to lean.proof.step. Ids belong to `session` (default "default"), expire after `ttl_s` idle
seconds, and are lost when their REPL is recycled (error unknown_proof_state: open again).
Commands that could forge a verdict are refused (forbidden_command)."""

PROOF_STEP_DESCRIPTION = """\
Run one tactic (combinators such as `constructor <;> simp` count as one) on an open proof state from
lean.proof.state or an earlier step. Answers a new `state_id` with its goals and `status`:
`open` (goals remain), `completed` (no goal left and Lean's kernel accepted the proof),
`incomplete` (no goal left but sorry or metavariables remain), or `error` (Lean refused the
tactic: `messages`/`proof_status` say why, no new state). The old state always stays usable, so
try alternatives from the same id. Finish with lean.check on the whole file."""

PROOF_CLOSE_DESCRIPTION = """\
Release an open proof state (from lean.proof.state or lean.proof.step) of `session`; its id is
unknown_proof_state afterwards."""


def _render_goals(goals: list[Goal]) -> list[str]:
    return [goal.text for goal in goals] or ["no goals"]


def render_proof_state(response: ProofStateResponse) -> str:
    """`state <id>` with the environment, then each goal as Lean printed it."""
    where = f" at {response.position.line}:{response.position.column}" if response.position else ""
    return "\n".join([f"state {response.state_id}{where} ({response.environment}, session {response.session})", *_render_goals(response.goals)])


def render_proof_step(response: ProofStepResponse) -> str:
    """The status and new state id, Lean's messages, then the goals."""
    head = f"{response.status.value} state {response.state_id or '-'} (from {response.previous_state_id}): {response.proof_status}"
    lines = [head]
    for m in response.messages:
        lines.append(f"{m.severity}: {m.text}")
        if m.suggestions:
            lines.append(f"  did you mean: {', '.join(m.suggestions)}")
    if response.state_id is not None:
        lines.extend(_render_goals(response.goals))
    return "\n".join(lines)


def render_proof_close(response: ProofCloseResponse) -> str:
    """`closed <id>` and the states left open in the session."""
    return f"closed {response.state_id}; {response.open_states} open in the session"


PROOF_STEPS_DESCRIPTION = """\
The tactics of a complete proof, as the infoview shows them: for every tactic in source order,
its text and position and the goals before and after it (each goal with case, hypotheses and
target; a closing tactic has no goal of its own after it). `code` is a Lean file, `theorem` the
declaration (may be left out when the file declares one name). `include_theorems`: also the
signature of every constant the tactics use, from the catalog (`used_theorems`), and those the
catalog does not hold (`not_in_catalog`). Use it to see how each step changed the goals."""

PROOF_TREE_DESCRIPTION = """\
The same proof as lean.proof.steps, as a tree of goal boxes: a box is a goal and the tactics
working on it; each tactic `closed` its goal, `transformed` it (`new_goal`, `new_hypotheses`),
`split` it (`subgoals`, one box each) or left it `unchanged`, and sub-proofs written inside it
(`have ... := by ...`) are its `have_boxes`. Same inputs as lean.proof.steps."""


def _render_step(step: TacticStep) -> list[str]:
    after = " | ".join(g.target for g in step.goals_after) or "no goals"
    before = " | ".join(g.target for g in step.goals_before) or "no goals"
    return [f"{step.start.line}:{step.start.column} {step.tactic}", f"  before: {before}", f"  after: {after}"]


def _render_box(box: ProofBox, depth: int) -> list[str]:
    pad = "  " * depth
    lines = [f"{pad}goal {box.goal.target}"]
    for t in box.tactics:
        extra = f" -> {t.new_goal.target}" if t.new_goal else ""
        lines.append(f"{pad}  {t.tactic.splitlines()[0]}: {t.outcome}{extra}")
        for child in [*t.have_boxes, *t.subgoals]:
            lines.extend(_render_box(child, depth + 2))
    return lines


def render_proof_steps(response: ProofStepsResponse) -> str:
    """The theorem, then each tactic with its goals' targets before and after (or the tree,
    indented), then the used theorems."""
    lines = [f"{response.theorem} ({response.environment})"]
    for step in response.steps:
        lines.extend(_render_step(step))
    if response.tree is not None:
        lines.extend(_render_box(response.tree, 0))
    lines.extend(f"uses {line}" for line in response.used_theorems or [])
    if response.not_in_catalog:
        lines.append(f"not in the catalog: {', '.join(response.not_in_catalog)}")
    return "\n".join(lines)


def render_error(error: LeanIndexError) -> str:
    """`error <code>: <message>`, then the details as one line of JSON when there are any."""
    text = f"error {error.code.value}: {error.message}"
    if error.details:
        text += "\n" + json.dumps(error.details, ensure_ascii=False, separators=(",", ":"), default=str)
    return text


ENVIRONMENTS = "lean.environments"
SEARCH = "lean.declaration.search"
INSPECT = "lean.declaration.inspect"
DIFF = "lean.catalog.diff"
CHECK = "lean.check"
CHECK_BATCH = "lean.check.batch"
TARGET = "lean.check.target"
AUDIT = "lean.audit"
PROOF_STATE = "lean.proof.state"
PROOF_STEP = "lean.proof.step"
PROOF_CLOSE = "lean.proof.close"
PROOF_STEPS = "lean.proof.steps"
PROOF_TREE = "lean.proof.tree"
#: The checker's tools after `lean.check`, whose HTTP routes `service.http` makes from their specs.
CHECKER_ROUTED = (CHECK_BATCH, TARGET, AUDIT, PROOF_STATE, PROOF_STEP, PROOF_CLOSE, PROOF_STEPS, PROOF_TREE)


def server_tools(engine: Engine, gate: CallGate, checker: CheckerBackend | None) -> list[ToolSpec]:
    """Every tool a server has, in listing order; the one list that the HTTP routes, the MCP
    servers (`leanindex serve`, `leanindex mcp`) and `api/mcp-tools.json` come from.

    `lean.declaration.search`, `lean.declaration.inspect` and `lean.environments` run on
    `engine` through `gate` (so
    `busy` and `timeout` apply); `lean.check` runs on `checker`, which owns its own limits
    (bounded queue answering `busy`, per-check timeout, code size cap), and so do
    `lean.check.batch`, `lean.check.target` and the proof tools (`lean.proof.*`). `checker` is a
    `checker.backend.CheckerBackend`: a local `Checker` or a `RayChecker` (the proof tools answer
    `check_disabled` there). Without a checker, the checker's tools are not `enabled` (MCP does not
    list them) and a call raises `LeanIndexError(check_disabled)`.
    """

    async def search(request: SearchRequest) -> SearchResponse:
        return await gate.run(engine.search, request)

    async def inspect(request: InspectRequest) -> InspectResponse:
        return await gate.run(engine.inspect, request)

    async def environments(request: EnvironmentsRequest) -> EnvironmentsResponse:
        return await gate.run(engine.environments)

    async def diff(request: DiffRequest) -> DeclarationDiff:
        return await gate.run(engine.diff, request)

    async def check_disabled(request: BaseModel) -> BaseModel:
        raise LeanIndexError(
            ErrorCode.CHECK_DISABLED,
            "checking is not enabled on this server; start it with --check PROFILE=PROJECT --check-repl DIR",
            {},
        )

    def checker_tool(call_of: Callable[[Any], Callable[[Any], Awaitable[BaseModel]]], **spec: Any) -> ToolSpec:
        """A tool answered by the checker (`call_of(checker)`); without one it is not enabled
        and answers `check_disabled`."""
        return ToolSpec(call=call_of(checker) if checker is not None else check_disabled, enabled=checker is not None, **spec)

    return [
        ToolSpec(
            name=SEARCH,
            client_method="search",
            title="Search Lean declarations",
            description=SEARCH_DESCRIPTION,
            http_route="POST /v1/declarations/search",
            request_model=SearchRequest,
            response_model=SearchResponse,
            call=search,
            render=render_search,
            lists_output_schema=False,
        ),
        ToolSpec(
            name=INSPECT,
            client_method="inspect",
            title="Inspect a Lean declaration",
            description=INSPECT_DESCRIPTION,
            http_route="GET /v1/declarations/{name}",
            request_model=InspectRequest,
            response_model=InspectResponse,
            call=inspect,
            render=render_inspect,
            lists_output_schema=False,
        ),
        ToolSpec(
            name=ENVIRONMENTS,
            client_method="environments",
            title="List Lean environments",
            description=ENVIRONMENTS_DESCRIPTION,
            http_route="GET /v1/environments",
            request_model=EnvironmentsRequest,
            response_model=EnvironmentsResponse,
            call=environments,
            render=render_environments,
            lists_output_schema=False,
        ),
        ToolSpec(
            name=DIFF,
            client_method="diff",
            title="What changed between two Lean environments",
            description=DIFF_DESCRIPTION,
            http_route="GET /v1/environments/{older}/diff/{newer}",
            request_model=DiffRequest,
            response_model=DeclarationDiff,
            call=diff,
            render=render_diff,
            lists_output_schema=False,
        ),
        checker_tool(
            lambda c: c.check,
            name=CHECK,
            client_method="check",
            title="Check a Lean file",
            description=CHECK_DESCRIPTION,
            http_route="POST /v1/check",
            request_model=CheckRequest,
            response_model=CheckResponse,
            render=render_check,
        ),
        checker_tool(
            lambda c: c.check_batch,
            name=CHECK_BATCH,
            client_method="check_batch",
            title="Check many Lean files",
            description=CHECK_BATCH_DESCRIPTION,
            http_route="POST /v1/check/batch",
            request_model=BatchCheckRequest,
            response_model=BatchCheckResponse,
            render=render_check_batch,
        ),
        checker_tool(
            lambda c: c.check_target,
            name=TARGET,
            client_method="check_target",
            title="Check replacements for one Lean declaration",
            description=TARGET_DESCRIPTION,
            http_route="POST /v1/check/target",
            request_model=TargetCheckRequest,
            response_model=TargetCheckResponse,
            render=render_target,
        ),
        checker_tool(
            lambda c: c.audit,
            name=AUDIT,
            client_method="audit",
            title="Audit every declaration of a Lean file",
            description=AUDIT_DESCRIPTION,
            http_route="POST /v1/audit",
            request_model=AuditRequest,
            response_model=AuditResponse,
            render=render_audit,
        ),
        checker_tool(
            lambda c: c.proof_state,
            name=PROOF_STATE,
            client_method="proof_state",
            title="Open a Lean proof state",
            description=PROOF_STATE_DESCRIPTION,
            http_route="POST /v1/proof/state",
            request_model=ProofStateRequest,
            response_model=ProofStateResponse,
            render=render_proof_state,
            read_only=False,
            idempotent=False,
        ),
        checker_tool(
            lambda c: c.proof_step,
            name=PROOF_STEP,
            client_method="proof_step",
            title="Run a tactic on a Lean proof state",
            description=PROOF_STEP_DESCRIPTION,
            http_route="POST /v1/proof/step",
            request_model=ProofStepRequest,
            response_model=ProofStepResponse,
            render=render_proof_step,
            read_only=False,
            idempotent=False,
        ),
        checker_tool(
            lambda c: c.proof_close,
            name=PROOF_CLOSE,
            client_method="proof_close",
            title="Close a Lean proof state",
            description=PROOF_CLOSE_DESCRIPTION,
            http_route="POST /v1/proof/close",
            request_model=ProofCloseRequest,
            response_model=ProofCloseResponse,
            render=render_proof_close,
            read_only=False,
            idempotent=False,
        ),
        checker_tool(
            lambda c: lambda r: c.proof_steps(r, tree=False, inspect=inspect),
            name=PROOF_STEPS,
            client_method="proof_steps",
            title="Goals before and after every tactic of a Lean proof",
            description=PROOF_STEPS_DESCRIPTION,
            http_route="POST /v1/proof/steps",
            request_model=ProofStepsRequest,
            response_model=ProofStepsResponse,
            render=render_proof_steps,
        ),
        checker_tool(
            lambda c: lambda r: c.proof_steps(r, tree=True, inspect=inspect),
            name=PROOF_TREE,
            client_method="proof_steps",
            title="A Lean proof as a tree of goals",
            description=PROOF_TREE_DESCRIPTION,
            http_route="POST /v1/proof/tree",
            request_model=ProofStepsRequest,
            response_model=ProofStepsResponse,
            render=render_proof_steps,
        ),
    ]
