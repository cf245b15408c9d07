"""Text renderings of every answer, one per response model: what an MCP tool puts beside its
structured content and what the CLI prints for people. Plain text (no markup), positions as
`line:column`, one fact per line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .errors import LeanIndexError
from .models import (
    Assurance,
    EnvironmentsResponse,
    ExistsResponse,
    InspectManyResponse,
    InspectResponse,
    LookupSummary,
    SearchResponse,
    hidden_text,
    inspect_caveat,
    inspect_details,
    lookup_caveat,
    search_caveats,
)

if TYPE_CHECKING:
    # Types only: the checker's and the diff's models load with their answers, not with this
    # module, which the remote CLI path (`exists` through `$LEANINDEX_URL`) imports.
    from .checker.goals import Goal
    from .checker.models import (
        AuditResponse,
        BatchCheckResponse,
        CheckResponse,
        Diagnostic,
        FailureSummary,
        ProofBox,
        ProofCloseResponse,
        ProofStateResponse,
        ProofStepResponse,
        ProofStepsResponse,
        Reason,
        StatementFence,
        TacticStep,
        TargetCheckResponse,
        UnitVerdict,
    )
    from .engine.diff import DeclarationDiff


def render_environments(response: EnvironmentsResponse) -> str:
    """One line per environment: id, counts, revisions, source and approximate fields, or the
    problem that keeps it from serving."""
    lines = []
    for env in response.environments:
        if not env.verified:
            lines.append(f"{env.environment}: not serving ({env.problem.code if env.problem else 'unverified'})")
            continue
        approximate = f", approximate: {', '.join(env.approximate_fields)}" if env.approximate_fields else ""
        lines.append(
            f"{env.environment}: {env.visible_count} visible of {env.declaration_count} declarations | lean {env.lean_version or '-'}"
            f" | mathlib {env.mathlib_commit or '-'} | source {env.source or '-'}{approximate}"
        )
    return "\n".join(lines) or "no environment is served here"


def render_diff(response: DeclarationDiff) -> str:
    """Both sides and the counts on the first line, the module gaps (`ModuleGaps.lines`: modules
    held by one side only, recorded missing and host modules, the declarations counted there)
    and the reasons for null counts next, then one line per change: `category name | type
    before -> after | deprecated_to since`; the next cursor last."""
    counts = ", ".join(f"{c} {'not recorded' if n is None else n}" for c, n in response.counts.items())
    lines = [
        f"{response.older.profile} (lean {response.older.lean_version}) -> {response.newer.profile} (lean {response.newer.lean_version}): {counts}; compared {response.compared}",
        *response.module_gaps.lines(response.older, response.newer),
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


def unmatched_line(response: SearchResponse) -> str | None:
    """The words of a search's `text` that no declaration of the catalog has (the answer's
    `unmatched_words`, as the user wrote them), as one line for people on every surface (MCP,
    CLI, the search page): `no declaration has: "foo", "bar"`; None when every word matched."""
    if not response.unmatched_words:
        return None
    return "no declaration has: " + ", ".join(f'"{word}"' for word in response.unmatched_words)


def render_search(response: SearchResponse) -> str:
    """Stop reason, completeness (and `APPROXIMATE` for such an answer) and counts on the first
    line, then one line per result: `name | kind | type | module | source_url | doc_url` (`-`
    for null); resolved and unknown constants, the words of `text` nothing has
    (`unmatched_line`), the caveats (`search_caveats`) and the next cursor last."""
    approximate = f" {Assurance.APPROXIMATE.value}" if response.assurance is Assurance.APPROXIMATE else ""
    lines = [
        f"{response.stop_reason.value} {response.completeness.value}{approximate}: {len(response.results)} shown, "
        f"total_matches {response.total_matches}, hidden_matches {hidden_text(response.hidden_matches)} ({_lean_line(response)})"
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
    unmatched = unmatched_line(response)
    if unmatched:
        lines.append(unmatched)
    lines.extend(search_caveats(response))
    if response.next_cursor:
        lines.append(f"next_cursor {response.next_cursor}")
    return "\n".join(lines)


def render_inspect(response: InspectResponse) -> str:
    """`name : type`, then kind, module, lines and environment, the source and doc links (when
    known), then the optional parts (flags that are set, universes, type constants), the
    approximate fields (`inspect_caveat`) and the docstring, one line each."""
    where = f" | lines {response.range.start.line}-{response.range.end.line}" if response.range else ""
    # doc-gen4 types are signatures (binders, then `: type`), not Pi types.
    signature = "type" in response.approximate_fields
    lines = [
        f"{response.name} {response.type}" if signature else f"{response.name} : {response.type}",
        f"{response.kind.value} | {response.module or '-'}{where} | {_lean_line(response)}",
    ]
    lines.extend(f"{label} {url}" for label, url in (("source", response.source_url), ("docs", response.doc_url)) if url)
    lines.extend(inspect_details(response))
    caveat = inspect_caveat(response)
    if caveat:
        lines.append(caveat)
    if response.doc:
        lines.append(response.doc)
    return "\n".join(lines)


def _render_fence(fence: list[StatementFence], indent: str = "") -> list[str]:
    from .checker.models import FenceStatus  # loaded already: `fence` is made of its models

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


def _lookup_head(response: LookupSummary) -> str:
    """A batch look-up's first line: its counts, completeness and environment."""
    counts = ", ".join(f"{value} {key}" for key, value in response.counts.items())
    return f"{response.completeness.value}: {counts} ({_lean_line(response)})"


def render_inspect_many(response: InspectManyResponse) -> str:
    """The counts and completeness first, then per name in the order asked: its `render_inspect`
    rendering, or `name: <code>: message` with the close names; entries apart by a blank line;
    the caveat (`lookup_caveat`) last."""
    blocks = [_lookup_head(response)]
    for result in response.results:
        if result.response is not None:
            blocks.append(render_inspect(result.response))
            continue
        assert result.error is not None
        close = f"\nclose names: {', '.join(result.closest)}" if result.closest else ""
        blocks.append(f"{result.name}: {result.error.code}: {result.error.message}{close}")
    caveat = lookup_caveat(response)
    if caveat:
        blocks.append(caveat)
    return "\n\n".join(blocks)


def render_exists(response: ExistsResponse) -> str:
    """The counts and completeness first, then one line per name in the order asked: `name: yes
    | kind | module`, or `name: no (code[, module]) | close names ...`; the caveat
    (`lookup_caveat`) last."""
    lines = [_lookup_head(response)]
    for result in response.results:
        if result.exists:
            lines.append(f"{result.name}: yes | {result.kind.value if result.kind else '-'} | {result.module or '-'}")
            continue
        why = f"{result.error_code}, module {result.module}" if result.module else str(result.error_code)
        close = f" | close names: {', '.join(result.closest)}" if result.closest else ""
        lines.append(f"{result.name}: no ({why}){close}")
    caveat = lookup_caveat(response)
    if caveat:
        lines.append(caveat)
    return "\n".join(lines)
