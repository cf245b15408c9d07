"""The tools of leanindex, declared once: the one list every surface is derived from.

A `ToolSpec` is a tool's static contract: its dotted name (DESIGN.md; the underscore alias is
derived), title and description, request and response models (its MCP input and output
schemas, its HTTP body and answer), its HTTP route, the name of the `leanindex.Client` method,
the text renderer (`leanindex.render`, shared by MCP and the CLI), and `answered_by`: the call
that answers it, a method of `service.tools.ToolCalls` (an engine call through the server's call
gate, or a checker operation). `TOOLS` lists them in listing order. From it come the MCP
listing and calls (`service.mcp`), the HTTP routes and OpenAPI entries (`service.http`), the
`Client` methods and `Client.call` (`leanindex.client`), `api/mcp-tools.json` and the tools
table `api/tools.md` (`leanindex.api_files`). A new tool over an existing call is one more
entry here and its renderer in `leanindex.render`.

This module imports models and renderers only (no FastAPI, MCP or engine), so the client can
read it cheaply.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from .checker.models import (
    MAX_BATCH_ITEMS,
    AuditRequest,
    AuditResponse,
    BatchCheckRequest,
    BatchCheckResponse,
    CheckRequest,
    CheckResponse,
    ProofCloseRequest,
    ProofCloseResponse,
    ProofStateRequest,
    ProofStateResponse,
    ProofStepRequest,
    ProofStepResponse,
    ProofStepsRequest,
    ProofStepsResponse,
    TargetCheckRequest,
    TargetCheckResponse,
)
from .engine.diff import DeclarationDiff, DiffRequest
from .errors import ErrorCode, LeanIndexError
from .models import (
    EnvironmentsRequest,
    EnvironmentsResponse,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
)
from .render import (
    render_audit,
    render_check,
    render_check_batch,
    render_diff,
    render_environments,
    render_inspect,
    render_proof_close,
    render_proof_state,
    render_proof_step,
    render_proof_steps,
    render_search,
    render_target,
)

#: How tools are named over MCP (`--tool-names`): the dotted name, its underscore alias, or both.
ToolNaming = Literal["dotted", "underscore", "both"]
TOOL_NAMINGS: tuple[str, ...] = get_args(ToolNaming)


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """One tool's static contract (see the module docstring).

    `http_route` is `POST /path`: the route `service.http` makes from this entry (or has written
    by hand, for routes older than the tool list), body `request_model`, answer
    `response_model`. `answered_by` names the `service.tools.ToolCalls` method answering a
    validated `request_model` with a `response_model` (a test checks that it exists);
    `client_method` the `leanindex.Client` method (written there, or generated from this
    entry). `tag` is the OpenAPI tag and error list: `declarations` (catalog tools, answered by
    the engine) or `check` (answered by the checker: not enabled on a server without one).
    `lists_output_schema` False leaves the output schema out of the MCP listing (the response
    models are in `api/models.schema.json`).
    """

    name: str
    title: str
    description: str
    http_route: str
    request_model: type[BaseModel]
    response_model: type[BaseModel]
    render: Callable[[Any], str]
    answered_by: str
    client_method: str
    tag: Literal["declarations", "check"] = "declarations"
    read_only: bool = True
    idempotent: bool = True
    lists_output_schema: bool = True

    @property
    def alias(self) -> str:
        """The same tool under a dot-free name (`lean.check` -> `lean_check`): several widely used
        MCP clients refuse tool names with dots although the MCP specification allows them."""
        return self.name.replace(".", "_")

    def names(self, naming: ToolNaming = "both") -> tuple[str, ...]:
        """The names this tool is listed under: `dotted`, `underscore` (the alias) or `both`."""
        return {"dotted": (self.name,), "underscore": (self.alias,), "both": (self.name, self.alias)}[naming]


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


DIFF_DESCRIPTION = """\
What changed between two served Lean environments (older, newer: see lean.environments), per
declaration: first module_gaps (modules only one side holds, and the missing and host modules
the manifests record; their declarations are counted there, not as added or removed), then
counts of added, removed, retyped (printed type changed, with other constants or binder
count), reprinted (printed type changed, same constants and binder count: maybe notation
only), deprecated and renamed (old name kept as a deprecated alias of a new one), then a page
of the changes. A count is
null when the catalogs do not record it (not_recorded says why). Pass next_cursor as after."""


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


CHECK_BATCH_DESCRIPTION = f"""\
Check up to {MAX_BATCH_ITEMS} complete Lean 4 files at once, concurrently on the server's warm REPLs
(or its Ray cluster). `items`: [{{id, environment, code, timeout_s?, reference?}}], each a lean.check
request with your own `id` (unique in the batch). `results` has one entry per item in the same
order: {{id, response}} with lean.check's answer, or {{id, error}} with the error lean.check would
have raised (a tool failure, never a verdict); `attempts` is 2 when a cluster actor died under it
and another answered. `counts` sums accepted / incomplete / rejected / error. For more files, send
several batches (or use `leanindex check-batch` on a JSON-lines file)."""


AUDIT_DESCRIPTION = """\
Audit a complete Lean 4 file: it is checked as lean.check does, then every declaration it adds
is listed with its kind, whether it uses sorry, and its axioms (non-standard ones flagged).
`declarations_added` and `declarations_audited` count them; the verdict is never `accepted`
unless the two agree and are above zero (`nothing_audited` for a file that adds nothing), and
`unverified` lists declarations whose axioms could not be printed (`example`s, anonymous
instances: name them). A tool failure is an error result, never a verdict."""


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



TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name=SEARCH,
        title="Search Lean declarations",
        description=SEARCH_DESCRIPTION,
        http_route="POST /v1/declarations/search",
        request_model=SearchRequest,
        response_model=SearchResponse,
        render=render_search,
        answered_by="search",
        client_method="search",
        lists_output_schema=False,
    ),
    ToolSpec(
        name=INSPECT,
        title="Inspect a Lean declaration",
        description=INSPECT_DESCRIPTION,
        http_route="POST /v1/declarations/inspect",
        request_model=InspectRequest,
        response_model=InspectResponse,
        render=render_inspect,
        answered_by="inspect",
        client_method="inspect",
        lists_output_schema=False,
    ),
    ToolSpec(
        name=ENVIRONMENTS,
        title="List Lean environments",
        description=ENVIRONMENTS_DESCRIPTION,
        http_route="POST /v1/environments",
        request_model=EnvironmentsRequest,
        response_model=EnvironmentsResponse,
        render=render_environments,
        answered_by="environments",
        client_method="environments",
        lists_output_schema=False,
    ),
    ToolSpec(
        name=DIFF,
        title="What changed between two Lean environments",
        description=DIFF_DESCRIPTION,
        http_route="POST /v1/catalog/diff",
        request_model=DiffRequest,
        response_model=DeclarationDiff,
        render=render_diff,
        answered_by="diff",
        client_method="diff",
        lists_output_schema=False,
    ),
    ToolSpec(
        name=CHECK,
        title="Check a Lean file",
        description=CHECK_DESCRIPTION,
        http_route="POST /v1/check",
        request_model=CheckRequest,
        response_model=CheckResponse,
        render=render_check,
        answered_by="check",
        client_method="check",
        tag="check",
    ),
    ToolSpec(
        name=CHECK_BATCH,
        title="Check many Lean files",
        description=CHECK_BATCH_DESCRIPTION,
        http_route="POST /v1/check/batch",
        request_model=BatchCheckRequest,
        response_model=BatchCheckResponse,
        render=render_check_batch,
        answered_by="check_batch",
        client_method="check_batch",
        tag="check",
    ),
    ToolSpec(
        name=TARGET,
        title="Check replacements for one Lean declaration",
        description=TARGET_DESCRIPTION,
        http_route="POST /v1/check/target",
        request_model=TargetCheckRequest,
        response_model=TargetCheckResponse,
        render=render_target,
        answered_by="check_target",
        client_method="check_target",
        tag="check",
    ),
    ToolSpec(
        name=AUDIT,
        title="Audit every declaration of a Lean file",
        description=AUDIT_DESCRIPTION,
        http_route="POST /v1/audit",
        request_model=AuditRequest,
        response_model=AuditResponse,
        render=render_audit,
        answered_by="audit",
        client_method="audit",
        tag="check",
    ),
    ToolSpec(
        name=PROOF_STATE,
        title="Open a Lean proof state",
        description=PROOF_STATE_DESCRIPTION,
        http_route="POST /v1/proof/state",
        request_model=ProofStateRequest,
        response_model=ProofStateResponse,
        render=render_proof_state,
        answered_by="proof_state",
        client_method="proof_state",
        tag="check",
        read_only=False,
        idempotent=False,
    ),
    ToolSpec(
        name=PROOF_STEP,
        title="Run a tactic on a Lean proof state",
        description=PROOF_STEP_DESCRIPTION,
        http_route="POST /v1/proof/step",
        request_model=ProofStepRequest,
        response_model=ProofStepResponse,
        render=render_proof_step,
        answered_by="proof_step",
        client_method="proof_step",
        tag="check",
        read_only=False,
        idempotent=False,
    ),
    ToolSpec(
        name=PROOF_CLOSE,
        title="Close a Lean proof state",
        description=PROOF_CLOSE_DESCRIPTION,
        http_route="POST /v1/proof/close",
        request_model=ProofCloseRequest,
        response_model=ProofCloseResponse,
        render=render_proof_close,
        answered_by="proof_close",
        client_method="proof_close",
        tag="check",
        read_only=False,
        idempotent=False,
    ),
    ToolSpec(
        name=PROOF_STEPS,
        title="Goals before and after every tactic of a Lean proof",
        description=PROOF_STEPS_DESCRIPTION,
        http_route="POST /v1/proof/steps",
        request_model=ProofStepsRequest,
        response_model=ProofStepsResponse,
        render=render_proof_steps,
        answered_by="proof_steps",
        client_method="proof_steps",
        tag="check",
    ),
    ToolSpec(
        name=PROOF_TREE,
        title="A Lean proof as a tree of goals",
        description=PROOF_TREE_DESCRIPTION,
        http_route="POST /v1/proof/tree",
        request_model=ProofStepsRequest,
        response_model=ProofStepsResponse,
        render=render_proof_steps,
        answered_by="proof_tree",
        client_method="proof_tree",
        tag="check",
    ),
)
"""Every tool, in listing order."""


def tool_named(name: str) -> ToolSpec:
    """The tool called `name` (dotted, `lean.check`, or its alias, `lean_check`).

    Raises `LeanIndexError(invalid_request)` naming the closest tools for an unknown name.
    """
    for spec in TOOLS:
        if name in (spec.name, spec.alias):
            return spec
    close = difflib.get_close_matches(name, [spec.name for spec in TOOLS], n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"no tool {name!r}{hint}", {"field": "tool", "suggestions": close})
