"""The one base of leanindex's data models.

Every model (stream records, manifests, requests, responses, reports) derives from `Frozen`:
unknown fields are refused, so a misspelt or unexpected field is an error rather than dropped,
and instances are immutable, so an answer cannot change after it was built (a copy with
`model_copy(update=...)` is the way to a different one). A model that must read data it does
not own in full (doc-gen4's files, an extractor's self-description) says so with its own
`extra` setting, next to the reason.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """An immutable model that refuses unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)
