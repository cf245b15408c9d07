"""Environment manifests (`leanindex.environment-manifest/v1`): what a catalog was built from.

A manifest binds `catalog/<profile>/` to its environment: the imports, the Lean version and
commit, the toolchain line, every Lake package's exact revision, a digest over every loaded
module's `.olean`, the extractor, and the sha256 of each catalog file. `environment_digest` is
the sha256 of the canonical JSON of the identity fields (everything but `catalog`, `gaps` and
the two digests), so two catalogs of the same environment share it whatever their build time.
`manifest_digest` is the sha256 of the canonical JSON of every other field (identity, catalog
counts and digests, builder version, build time, and `environment_digest`), so no field can be
edited without verification noticing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from ..base import Frozen
from ..errors import ErrorCode, LeanIndexError
from ..identity import EnvironmentIdentity, display_profile
from ..names import NameSyntaxError, format_name, parse_name
from ..records import FLAG_FIELDS, DeclarationRecord, Kind, LeanInfo
from ..storage import storage_failure
from .files import regular_file_sha256
from .layout import catalog_file_problem, manifest_label

MANIFEST_SCHEMA = "leanindex.environment-manifest/v1"
SourceKind = Literal["lean", "doc-gen4", "stream"]


class _Model(Frozen):
    # `schema` is a field name pydantic reserves; it is read and written by that alias.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PackageRevision(_Model):
    """One Lake package from `lake-manifest.json`: its name, exact git revision and URL."""

    name: str = Field(description="Package name.")
    rev: str | None = Field(description="Exact git revision; null when unknown.")
    url: str | None = Field(default=None, description="Git URL; null when unknown.")


class ExtractorIdentity(_Model):
    """The program that produced the declaration stream, and a sha256 of its sources if known."""

    name: str = Field(description="The writing program, e.g. `leanindex-extract`.")
    version: str = Field(description="Its version.")
    digest: str | None = Field(default=None, description="sha256 of its sources; null when unknown.")


HIDDEN_FACT = "hidden"
"""The absent fact key for private and internal declarations (a source that leaves them out)."""


def kind_fact(kind: Kind) -> str:
    """The absent fact key of a kernel kind a source never lists: `kind:<kind>` (`kind:recursor`)."""
    return f"kind:{Kind(kind).value}"


def flag_fact(record_field: str) -> str:
    """The absent fact key of a flag a source cannot know, from the record's boolean field:
    `is_deprecated` -> `flag:deprecated` (the key of the search `flags` filter, which is the
    field without `is_`). Raises `ValueError` for a name that is not a flag of the record."""
    if record_field not in FLAG_FIELDS or not record_field.startswith("is_"):
        raise ValueError(f"{record_field!r} is not a flag field of a declaration record")
    return f"flag:{record_field.removeprefix('is_')}"


#: Every key an `absent_facts` list may hold.
FACT_KEYS: frozenset[str] = frozenset(
    [HIDDEN_FACT, *(kind_fact(kind) for kind in Kind), *(flag_fact(f) for f in FLAG_FIELDS if f.startswith("is_"))]
)


def _record_field(value: str) -> str:
    if value not in DeclarationRecord.model_fields:
        raise ValueError(f"{value!r} is not a field of a declaration record")
    return value


def _lean_name(value: str, module: bool = False) -> str:
    """`value` if it is a Lean name in its canonical printing (`names.parse_name` then
    `format_name` give it back: `/srv/x` is not, `«/srv/x»` is), with text components only for
    a module name; `ValueError` otherwise (a manifest is read as hostile input)."""
    try:
        components = parse_name(value)
    except NameSyntaxError as error:
        raise ValueError(f"{value!r} is not a Lean name: {error}") from None
    if format_name(components) != value:
        raise ValueError(f"{value!r} is not a Lean name as Lean prints it ({format_name(components)!r})")
    if module and not all(isinstance(c, str) for c in components):
        raise ValueError(f"{value!r} is not a module name (a component is numeric)")
    return value


class BlindSpot(_Model):
    """A known blind spot of an approximate field: a notation the source prints without linking
    the constant it stands for, so a filter on that constant misses the declarations showing it.
    `description` says it in one sentence."""

    field: str = Field(description="The record field it affects, e.g. `type_constants`.")
    notation: str = Field(description="The printed notation, e.g. `∑ x ∈ s, f x`.")
    constant: str = Field(description="The constant the notation stands for, e.g. `Finset.sum`.")
    signatures: int = Field(ge=0, description="Signatures in this catalog showing the notation.")
    linked: int = Field(ge=0, description="Of those, how many link `constant`.")

    @field_validator("field")
    @classmethod
    def _field(cls, value: str) -> str:
        return _record_field(value)

    @field_validator("constant")
    @classmethod
    def _constant(cls, value: str) -> str:
        return _lean_name(value)

    @model_validator(mode="after")
    def _counts(self) -> BlindSpot:
        if self.linked > self.signatures:
            raise ValueError(f"a blind spot links {self.linked} of {self.signatures} signatures")
        return self

    @property
    def description(self) -> str:
        """One sentence for people: "`∑ x ∈ s, f x` is not linked to `Finset.sum` (14 of 2,613
        signatures showing it link it)"."""
        return (f"`{self.notation}` is not linked to `{self.constant}` in {self.field} "
                f"({self.linked:,} of {self.signatures:,} signatures showing it link it)")


class SourceInfo(_Model):
    """Where the records come from: the Lean extractor, doc-gen4 output, or a bare stream;
    which record fields are approximate there, which facts it never has, the known blind spots
    of its approximate fields; and repository commits the source names."""

    kind: SourceKind = Field(description="`lean` (the extractor), `doc-gen4` or `stream`.")
    approximate_fields: list[str] = Field(default_factory=list, description="Record fields this source only approximates.")
    commits: dict[str, str] = Field(default_factory=dict, description="Repository -> commit its data came from.")
    absent_facts: list[str] = Field(
        default_factory=list,
        description="Facts this source never has, sorted: `hidden` (private and internal declarations are left out), "
        "`kind:<kind>` (a kernel kind it never lists, e.g. `kind:recursor`), `flag:<flag>` (a flag it cannot know, "
        "e.g. `flag:deprecated`; the keys of the search `flags` filter). A question on one cannot be answered.",
    )
    @field_validator("approximate_fields")
    @classmethod
    def _approximate(cls, value: list[str]) -> list[str]:
        return [_record_field(name) for name in value]

    @field_validator("absent_facts")
    @classmethod
    def _facts(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - FACT_KEYS)
        if unknown:
            raise ValueError(f"unknown absent fact {unknown[0]!r} (known: {', '.join(sorted(FACT_KEYS))})")
        return value

    blind_spots: list[BlindSpot] = Field(
        default_factory=list,
        description="Known blind spots of the approximate fields (notations the source does not link), by field and constant.",
    )


class MissingModule(_Model):
    """A module the catalog's modules import or whose declarations their signatures link, with
    no declarations in the catalog (no declaration file in the source, or one left out)."""

    module: str = Field(description="The module's name.")
    imported_by: list[str] = Field(description="Catalog modules that import it directly, sorted.")
    linked_names: list[str] = Field(
        description="Its declarations known from links in the catalog's signatures, in `Name.lt` order."
    )
    linking_declarations: int = Field(ge=0, description="Catalog declarations whose signatures link one of `linked_names`.")

    @field_validator("module")
    @classmethod
    def _module(cls, value: str) -> str:
        return _lean_name(value, module=True)

    @field_validator("imported_by")
    @classmethod
    def _importers(cls, value: list[str]) -> list[str]:
        return [_lean_name(name, module=True) for name in value]

    @field_validator("linked_names")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        return [_lean_name(name) for name in value]


class HostModule(_Model):
    """A module of the catalog outside the profile's packages: code of the project the source
    (doc-gen4) was run in, not of the environment the profile names."""

    module: str = Field(description="The module's name.")
    declarations: int = Field(ge=0, description="Its declarations in the catalog.")

    @field_validator("module")
    @classmethod
    def _module(cls, value: str) -> str:
        return _lean_name(value, module=True)


class CatalogGaps(_Model):
    """What the catalog knows it lacks or holds besides the profile's environment."""

    missing_modules: list[MissingModule] = Field(
        default_factory=list, description="Modules referenced but not held, sorted by module name."
    )
    host_modules: list[HostModule] = Field(
        default_factory=list, description="Modules held from outside the profile's packages, sorted by module name."
    )


class CatalogDigests(_Model):
    """The built files: counts and sha256 of each (paths relative to `catalog/<profile>/`)."""

    declaration_count: int = Field(description="Declarations in the catalog.")
    visible_count: int = Field(description="Those neither private nor internal.")
    declarations_parquet_sha256: str = Field(description="sha256 of `declarations.parquet`.")
    catalog_duckdb_sha256: str = Field(description="sha256 of `catalog.duckdb`.")
    files: dict[str, str] = Field(description="Catalog file name -> its sha256.")
    builder_version: str = Field(description="leanindex version that built the catalog.")
    built_at: str = Field(description="Build time, ISO 8601 UTC.")


class Manifest(_Model):
    """A whole manifest; see the module docstring for the meaning of each part."""

    schema_: Literal["leanindex.environment-manifest/v1"] = Field(alias="schema", description="Manifest format id.")
    profile: str = Field(description="Profile id (lower case).")
    imports: list[str] = Field(description="The modules the environment imports.")
    platform: str | None = Field(description="Build host, e.g. `x86_64-linux`; null when unknown.")
    lean: LeanInfo = Field(description="The Lean that produced the environment.")
    toolchain: str | None = Field(description="The project's `lean-toolchain` line; null when unknown.")
    packages: list[PackageRevision] | None = Field(description="Every Lake package (`lake-manifest.json`); null when unknown.")
    mathlib_commit: str | None = Field(description="Mathlib's revision among `packages`; null without Mathlib.")
    modules_digest: str | None = Field(description="sha256 over every loaded module's `.olean`; null when unknown.")
    module_list_sha256: str = Field(description="sha256 over the sorted module names.")
    module_count: int = Field(description="Modules loaded in the environment.")
    extractor: ExtractorIdentity = Field(description="The program that wrote the stream.")
    source: SourceInfo = Field(description="Where the records come from.")
    environment_digest: str = Field(description="sha256 of the identity fields: the environment's identity.")
    catalog: CatalogDigests = Field(description="Counts and sha256 of the built files.")
    gaps: CatalogGaps = Field(
        default_factory=CatalogGaps,
        description="Modules the catalog references but does not hold, and modules it holds from outside the profile's "
        "packages (covered by `manifest_digest`, not by `environment_digest`).",
    )
    manifest_digest: str = Field(description="sha256 of every other field.")

    def identity(self) -> dict[str, Any]:
        """The fields `environment_digest` covers, as JSON-ready data."""
        data = self._digested()
        for key in ("catalog", "gaps", "environment_digest", "manifest_digest"):
            data.pop(key, None)
        return data

    def content(self) -> dict[str, Any]:
        """The fields `manifest_digest` covers (all but itself), as JSON-ready data."""
        data = self._digested()
        data.pop("manifest_digest")
        return data

    def _digested(self) -> dict[str, Any]:
        """Every field as JSON-ready data, but the later additions `gaps`, `source.absent_facts`
        and `source.blind_spots` while they are empty: a manifest written before they existed
        keeps its digests, and one that records any of them is covered by them."""
        data = self.model_dump(mode="json", by_alias=True)
        if data["gaps"] == CatalogGaps().model_dump(mode="json"):
            data.pop("gaps")
        for key in ("absent_facts", "blind_spots"):
            if not data["source"][key]:
                data["source"].pop(key)
        return data

    def sealed(self) -> Manifest:
        """This manifest with both digests computed from its other fields."""
        with_identity = self.model_copy(update={"environment_digest": environment_digest(self.identity())})
        return with_identity.model_copy(update={"manifest_digest": manifest_digest(with_identity.content())})

    def to_json(self) -> str:
        """Stable, human-diffable JSON (sorted keys, two-space indent, trailing newline)."""
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, no spaces, UTF-8) for digests."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def environment_digest(identity: dict[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of a manifest's identity fields."""
    return hashlib.sha256(canonical_json(identity)).hexdigest()


def manifest_digest(content: dict[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of a manifest's fields other than `manifest_digest`."""
    return hashlib.sha256(canonical_json(content)).hexdigest()


def module_list_sha256(modules: list[str]) -> str:
    """sha256 over the sorted module names, one per line."""
    return hashlib.sha256("\n".join(sorted(modules)).encode()).hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 (hex) of the regular file at `path`, read in 4 MiB chunks within the size it had
    when opened (`files.regular_file_sha256`). Raises `OSError` when it cannot be read, is no
    regular file (a FIFO or device is refused before any read) or changes size while read."""
    return regular_file_sha256(path)


_MATHLIB_URL = re.compile(r"github\.com/leanprover-community/mathlib4?(\.git)?/?$")


def mathlib_commit_of(packages: list[PackageRevision] | None) -> str | None:
    """The commit of Mathlib among `packages` (the one rule for a manifest's `mathlib_commit`):
    the package named `mathlib` (any case) or, failing that, the one fetched from
    `github.com/leanprover-community/mathlib4` (a project may name the requirement differently)."""
    for package in packages or []:
        if package.name.lower() == "mathlib":
            return package.rev
    for package in packages or []:
        if package.url and _MATHLIB_URL.search(package.url):
            return package.rev
    return None


def environment_identity(profile: str, manifest: Manifest) -> EnvironmentIdentity:
    """The environment identity every answer about `profile` carries, from its manifest (the
    one builder of it: search, inspect, environments and check answers all use it)."""
    return EnvironmentIdentity(
        environment=display_profile(profile),
        environment_digest=manifest.environment_digest,
        lean_version=manifest.lean.version,
        lean_commit=manifest.lean.githash,
        mathlib_commit=manifest.mathlib_commit,
        source=manifest.source.kind,
        approximate_fields=manifest.source.approximate_fields,
    )


def read_manifest(path: Path, label: str | None = None) -> Manifest:
    """Load and validate a manifest file (see `parse_manifest`).

    `label` names the file in messages and `details.manifest` (default `layout.manifest_label`:
    relative to the root for a root's manifests, never the root itself). Raises
    `LeanIndexError(catalog_unavailable)` when it is missing or unreadable, and
    `parse_manifest`'s errors.
    """
    shown = label or manifest_label(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LeanIndexError(ErrorCode.CATALOG_UNAVAILABLE, f"no manifest at {shown}", _where(shown, path)) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise LeanIndexError(ErrorCode.CATALOG_UNAVAILABLE, f"cannot read {shown}: {reason}", _where(shown, path)) from None
    return parse_manifest(text, shown, _where(shown, path))


def parse_manifest(text: str, label: str, details: dict[str, Any] | None = None) -> Manifest:
    """Validate a manifest's JSON text; `label` names it in messages, `details` (default
    `{"manifest": label}`) go with every error.

    Raises `LeanIndexError`: `catalog_unavailable` when it is not a valid manifest, or when a
    `catalog.files` key is not a catalog file's name (`layout.catalog_file_problem`: a key is a
    name, never a path; `details.file` holds the key); `digest_mismatch` when its
    `environment_digest` does not match its identity fields or its `manifest_digest` does not
    match its other fields (a hand-edited manifest; `details.field` names the digest that
    failed). The digests are checked first: an edit that was not resealed is a mismatch.
    """
    where = details if details is not None else {"manifest": label}
    try:
        manifest = Manifest.model_validate_json(text)
    except ValidationError as error:
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE,
            f"{label} is not a valid {MANIFEST_SCHEMA} manifest: {error.errors()[0]['msg']}",
            where,
        ) from None
    checks = (
        ("environment_digest", manifest.environment_digest, environment_digest(manifest.identity()), "identity fields"),
        ("manifest_digest", manifest.manifest_digest, manifest_digest(manifest.content()), "fields (one was edited after the build)"),
    )
    for field, recorded, computed, covered in checks:
        if recorded != computed:
            raise LeanIndexError(
                ErrorCode.DIGEST_MISMATCH,
                f"{label}: {field} does not match the manifest's {covered}",
                {**where, "field": field, "recorded": recorded, "computed": computed},
            )
    for key in sorted(manifest.catalog.files):
        problem = catalog_file_problem(key)
        if problem is not None:
            raise LeanIndexError(
                ErrorCode.CATALOG_UNAVAILABLE,
                f"{label} lists catalog file {key!r}, which is refused: {problem} (a manifest names the files "
                "of a catalog folder, never paths)",
                {**where, "file": key},
            )
    return manifest


def _where(label: str, path: Path) -> dict[str, str]:
    """`details` naming a manifest: its label, or only its file name when the label is an
    absolute path (details never carry one)."""
    return {"manifest": path.name if os.path.isabs(label) else label}


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and `os.replace`, so readers see the old
    or the new file whole. Raises `LeanIndexError` `storage_full` or `io_error` (naming `path`)
    when it cannot, leaving the old file as it was."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as error:
        raise _write_failure(error, path, text) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _write_failure(error, path, text) from None
        raise


def _write_failure(error: OSError, path: Path, text: str) -> LeanIndexError:
    coded = storage_failure(error, path=path, needed_bytes=len(text.encode()))
    assert coded is not None  # every OSError is coded
    return coded
