"""The binder count of relevance order's third criterion (`catalog.ranking.binder_count`),
against counts made by hand: doc-gen4 signatures of Lean core (their binder part before the
`:`), printed types (`∀`, arrows, dependent and instance arrows), and the terms that are not
binders (parenthesised arithmetic, anonymous constructors, `fun`, `∃`, set-builder braces)."""

from __future__ import annotations

import pytest

from leanindex.catalog.ranking import binder_count

CASES = {
    "T": 0,
    "(a : α) : T": 1,
    "{α : Type u} [Group α] (a b : α) : a = b": 4,
    "(a b c : Int) : a + (b + c) = b + (a + c)": 3,
    "(a b c d : Nat) : a + b + (c + d) = a + c + (b + d)": 4,
    "{α : Type u_1} {l : List α} {i j : Nat} : take (i + j) l = take i l ++ take j (drop i l)": 4,
    "{α : Type u} (as bs : List α) : (as ++ bs).length = as.length + bs.length": 3,
    "{m : Type u → Type v} [Monad m] {α : Type w} (f : α → m α) : List α → Array α → m (List α)": 6,
    ": Std.Commutative fun (x1 x2 : Nat) => x1 + x2": 0,
    "{α} (x : α) : ∃ y, y = x → True": 2,
    "(f : ℕ → ℕ) : ⟨f 0, f 1⟩ = (f 0, f 1)": 1,
    "{x | x = 1} = ∅": 0,
    "∀ (n m : Nat), n = m": 2,
    "∀ x y z : ℕ, x = z → True": 4,
    "∀ {α : Type} [inst : Inhabited α] (x : α), x = x": 3,
    "Nat → Nat → Nat": 2,
    "(h : p) → q": 1,
    "[Group G] → G → G": 2,
    ": (n : Nat) → n = n": 1,
}


@pytest.mark.parametrize("signature", list(CASES))
def test_binders_counted_by_hand(signature: str) -> None:
    assert binder_count(signature) == CASES[signature]
