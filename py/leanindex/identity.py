"""Who an environment is, the bottom of the contracts: profile ids (how users name an
environment, stored lower case, shown upper case) and the environment identity every answer
about a catalog carries. The catalog layer builds on this module and on `records`; the request
and response models (`models`, `checker.models`) build on all of them.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, StringConstraints

from .base import Frozen
from .errors import ErrorCode, LeanIndexError

PROFILE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
"""A profile id: 1-64 ASCII letters, digits, `_` and `-`, starting with a letter or digit;
case-insensitive (stored lower case, shown upper case)."""

ProfileId = Annotated[
    str,
    StringConstraints(pattern=PROFILE_ID_PATTERN),
    Field(description="Profile id such as CORE or MATHLIB; case-insensitive."),
]


def normalize_profile(profile: str) -> str:
    """The canonical (lower-case) profile id used for file names; ids are case-insensitive.

    Raises `LeanIndexError(invalid_request)` for an id that does not match
    `PROFILE_ID_PATTERN`.
    """
    if not profile.isascii() or not re.fullmatch(PROFILE_ID_PATTERN, profile):
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"invalid profile id {profile!r}: use letters, digits, '_' and '-' (at most 64)",
            {"profile": profile},
        )
    return profile.lower()


def display_profile(profile: str) -> str:
    """A profile id as answers and messages show it: upper case (`core` -> `CORE`)."""
    return profile.upper()


class EnvironmentIdentity(Frozen):
    """Which environment answered: profile id, manifest digest, Lean and Mathlib revisions, and
    where the catalog's records come from, with the record fields that source only
    approximates (from the manifest's `source`; e.g. doc-gen4 data lists no instance arguments
    among a type's constants, so a type-constant search there can miss declarations)."""

    environment: str = Field(description="Profile id, upper case (e.g. CORE).")
    environment_digest: str = Field(description="sha256 of the manifest's identity fields.")
    lean_version: str | None = Field(description="Lean version of the environment (manifest `lean.version`).")
    lean_commit: str | None = Field(description="Lean commit (manifest `lean.githash`); null when unknown.")
    mathlib_commit: str | None = Field(description="Mathlib commit (manifest); null without Mathlib.")
    source: str | None = Field(default=None, description="`lean` (the extractor), `doc-gen4` or `stream`.")
    approximate_fields: list[str] = Field(default_factory=list, description="Record fields this source only approximates.")

    @classmethod
    def unpinned(cls, profile: str, digest: str) -> EnvironmentIdentity:
        """The identity of `profile` when no verified manifest pins it: the id and `digest`,
        every revision null (`catalog.manifest.environment_identity` builds the pinned one)."""
        return cls(environment=display_profile(profile), environment_digest=digest, lean_version=None, lean_commit=None, mathlib_commit=None)
