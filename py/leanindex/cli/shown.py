"""Values the commands' options show in `--help` (choices, defaults, limits), copied here from
their homes, which load the engine, pyarrow or DuckDB on import: `leanindex COMMAND --help` reads
them without loading any of that. tests/test_startup.py checks every copy against its home.
"""

from __future__ import annotations

#: `leanindex.engine.diff.DIFF_CATEGORIES`: the change categories `catalog diff --category` takes.
DIFF_CATEGORIES: tuple[str, ...] = ("added", "removed", "retyped", "reprinted", "deprecated", "renamed")

#: `leanindex.checker.cluster.ON_ACTOR_DEATH`: what `--on-actor-death` may say.
ON_ACTOR_DEATH: tuple[str, ...] = ("retry", "backend_error")

#: `leanindex.checker.models.MAX_TIMEOUT_S`: the largest `--timeout` of a check, in seconds.
MAX_TIMEOUT_S: float = 300.0

#: `leanindex.docgen.links.DEFAULT_DOC_BASE`: where an imported declaration's doc_url points.
DEFAULT_DOC_BASE = "https://leanprover-community.github.io/mathlib4_docs/"

#: `leanindex.catalog.pack.PACK_SUFFIX`: a pack file's name ends with it.
PACK_SUFFIX = ".leanindex.tar"

#: `leanindex.catalog.pack.DEFAULT_MAX_BYTES`: the largest pack `catalog pull` takes by default (8 GiB).
DEFAULT_MAX_BYTES = 8 << 30

#: `leanindex.tools.TOOL_NAMINGS`: the names `--tool-names` may list tools under.
TOOL_NAMINGS: tuple[str, ...] = ("dotted", "underscore", "both")
