"""README's "Where to add what" table names real places: every file, folder and
`module.attribute` it mentions exists (a table that sends a newcomer to a file that moved fails
here, not in their first hour)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGE = REPOSITORY / "py" / "leanindex"

_PATH = re.compile(r"^[A-Za-z_][\w/]*(\.py|\.lean|/)$")
_ATTRIBUTE = re.compile(r"^(?P<module>[a-z_][a-z_/]*)\.(?P<attr>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)$")


def table_references() -> list[str]:
    """The backticked names of the table's "to add" and "touch" columns."""
    text = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    section = text.split("### Where to add what", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| ---")][1:]
    assert rows, "the table is gone"
    names: list[str] = []
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for cell in cells[:2]:
            names += re.findall(r"`([^`]+)`", cell)
    return names


def resolves(reference: str) -> bool:
    """A path (under the package or the repository) or a `module.attribute` that imports."""
    if _PATH.match(reference):
        return (PACKAGE / reference).exists() or (REPOSITORY / reference).exists()
    match = _ATTRIBUTE.match(reference)
    if match is None:
        return True  # prose in backticks (an option, a call), not a place
    module = "leanindex." + match["module"].replace("/", ".")
    try:
        found: object = importlib.import_module(module)
    except ModuleNotFoundError:
        return False
    for part in match["attr"].split("."):
        if not hasattr(found, part):
            return False
        found = getattr(found, part)
    return True


@pytest.mark.parametrize("reference", sorted(set(table_references())))
def test_every_place_the_table_names_exists(reference: str) -> None:
    assert resolves(reference), f"README's 'Where to add what' names {reference!r}, which does not exist"


def test_the_table_names_places() -> None:
    places = [r for r in table_references() if _PATH.match(r) or _ATTRIBUTE.match(r)]
    assert len(places) >= 20, places
