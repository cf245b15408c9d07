"""The proof checker: Lean's verdict on complete files, from warm REPL pools (lean-interact).

Public API: `Checker`, `CheckerConfig`, and the models `CheckRequest`/`CheckResponse`
(`leanindex.checker.models`, which also holds the target-check and proof-state models). See
docs/checker.md and docs/agent-workflow.md.
"""

from .checker import Checker
from .config import CheckerConfig
from .models import CheckRequest, CheckResponse, Verdict

__all__ = ["Checker", "CheckerConfig", "CheckRequest", "CheckResponse", "Verdict"]
