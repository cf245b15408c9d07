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

from ..checker import Checker, CheckRequest, CheckResponse
from ..engine import Engine
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
    it; a test checks that the app has it). A tool that is not `enabled` on this server is
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
Bounded search of a Lean 4 environment's declarations (`environment`: see lean.environments).
Any filters, all must hold: name_contains (substrings), type_pattern.constants/.conclusion
(constants of the type/its conclusion; partly qualified names resolve), instances_of (a class),
uses_constants, namespace_prefixes, kinds, module_prefixes, flags. total_matches is exact;
RESULT_LIMIT: pass next_cursor as `after`."""

INSPECT_DESCRIPTION = """\
Everything the catalog holds about one declaration of a pinned Lean 4 environment, by exact full
name (`Nat.add_comm`, `Foo.«bar baz»`): kind, elaborated type, namespace, module, source range,
docstring, universe parameters, type constants, flags, and the environment identity. A name that
is not in the catalog is an error `not_found` with close known names."""

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


def _lean_line(response: Any) -> str:
    lean = f" lean {response.lean_version}" if response.lean_version else ""
    return f"{response.environment}{lean}"


def render_search(response: SearchResponse) -> str:
    """Stop reason and counts on the first line, then one line per result:
    `name | kind | type | module`; unknown constants and the next cursor last."""
    lines = [
        f"{response.stop_reason.value} {response.completeness.value}: {len(response.results)} shown, "
        f"total_matches {response.total_matches}, hidden_matches {response.hidden_matches} ({_lean_line(response)})"
    ]
    lines.extend(f"{r.name} | {r.kind.value} | {r.type} | {r.module or '-'}" for r in response.results)
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
    """`name : type`, then kind, module, lines and environment, then the optional parts (flags
    that are set, universes, type constants, docstring), one line each."""
    where = f" | lines {response.range.start.line}-{response.range.end.line}" if response.range else ""
    # doc-gen4 types are signatures (binders, then `: type`), not Pi types.
    signature = "type" in response.approximate_fields
    lines = [
        f"{response.name} {response.type}" if signature else f"{response.name} : {response.type}",
        f"{response.kind.value} | {response.module or '-'}{where} | {_lean_line(response)}",
    ]
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
command that could forge a verdict: `reasons` says which). `diagnostics` carries every message
with 1-based line and 0-based column (so #check/#print answers come back), `sorries` their goals,
`axioms` each theorem's axioms with the non-standard ones flagged. A tool failure (timeout, busy,
dead REPL) is an error result, never a verdict. Identical code on the same environment is
answered from a cache (`cached: true`)."""


def render_check(response: CheckResponse) -> str:
    """The verdict and environment first, then one line per reason, diagnostic, sorry and
    flagged axiom set (positions as `line:column`)."""
    cached = " (cached)" if response.cached else ""
    protected = "" if response.protected else " NOT PROTECTED"
    lines = [f"{response.verdict.value}{cached}{protected} ({response.environment}, {response.timings.total_ms:.0f} ms)"]
    for reason in response.reasons:
        where = f" {reason.start.line}:{reason.start.column}" if reason.start else ""
        lines.append(f"reason {reason.code.value}{where}: {reason.message}")
    lines.extend(f"{d.severity} {d.start.line}:{d.start.column}: {d.text}" for d in response.diagnostics)
    for s in response.sorries:
        where = f"{s.start.line}:{s.start.column}" if s.start else "?"
        lines.append(f"sorry {where}: {s.goal}")
    for entry in response.axioms:
        if entry.flagged:
            lines.append(f"axioms {entry.name}: flagged {', '.join(entry.flagged)} (all: {', '.join(entry.axioms)})")
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
CHECK = "lean.check"


def server_tools(engine: Engine, gate: CallGate, checker: Checker | None) -> list[ToolSpec]:
    """Every tool a server has, in listing order; the one list that the HTTP routes, the MCP
    servers (`leanindex serve`, `leanindex mcp`) and `api/mcp-tools.json` come from.

    `lean.declaration.search`, `lean.declaration.inspect` and `lean.environments` run on
    `engine` through `gate` (so
    `busy` and `timeout` apply); `lean.check` runs on `checker`, which owns its own limits
    (bounded queue answering `busy`, per-check timeout, code size cap). Without a checker,
    `lean.check` is not `enabled` (MCP does not list it) and a call raises
    `LeanIndexError(check_disabled)`.
    """

    async def search(request: SearchRequest) -> SearchResponse:
        return await gate.run(engine.search, request)

    async def inspect(request: InspectRequest) -> InspectResponse:
        return await gate.run(engine.inspect, request)

    async def environments(request: EnvironmentsRequest) -> EnvironmentsResponse:
        return await gate.run(engine.environments)

    async def check_disabled(request: CheckRequest) -> CheckResponse:
        raise LeanIndexError(
            ErrorCode.CHECK_DISABLED,
            "checking is not enabled on this server; start it with --check PROFILE=PROJECT --check-repl DIR",
            {},
        )

    return [
        ToolSpec(
            name=SEARCH,
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
            name=CHECK,
            title="Check a Lean file",
            description=CHECK_DESCRIPTION,
            http_route="POST /v1/check",
            request_model=CheckRequest,
            response_model=CheckResponse,
            call=checker.check if checker is not None else check_disabled,
            render=render_check,
            enabled=checker is not None,
        ),
    ]
