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

#: `leanindex.records.Kind`'s values: the kernel kinds `search --kinds` takes.
KINDS: tuple[str, ...] = ("axiom", "definition", "theorem", "opaque", "quotient", "inductive", "constructor", "recursor")

#: `leanindex.models.SearchRequest`'s fields, in the model's order: `leanindex search` has one
#: option per field (`cli.query.search_options`).
SEARCH_FIELDS: tuple[str, ...] = (
    "environment", "name_contains", "case_sensitive", "type_pattern", "namespace_prefixes", "kinds", "module_prefixes",
    "flags", "instances_of", "uses_constants", "text", "text_match", "order", "result_limit", "after",
)

#: Each `SearchRequest` field whose option `cli.query` derives rather than spells out: the JSON
#: Schema type of its value ("array" of strings, "string", "integer" or "boolean") and its
#: description, which `--help` shows.
SEARCH_DERIVED: dict[str, tuple[str, str]] = {
    "instances_of": (
        "string",
        "Instances of this class: those the catalog's instance table (doc-gen4's) files under it; for a class the table does not list (e.g. `DecidableEq`, filed under `Decidable`) or without a table (extractor catalogs), instances whose conclusion's head it is.",
    ),
    "uses_constants": ("array", 'Constants the value must all use ("used by").'),
    "text": (
        "string",
        "A question in words, LaTeX or Lean syntax, ranked best first (docs/ranking.md). Matches: declarations with any of its "
        "words in name, namespace, docstring or type (text_match). Refused when no word is left (invalid_request).",
    ),
}
