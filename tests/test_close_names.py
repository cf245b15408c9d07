"""Close declaration names (`engine.suggest.NameTable.suggest`, the one rule of every look-up:
single inspect, batch inspect, exists and the checker's unknown identifiers) favour the namespace
the name was written with: its names within a few edits, then its names sharing the first word
(`Nat.rec` -> `Nat.recAux`, `Nat.rec_zero`, `Nat.strongRecOn`), then other namespaces. Checked
on small tables and on the embedded Lean core catalog (`leanindex demo`), where doc-gen4 records
no recursor: `Nat.rec` is `not_recorded`, `Nat.recOn` `not_found`."""

from __future__ import annotations

import numpy as np
import pytest
from embedded_support import DemoRun

from leanindex.embedded import EMBEDDED_PROFILE
from leanindex.engine import Engine
from leanindex.engine.suggest import NameTable, stem, words
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import ExistsRequest, InspectManyRequest, InspectRequest

NAMES = [
    "Acc.recC", "Fin.rev", "List.foldlRecOn", "List.length", "Nat.add_comm", "Nat.gcd", "Nat.recAux", "Nat.rec_add_one",
    "Nat.rec_zero", "Nat.strongRecOn", "Nat.sub_self", "Quot.rec", "Quot.recOn", "ST.Ref.ref",
]


def test_words_and_stems_of_last_components() -> None:
    assert words("strongRecOn") == ["strong", "rec", "on"]
    assert words("rec_eq_recCompiled") == ["rec", "eq", "rec", "compiled"]
    assert words("HAdd") == ["h", "add"] and words("IOError") == ["io", "error"]
    assert words("add_comm'") == ["add", "comm"] and words("sqrt2") == ["sqrt"]
    assert (stem("recOn"), stem("add_comm"), stem("le_refl"), stem("x")) == ("rec", "add", "", "")


def test_the_namespace_asked_for_comes_first() -> None:
    table = NameTable.build(NAMES, np.zeros(len(NAMES), dtype=bool))
    # Its names holding the word `rec` (those starting with it first), then `rec` elsewhere
    # (distance 0), then a letter away elsewhere (the closer namespace, then the shorter name).
    assert table.suggest("Nat.rec") == [
        "Nat.recAux", "Nat.rec_zero", "Nat.rec_add_one", "Nat.strongRecOn", "Quot.rec", "Fin.rev", "Acc.recC", "ST.Ref.ref",
    ]
    # `recOn`'s two words: `strongRecOn` holds both.
    assert table.suggest("Nat.recOn")[:4] == ["Nat.strongRecOn", "Nat.recAux", "Nat.rec_zero", "Nat.rec_add_one"]
    assert table.suggest("List.rec")[0] == "List.foldlRecOn"
    # A misspelling in the namespace still comes first, before the same stem.
    assert table.suggest("Nat.add_comn")[0] == "Nat.add_comm"
    # A namespace without such names: the other namespaces' close names, as before.
    assert table.suggest("Array.recOn") == ["Quot.recOn", "Acc.recC", "Quot.rec"]
    # A first word under three characters is no stem: only edits count.
    assert table.suggest("Nat.su_self") == ["Nat.sub_self"]
    # Written without a namespace, a name may live in any: no namespace is preferred.
    assert table.suggest("recOn") == ["Quot.recOn", "Acc.recC", "Quot.rec"]


def test_hidden_names_are_never_suggested() -> None:
    hidden = np.asarray([name == "Nat.recAux" for name in NAMES])
    assert "Nat.recAux" not in NameTable.build(NAMES, hidden).suggest("Nat.rec")


@pytest.fixture(scope="module")
def core(embedded_demo: DemoRun) -> Engine:
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    return Engine(embedded_demo.root)


def _refused(call) -> LeanIndexError:  # type: ignore[no-untyped-def]
    with pytest.raises(LeanIndexError) as raised:
        call()
    return raised.value


def test_recursors_of_the_core_catalog_get_their_namespace(core: Engine) -> None:
    answer = core.exists(ExistsRequest(environment=EMBEDDED_PROFILE, names=["Nat.rec", "Nat.recOn", "List.rec"]))
    rec, rec_on, list_rec = answer.results
    assert (rec.error_code, rec_on.error_code, list_rec.error_code) == ("not_recorded", "not_found", "not_recorded")
    assert rec.closest[:3] == ["Nat.recAux", "Nat.recCompiled", "Nat.rec_eq_recCompiled"] and "Nat.strongRecOn" in rec.closest
    assert rec_on.closest[:2] == ["Nat.strongRecOn", "Nat.caseStrongRecOn"] and "Nat.recAux" in rec_on.closest
    assert all(name.startswith("List.") and "RecOn" in name for name in list_rec.closest[:3])


def test_single_and_batch_inspect_give_the_same_close_names(core: Engine) -> None:
    unrecorded = _refused(lambda: core.inspect(InspectRequest(environment=EMBEDDED_PROFILE, declaration_name="Nat.rec")))
    missing = _refused(lambda: core.inspect(InspectRequest(environment=EMBEDDED_PROFILE, declaration_name="Nat.recOn")))
    assert (unrecorded.code, missing.code) == (ErrorCode.NOT_RECORDED, ErrorCode.NOT_FOUND)
    batch = core.inspect_many(InspectManyRequest(environment=EMBEDDED_PROFILE, names=["Nat.rec", "Nat.recOn"]))
    assert [r.closest for r in batch.results] == [unrecorded.details["suggestions"], missing.details["suggestions"]]
    assert unrecorded.details["suggestions"][0] == "Nat.recAux"
