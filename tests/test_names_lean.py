"""`names.py` against the real compiled Lean 4.35.0 (`leanlib`): `Name.cmp`, `Name.toString`,
`String.toName`, on random names made of the components real environments contain (numeric,
unicode, empty, `«»`-needing, `_private`, `✝`, `_hyg`, `match_1`, `_simp_1`, `omega_1`...).

Every example is one call of Lean's compiled function per property; `COMPARED` counts them so
the figures reported are exact (printed after the module's run, with `pytest -s`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leanlib
from lean_oracle import related_pair
from leanindex.lake.oleans import olean_relative_path
from leanindex.names import NameSyntaxError, format_name, name_cmp, parse_name

REASON = leanlib.unavailable_reason()
pytestmark = [pytest.mark.leanlib, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

EXAMPLES = 300
PROPERTIES = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Names (or texts) handed to Lean, per property.
COMPARED: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _print_counts():
    """Print how many names went to Lean (visible with `pytest -s`)."""
    yield
    print(f"\nnames compared with Lean 4.35.0: {dict(COMPARED)}, total {sum(COMPARED.values())}")

# --- strategies ---------------------------------------------------------------------------------

# Components that real environments contain or that sit on a printing rule's edge: auxiliary
# declarations, private and hygienic names, inaccessible names, pseudo-syntax, and texts that
# need `«»` or cannot be escaped at all.
SPECIAL = st.sampled_from(
    [
        "_private", "_hyg", "_inaccessible", "✝", "x✝", "a✝¹", "match_1", "_simp_1", "omega_1",
        "proof_1", "eq_1", "_auxLemma", "_unsafe_rec", "_cstage1", "_@", "_uniq", "injEq",
        "noConfusionType", "", " ", "a b", "a.b", "«x", "x»", "«x»", "»", "1", "01", "0x10", "1_0",
        "#x", "?u", "_", "α", "λ", "x₁", "ℕ", "𝔸", "Nat", "add_comm", "instAddNat", "a'", "b!", "c?",
    ]
)
IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_'!?]{0,5}", fullmatch=True)
# Any code point Lean's `Char` allows (no surrogates), NUL included.
ANY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=5)
COMPONENT = st.one_of(SPECIAL, IDENT, ANY_TEXT, st.integers(0, 20), st.integers(0, 2**64))
NAME = st.lists(COMPONENT, min_size=1, max_size=5).map(tuple)
# Module names: string components only (Lake derives them from file paths).
MODULE = st.lists(st.one_of(IDENT, SPECIAL, ANY_TEXT), min_size=1, max_size=4).map(tuple)


# --- properties ---------------------------------------------------------------------------------


@PROPERTIES
@given(related_pair(COMPONENT))
def test_name_cmp_is_lean_name_cmp(pair: tuple[tuple[str | int, ...], tuple[str | int, ...]]) -> None:
    a, b = pair
    COMPARED["Name.cmp"] += 1
    assert name_cmp(a, b) == leanlib.name_cmp(a, b)


@PROPERTIES
@given(NAME)
def test_format_name_is_lean_name_to_string(components: tuple[str | int, ...]) -> None:
    COMPARED["Name.toString"] += 1
    assert format_name(components) == leanlib.name_to_string(components)


@PROPERTIES
@given(NAME)
def test_parse_name_reads_what_lean_reads(components: tuple[str | int, ...]) -> None:
    """Whenever Lean's `String.toName` reads its own printing back to the name,
    `parse_name` reads the same components."""
    printed = leanlib.name_to_string(components)
    COMPARED["String.toName"] += 1
    if leanlib.string_to_name(printed) == components:
        assert parse_name(printed) == components


@PROPERTIES
@given(st.one_of(NAME.map(leanlib.name_to_string), ANY_TEXT, st.from_regex(r"[a-z0-9«».x✝ _]{1,8}", fullmatch=True)))
def test_parse_name_agrees_with_string_to_name(text: str) -> None:
    """On any text that Lean's `String.toName` reads, `parse_name` gives the same components,
    or refuses a text that is not Lean's printing of those components (a numeral with a leading
    zero, a radix prefix or `_` separators: `Name.toString` prints `Nat.repr`)."""
    COMPARED["String.toName"] += 1
    lean = leanlib.string_to_name(text)
    if not lean:  # Lean reads nothing: `parse_name` may read Lean's unescaped printings
        return
    try:
        ours = parse_name(text)
    except NameSyntaxError:
        assert format_name(lean) != text
        return
    assert ours == lean


@PROPERTIES
@given(MODULE)
def test_module_file_follows_string_to_name(module: tuple[str, ...]) -> None:
    """The `.olean` path of a module printed by Lean is made of the components
    `String.toName` reads from that printing (Lake's module names)."""
    printed = leanlib.name_to_string(module)
    COMPARED["String.toName"] += 1
    components = leanlib.string_to_name(printed)
    if components != module:
        return
    assert olean_relative_path(printed) == Path(*module[:-1], f"{module[-1]}.olean")


def test_oracle_is_the_v4_35_0_release(tmp_path: Path) -> None:
    run = leanlib.run_lean(["--githash"], tmp_path)
    assert (run.returncode, run.stdout.strip()) == (0, leanlib.LEAN_GITHASH)


# --- what the extractor's flags rest on ---------------------------------------------------------
# `names.py` has no private/internal helpers: `is_private` and `is_internal` come from the
# extractor, which calls Lean's `isPrivateName`, `privateToUserName?` and `isInternalDetail`
# (LeanIndex/Flags.lean). These pin what those Lean functions really answer, as the extractor and
# the tests reading its stream assume.


@PROPERTIES
@given(st.one_of(NAME, NAME.map(lambda c: ("_private", *c))))
def test_private_means_a_private_root_printed_first(components: tuple[str | int, ...]) -> None:
    """`isPrivateName` holds exactly when the root component is `_private`, and such a name
    prints starting with `_private` (what `test_extractor_lean` reads from the stream)."""
    COMPARED["isPrivateName"] += 1
    private = leanlib.is_private_name(components)
    assert private == (components[0] == "_private")
    if private:
        assert leanlib.name_to_string(components).startswith("_private")


@pytest.mark.parametrize(
    ("private", "user"),
    [
        (("_private", "Init", "Data", 0, "Nat", "secret"), ("Nat", "secret")),
        (("_private", "M", 0, "Nat", "x", 1, "y"), ("Nat", "x", 1, "y")),
    ],
)
def test_private_to_user_name_drops_the_module_prefix(private: tuple[str | int, ...], user: tuple[str | int, ...]) -> None:
    assert leanlib.private_to_user_name(private) == user
    assert leanlib.private_to_user_name(user) is None
    # Every private name is an internal detail (`_private` starts with `_`): the extractor
    # asks `isInternalDetail` of the user name.
    assert leanlib.is_internal_detail(private)


@pytest.mark.parametrize("last", ["noConfusionType", "noConfusion", "injEq", "inj", "sizeOf_spec", "ctorIdx", "eq_def", "casesOn", "rec", "below"])
def test_generated_declarations_that_is_internal_detail_misses(last: str) -> None:
    """Auto-generated declarations users never search for that `isInternalDetail` does not
    flag: the extractor needs a further rule for them."""
    assert not leanlib.is_internal_detail(("Nat", last))


@pytest.mark.parametrize("last", ["match_1", "_simp_1", "proof_1", "omega_1", "eq_1", "_auxLemma", "_unsafe_rec", "_hyg"])
def test_generated_declarations_that_is_internal_detail_flags(last: str) -> None:
    assert leanlib.is_internal_detail(("Nat", last))
