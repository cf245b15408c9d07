"""Liveness and readiness of a server: the answers of `GET /healthz` and `GET /readyz`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..base import Frozen
from ..errors import ErrorCode, LeanIndexError
from ..models import EnvironmentsResponse


class Health(Frozen):
    """`GET /healthz`: the process answers."""

    status: Literal["ok"] = Field(default="ok", description="Always `ok`.")


class Readiness(Frozen):
    """`GET /readyz` when ready: every listed profile verified against its manifest."""

    ready: Literal[True] = Field(default=True, description="Always true (not ready is an error).")
    environments: list[str] = Field(description="The verified profile ids.")


def readiness(response: EnvironmentsResponse) -> Readiness:
    """Ready when there is at least one profile and every profile's catalog verified against
    its manifest. Raises `LeanIndexError(catalog_unavailable)` otherwise, with the profiles
    that did not verify in `details.unverified`."""
    failing = [s.environment for s in response.environments if not s.verified]
    if failing or not response.environments:
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE,
            "not ready: " + (f"unverified catalogs {', '.join(failing)}" if failing else "no profile under the root"),
            {"unverified": failing},
        )
    return Readiness(environments=[s.environment for s in response.environments])
