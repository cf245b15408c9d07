"""The embedded sample: a small declaration stream of real Lean core declarations.

`data/core-sample.ndjson` was written by the team from Lean core (`Init`): 76 constants in
`Name.lt` order, with private, internal, instance, class, structure, deprecated, unsafe,
quotient, `«»`-escaped and numeric-component names, so every part of the pipeline has something
to chew on without a Lean toolchain.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_stream_path() -> Path:
    """Path of the embedded sample stream (inside the installed package)."""
    return Path(str(resources.files("leanindex") / "data" / "core-sample.ndjson"))
