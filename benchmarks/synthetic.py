"""A synthetic declaration stream with the shape of `import Mathlib`, for benchmarks.

Shape (issue 2): 2-7 name components drawn from a Lean-like vocabulary, 3-40 type constants per
declaration drawn Zipf-like from about 60,000 constants, about 8% private or internal
declarations, kinds and modules in proportions close to Mathlib's. Deterministic for a seed.
`build_synthetic_catalog` streams it through the real builder, so the same call measures build
throughput.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from leanindex.catalog.builder import build_catalog  # noqa: E402
from leanindex.catalog.manifest import Manifest  # noqa: E402
from leanindex.names import format_name, name_sort_key  # noqa: E402

WORDS = (
    "add mul sub div neg inv comm assoc left right cancel zero one succ pred le lt ge gt eq ne "
    "map comp id injective surjective bijective mono anti continuous measurable integrable deriv "
    "norm dist nat int rat real complex finset set list multiset sum prod sup inf top bot card "
    "mem subset union inter compl image preimage range support degree coeff eval root prime dvd "
    "gcd lcm mod pow sqrt exp log sin cos abs sign floor ceil of to mk apply ext symm trans refl "
    "iff and or not imp forall exists unique filter tendsto nhds atTop closure interior open "
    "closed compact connected dense basis span rank dim det trace matrix linear ring field group "
    "monoid module algebra ideal quotient localization tensor hom equiv iso functor category"
).split()
NAMESPACES = (
    "Nat Int Rat Real Complex Finset Set List Multiset Polynomial MvPolynomial Matrix LinearMap "
    "Submodule Ideal Subgroup MonoidHom RingHom AlgHom Filter MeasureTheory ProbabilityTheory "
    "Topology Metric EMetric Function Equiv Fin ZMod Order Lattice CategoryTheory Module "
    "Algebra Field Group Monoid AddMonoid AddGroup Finsupp Fintype Cardinal Ordinal Asymptotics "
    "ContinuousLinearMap InnerProductSpace NormedSpace Manifold Sheaf Scheme AlgebraicGeometry"
).split()
KINDS = ("theorem",) * 70 + ("definition",) * 20 + ("inductive", "constructor", "recursor", "opaque") * 2 + ("axiom",)


def _names(rng: np.random.Generator, n: int) -> list[tuple[str | int, ...]]:
    """`n` distinct names, deepest 7 components, each starting with a namespace or a word."""
    seen: set[tuple[str | int, ...]] = set()
    out: list[tuple[str | int, ...]] = []
    sub_namespaces = [f"{w.capitalize()}{v.capitalize()}" for w in WORDS[:60] for v in WORDS[60:120]]
    while len(out) < n:
        depth = int(rng.integers(2, 8))
        parts: list[str | int] = [NAMESPACES[int(rng.integers(len(NAMESPACES)))]]
        for _ in range(depth - 2):
            parts.append(sub_namespaces[int(rng.integers(len(sub_namespaces)))])
        words = rng.integers(len(WORDS), size=int(rng.integers(1, 5)))
        parts.append("_".join(WORDS[int(w)] for w in words))
        roll = rng.random()
        if roll < 0.04:
            parts = ["_private", "Mathlib", "Synthetic", 0, *parts]
        elif roll < 0.08:
            parts.append(f"_proof_{int(rng.integers(1, 9))}" if rng.random() < 0.5 else "match_1")
        name = tuple(parts)
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def synthetic_stream(n: int, seed: int = 7, n_constants: int = 60_000) -> Iterator[bytes]:
    """NDJSON lines (bytes) of a valid `leanindex.declarations/v2` stream of `n` declarations
    (conclusions and value constants recorded, as the Lean extractor does by default)."""
    rng = np.random.default_rng(seed)
    names = sorted(_names(rng, n), key=name_sort_key)
    printed = [format_name(c) for c in names]
    constants = sorted(set(printed[: n_constants]) | {"Eq", "HAdd.hAdd", "Nat", "Real", "List.length", "Finset.sum"})
    ranks = np.arange(1, len(constants) + 1, dtype=np.float64)
    weights = 1.0 / ranks**1.1
    weights /= weights.sum()
    order = rng.permutation(len(constants))
    modules = [f"Mathlib.{ns}.{w.capitalize()}" for ns in NAMESPACES for w in WORDS[:150]]
    yield json.dumps(
        {
            "record": "header",
            "format": "leanindex.declarations/v2",
            "extractor": {"name": "leanindex-synthetic", "version": "1"},
            "lean": {"version": "4.35.0", "githash": None},
            "imports": ["Mathlib"],
            "modules": modules,
        }
    ).encode()
    counts = rng.integers(3, 41, size=n)
    draws = order[rng.choice(len(constants), size=int(counts.sum()), p=weights)]
    bounds = np.concatenate([[0], np.cumsum(counts)])
    value_counts = rng.integers(0, 9, size=n)
    value_draws = order[rng.choice(len(constants), size=8 * n, p=weights)]
    for i, (components, name) in enumerate(zip(names, printed, strict=True)):
        type_constants = sorted({constants[int(p)] for p in draws[bounds[i] : bounds[i + 1]]})
        conclusion = sorted(set(type_constants[-3:]))
        values = sorted({constants[int(p)] for p in value_draws[i * 8 : i * 8 + int(value_counts[i])]})
        private = components[0] == "_private"
        internal = not private and isinstance(components[-1], str) and (components[-1].startswith("_") or components[-1] == "match_1")
        line = int(rng.integers(1, 3000))
        record = {
            "record": "declaration",
            "name": name,
            "components": list(components),
            "kind": KINDS[i % len(KINDS)],
            "module": modules[int(rng.integers(len(modules)))],
            "type": "∀ {α : Type u_1} [inst : " + " ".join(type_constants[:6]) + " α] (x y : α), " + " = ".join(type_constants[-3:]),
            "type_constants": type_constants,
            "conclusion_constants": conclusion,
            "conclusion_head": conclusion[0] if conclusion and i % 5 else None,
            "value_constants": values,
            "level_params": ["u_1"],
            "doc": ("Synthetic docstring for " + name + ". " * 3) if i % 3 == 0 else None,
            "range": {"start": {"line": line, "column": 0}, "end": {"line": line + 5, "column": 20}},
            "is_private": private,
            "is_internal": internal,
            "is_instance": i % 17 == 0,
            "is_class": i % 97 == 0,
            "is_structure": False,
            "is_unsafe": False,
            "is_deprecated": i % 101 == 0,
        }
        yield json.dumps(record, ensure_ascii=False).encode()
    yield json.dumps({"record": "footer", "count": n}).encode()


def build_synthetic_catalog(root: str | Path, profile: str, n_declarations: int, seed: int = 7) -> Manifest:
    """Generate the synthetic stream and build it as `profile` under `root`; returns the manifest."""
    return build_catalog(synthetic_stream(n_declarations, seed), root, profile)


if __name__ == "__main__":
    # `python benchmarks/synthetic.py N [SEED]` writes the stream to stdout, as an extractor would.
    out = sys.stdout.buffer
    for line in synthetic_stream(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 7):
        out.write(line + b"\n")
