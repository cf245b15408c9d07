"""The pinned manifest `manifests/<profile>.json`: a copy of the served catalog's manifest.

Serving reads only the manifest switched in with the catalog (`catalog/<profile>/manifest.json`).
The pinned copy is what CI commits and diffs; a build writes it right after the switch, and a
build killed between the two leaves it behind, so `catalog verify` brings it back in line.
"""

from __future__ import annotations

from typing import Literal

from .layout import CatalogPaths
from .manifest import Manifest, write_atomically

#: `current`: already equal; `written`: there was none; `rewritten`: it differed (a build
#: killed after its switch, or an edit) and now equals the served manifest.
PinStatus = Literal["current", "written", "rewritten"]


def pin_manifest(paths: CatalogPaths, served: Manifest) -> PinStatus:
    """Make `manifests/<profile>.json` equal to `served` (the verified served manifest), writing
    atomically only when it differs. Raises `OSError` when it cannot be written."""
    text = served.to_json()
    try:
        current = paths.manifest.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    except (OSError, UnicodeDecodeError):
        current = ""
    if current == text:
        return "current"
    write_atomically(paths.manifest, text)
    return "written" if current is None else "rewritten"
