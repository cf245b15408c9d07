"""A small catalog with every kind of doubt an import records: approximate fields with blind
spots, absent facts and missing modules (`GAPPY`), and the same records exact (`EXACT`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import BlindSpot, CatalogGaps, MissingModule
from leanindex.catalog.verify import verify_catalog
from streamkit import build, declaration, encode, footer, header

MODULES = ["A.Core", "A.Data", "B.Main"]
APPROXIMATE = ["is_unsafe", "kind", "type_constants"]
SUM_SPOT = BlindSpot(field="type_constants", notation="∑", constant="Sum", signatures=5, linked=2)
INTER_SPOT = BlindSpot(field="type_constants", notation="⋂", constant="Inter", signatures=3, linked=0)
KIND_SPOT = BlindSpot(field="kind", notation="instance", constant="Inhabited", signatures=1, linked=0)
ABSENT = ["hidden", "kind:recursor", "flag:deprecated"]
GONE = MissingModule(module="A.Gone", imported_by=["A.Core"], linked_names=["Gone.lemma"], linking_declarations=1)
LOST = MissingModule(module="C.Lost", imported_by=["B.Main"], linked_names=["Lost.a", "Lost.b"], linking_declarations=2)

RECORDS = [
    declaration(["Bar", "baz"], module="B.Main", type="Nat → Gone.lemma", type_constants=["Gone.lemma", "Nat", "Sum"]),
    declaration(["Bar", "inst"], kind="definition", module="B.Main", type="Inhabited Nat", type_constants=["Inhabited", "Nat"], is_instance=True),
    declaration(["Bar", "lost"], module="B.Main", type="Lost.a = Lost.b", type_constants=["Eq", "Lost.a", "Lost.b"]),
    declaration(["Foo", "bar"], kind="definition", module="A.Data", type="Nat", type_constants=["Nat"], is_unsafe=True),
    declaration(["Foo", "sum_le"], module="A.Core", type="Sum ≤ Nat", type_constants=["LE.le", "Nat", "Sum"], doc="not injective"),
    declaration(["Foo", "unrelated"], module="A.Core", type="True", type_constants=["True"]),
]


def _stream(approximate: list[str]) -> list[bytes]:
    return [encode(header(MODULES, approximate_fields=approximate)), *map(encode, RECORDS), encode(footer(len(RECORDS)))]


def _reseal(root: Path, profile: str, **source: Any) -> None:
    """Give `profile`'s manifest the source facts and gaps of `GAPPY`, sealed again, in both of
    its copies (served and pinned), as an importer that records them would have written it."""
    paths = CatalogPaths.of(root, profile)
    manifest = verify_catalog(paths)
    gaps = CatalogGaps(missing_modules=[GONE, LOST])
    changed = manifest.model_copy(update={"source": manifest.source.model_copy(update=source), "gaps": gaps}).sealed()
    for path in (paths.served_manifest, paths.manifest):
        path.write_text(changed.to_json(), encoding="utf-8")



def build_gappy(root: Path) -> None:
    """Profiles `gappy` (with the doubts above) and `exact` (none) under `root`."""
    build(root, "gappy", _stream(APPROXIMATE))
    _reseal(root, "gappy", absent_facts=ABSENT, blind_spots=[SUM_SPOT, INTER_SPOT, KIND_SPOT])
    build(root, "exact", _stream([]))
