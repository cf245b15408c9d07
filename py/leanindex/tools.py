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

This module imports the catalog tools' models (`leanindex.models`) and the renderers only (no
FastAPI, MCP, engine or checker: the other tools' models load when first asked for,
`ToolSpec.request_model`), so the client and the CLI's remote queries read it cheaply.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel

from .errors import ErrorCode, LeanIndexError
from .models import MAX_LOOKUP_NAMES
from .render import (
    render_audit,
    render_check,
    render_check_batch,
    render_diff,
    render_environments,
    render_exists,
    render_inspect,
    render_inspect_many,
    render_proof_close,
    render_proof_state,
    render_proof_step,
    render_proof_steps,
    render_search,
    render_target,
)

# Re-exported: the naming is part of the tools' contract (`service.mcp`, the servers' settings).
from .tool_naming import DEFAULT_TOOL_NAMING as DEFAULT_TOOL_NAMING
from .tool_naming import TOOL_NAMINGS as TOOL_NAMINGS
from .tool_naming import ToolNaming as ToolNaming
from .validation import close_names, did_you_mean


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """One tool's static contract (see the module docstring).

    `http_route` is `POST /path`: the route `service.http` makes from this entry (or has written
    by hand, for routes older than the tool list), body `request_model`, answer
    `response_model`: the models `request` and `response` name (`module.Model` under
    `leanindex`), loaded on first use (`_loaded`), so that a caller of one tool loads neither
    the checker's nor the diff's models (the CLI's remote search, `leanindex.client`: issue 30).
    `answered_by` names the `service.tools.ToolCalls` method answering a
    validated `request_model` with a `response_model` (a test checks that it exists);
    `client_method` the `leanindex.Client` method (written there, or generated from this
    entry). `tag` is the OpenAPI tag and error list: `declarations` (catalog tools, answered by
    the engine) or `check` (answered by the checker: not enabled on a server without one).
    `output_levels` is how many levels of nested objects its MCP output schema types below the
    answer's own fields (deeper objects are typed `object`; `service.mcp.compact_output_schema`):
    fewer levels keep a listing within its budget (`service.mcp.LISTING_BUDGET`, `ENTRY_BUDGETS`).
    """

    name: str
    title: str
    description: str
    http_route: str
    request: str
    response: str
    render: Callable[[Any], str]
    answered_by: str
    client_method: str
    tag: Literal["declarations", "check"] = "declarations"
    read_only: bool = True
    idempotent: bool = True
    output_levels: int = 1

    @property
    def alias(self) -> str:
        """The same tool under a dot-free name (`lean.check` -> `lean_check`): several widely used
        MCP clients refuse tool names with dots although the MCP specification allows them."""
        return self.name.replace(".", "_")

    @property
    def request_model(self) -> type[BaseModel]:
        """The request model (`request`), its module imported on first use."""
        return _loaded(self.request)

    @property
    def response_model(self) -> type[BaseModel]:
        """The response model (`response`), its module imported on first use."""
        return _loaded(self.response)

    def names(self, naming: ToolNaming = DEFAULT_TOOL_NAMING) -> tuple[str, ...]:
        """The names this tool is listed under: `dotted`, `underscore` (the alias) or `both`."""
        return {"dotted": (self.name,), "underscore": (self.alias,), "both": (self.name, self.alias)}[naming]


def _loaded(reference: str) -> type[BaseModel]:
    """The model `reference` names (`checker.models.CheckRequest`: module `leanindex.checker.models`,
    class `CheckRequest`). Raises `ImportError`/`AttributeError` for a wrong reference (a test
    loads every tool's models)."""
    module, _, name = reference.rpartition(".")
    return cast(type[BaseModel], getattr(importlib.import_module(f"leanindex.{module}"), name))


#: `leanindex.checker.models.MAX_BATCH_ITEMS`, copied for the batch tool's description: importing
#: its home loads the whole checker (tests/test_remote_cli_imports.py checks the copy).
MAX_BATCH_ITEMS = 256


SEARCH_DESCRIPTION = """\
Declarations of a Lean 4 environment (ids: lean.environments) meeting every filter given; `text`
is ranked, best first. total_matches is exact; more: after=next_cursor."""

INSPECT_DESCRIPTION = """\
Everything the catalog holds about one declaration, by exact full name (`Nat.add_comm`,
`Foo.«bar baz»`): kind, type, module, source range and links, docstring, universe parameters,
type constants, flags. An unknown name is the error `not_found` with the closest known names."""

ENVIRONMENTS_DESCRIPTION = """\
The Lean 4 environments this server answers for: each profile id (the `environment` of the
other tools), its Lean and Mathlib revisions, imports, declaration counts, where its records come
from (`source`) and which fields that source only approximates, and whether it verified."""


DIFF_DESCRIPTION = """\
What changed between two served Lean environments (older, newer: see lean.environments), per
declaration: module_gaps (modules only one side holds; their declarations are counted there, not
as added or removed), counts of added, removed, retyped (type changed, with other constants or
binder count), reprinted (type text changed only: maybe notation), deprecated and renamed, then a
page of the changes. A null count is not recorded (not_recorded says why). Next page:
after=next_cursor."""


CHECK_DESCRIPTION = """\
Check a complete Lean 4 file against a pinned environment (a profile such as CORE or MATHLIB) on
a warm Lean REPL; the verdict is Lean's alone. `code`: `import` lines the profile covers, then
declarations. `verdict`: `accepted` (no error, no sorry, only the axioms propext,
Classical.choice, Quot.sound), `incomplete` (sorry or open goals) or `rejected` (errors,
other axioms, or a command that could forge a verdict; `reasons` says which); `failure_class`
and `hint` say what to try next. `diagnostics` has every message (1-based line, 0-based column;
an unknown name's lists the catalog's closest names in `suggestions`), `sorries` their goals,
`axioms` each theorem's axioms. A tool failure (timeout, busy, dead REPL) is an error result,
never a verdict; identical code is answered from a cache (`cached`). `reference` fences
statements: `theorems` [{name, statement}] (what follows the name in `theorem name ... :=`)
and/or `file`; each must be declared as a theorem of the same type, else `rejected` with
`statement_changed` (`fence` shows both and the first difference)."""


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
INSPECT_MANY = "lean.declaration.inspect_many"
EXISTS = "lean.declaration.exists"

INSPECT_MANY_DESCRIPTION = f"""\
lean.declaration.inspect for 1-{MAX_LOOKUP_NAMES} names in one call (`names`), answered in the
order asked: each result holds `response` (the declaration, as lean.declaration.inspect answers
it) or `error` (not_found, missing_module or invalid_request for that name) with `closest` known
names. A name's error never fails the call. completeness PARTIAL: some name is not_found while
the catalog lacks modules (missing_modules) that could declare it. To only verify names, use
lean.declaration.exists."""

EXISTS_DESCRIPTION = f"""\
Check that 1-{MAX_LOOKUP_NAMES} declaration names exist before citing them (`names`, exact full
names): per name, in the order asked, `exists`, `kind`, `module`, or `error_code` (not_found,
missing_module: a declaration of a module the catalog lacks, invalid_request: not a Lean name)
with `closest` known names. Fast: read from the name index. completeness PARTIAL: a not_found
name may be a declaration of one of missing_modules."""


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name=SEARCH,
        title="Search Lean declarations",
        description=SEARCH_DESCRIPTION,
        http_route="POST /v1/declarations/search",
        request="models.SearchRequest",
        response="models.SearchResponse",
        render=render_search,
        answered_by="search",
        client_method="search",
        output_levels=0,
    ),
    ToolSpec(
        name=INSPECT,
        title="Inspect a Lean declaration",
        description=INSPECT_DESCRIPTION,
        http_route="POST /v1/declarations/inspect",
        request="models.InspectRequest",
        response="models.InspectResponse",
        render=render_inspect,
        answered_by="inspect",
        client_method="inspect",
    ),
    ToolSpec(
        name=ENVIRONMENTS,
        title="List Lean environments",
        description=ENVIRONMENTS_DESCRIPTION,
        http_route="POST /v1/environments",
        request="models.EnvironmentsRequest",
        response="models.EnvironmentsResponse",
        render=render_environments,
        answered_by="environments",
        client_method="environments",
    ),
    ToolSpec(
        name=DIFF,
        title="What changed between two Lean environments",
        description=DIFF_DESCRIPTION,
        http_route="POST /v1/catalog/diff",
        request="engine.diff.DiffRequest",
        response="engine.diff.DeclarationDiff",
        render=render_diff,
        answered_by="diff",
        client_method="diff",
    ),
    ToolSpec(
        name=CHECK,
        title="Check a Lean file",
        description=CHECK_DESCRIPTION,
        http_route="POST /v1/check",
        request="checker.models.CheckRequest",
        response="checker.models.CheckResponse",
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
        request="checker.models.BatchCheckRequest",
        response="checker.models.BatchCheckResponse",
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
        request="checker.models.TargetCheckRequest",
        response="checker.models.TargetCheckResponse",
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
        request="checker.models.AuditRequest",
        response="checker.models.AuditResponse",
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
        request="checker.models.ProofStateRequest",
        response="checker.models.ProofStateResponse",
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
        request="checker.models.ProofStepRequest",
        response="checker.models.ProofStepResponse",
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
        request="checker.models.ProofCloseRequest",
        response="checker.models.ProofCloseResponse",
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
        request="checker.models.ProofStepsRequest",
        response="checker.models.ProofStepsResponse",
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
        request="checker.models.ProofStepsRequest",
        response="checker.models.ProofStepsResponse",
        render=render_proof_steps,
        answered_by="proof_tree",
        client_method="proof_tree",
        tag="check",
    ),
    ToolSpec(
        name=INSPECT_MANY,
        title="Inspect many Lean declarations",
        description=INSPECT_MANY_DESCRIPTION,
        http_route="POST /v1/declarations/inspect_many",
        request="models.InspectManyRequest",
        response="models.InspectManyResponse",
        render=render_inspect_many,
        answered_by="inspect_many",
        client_method="inspect_many",
    ),
    ToolSpec(
        name=EXISTS,
        title="Check that Lean declarations exist",
        description=EXISTS_DESCRIPTION,
        http_route="POST /v1/declarations/exists",
        request="models.ExistsRequest",
        response="models.ExistsResponse",
        render=render_exists,
        answered_by="exists",
        client_method="exists",
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
    close = close_names(name, {**{spec.alias: spec.name for spec in TOOLS}, **{spec.name: spec.name for spec in TOOLS}})
    hint = f"; {did_you_mean(close)}" if close else ""
    raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"no tool {name!r}{hint}", {"field": "tool", "suggestions": close})
