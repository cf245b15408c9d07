"""Pinned profile definitions (`data/profiles.toml`): imports, toolchain, required packages.

The file ships inside the package, so `leanindex profile init` and `leanindex catalog build`
read the same definitions wherever leanindex is installed. A profile that is not defined there
(a user's own project) has no pinned imports: `catalog build` then needs `--imports`.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from ..base import Frozen
from ..catalog.layout import normalize_profile
from ..errors import ErrorCode, LeanIndexError


class PackageRequirement(Frozen):
    """A Lake `require`: package `name` from git `git` at `rev` (tag, branch or commit); `cache`
    says whether the package publishes prebuilt .olean files for `lake exe cache get`."""

    name: str
    git: str
    rev: str
    cache: bool = False


class ProfileDefinition(Frozen):
    """One pinned profile: `imports` (module names given to the extractor), `toolchain` (the
    `lean-toolchain` line), `require` (the package its project depends on, if any)."""

    name: str
    description: str
    imports: list[str]
    toolchain: str
    require: PackageRequirement | None = None


@lru_cache(maxsize=1)
def load_profiles() -> dict[str, ProfileDefinition]:
    """All pinned profiles by (lower-case) id, from the packaged `data/profiles.toml`."""
    text = (resources.files("leanindex") / "data" / "profiles.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)
    return {name: ProfileDefinition.model_validate({"name": name, **body}) for name, body in table.items()}


def pinned_profile(profile: str) -> ProfileDefinition | None:
    """The pinned definition of `profile` (any case), or None for a user-defined profile.

    Raises `LeanIndexError(invalid_request)` for a malformed profile id.
    """
    return load_profiles().get(normalize_profile(profile))


def require_pinned_profile(profile: str) -> ProfileDefinition:
    """The pinned definition of `profile`; raises `LeanIndexError(unknown_environment)` naming
    the pinned profiles when there is none."""
    definition = pinned_profile(profile)
    if definition is None:
        known = sorted(load_profiles())
        raise LeanIndexError(
            ErrorCode.UNKNOWN_ENVIRONMENT,
            f"no pinned profile {profile!r}; pinned profiles: {', '.join(known)}",
            {"profile": profile, "suggestions": known},
        )
    return definition


def profile_imports(profile: str, imports: list[str] | None) -> list[str]:
    """The modules to extract for `profile`: `imports` when given, else the pinned ones.

    Raises `LeanIndexError(invalid_request)` when neither exists (a user-defined profile
    without `--imports`).
    """
    if imports:
        return list(imports)
    definition = pinned_profile(profile)
    if definition is None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"profile {profile!r} is not pinned, so its imports are unknown: pass --imports MODULE "
            f"(the root modules of your project, e.g. --imports MyProject)",
            {"profile": profile},
        )
    return list(definition.imports)
