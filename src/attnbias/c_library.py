"""A C source of the package compiled on first use with the machine's C compiler ($CC, else
cc), cached by its content and loaded with ctypes: training.kernel_library's training kernel
(_kernel.c) and svm.max_simplex's pivots (_max_simplex.c). A later process loads a cached
library in about a millisecond, and nothing here imports a JIT (numba: about 1 s to import
and load even a cached function, measured; see docs/speed.md). Standard library only.
"""

from __future__ import annotations

import _ctypes
import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

# No -ffast-math and no FMA contraction: every operation rounds as IEEE says, so -inf and
# NaN behave as in the numpy and torch references and the vector width (-march) changes no
# result.
CFLAGS = ("-O3", "-ffp-contract=off", "-fno-math-errno", "-std=c99", "-fPIC", "-shared")
NATIVE = ("-march=native",)  # tried first; the key holds the CPU's flags (shared homes)


class LibraryError(RuntimeError):
    """A C source could not be built or loaded (no working C compiler, no writable cache)."""


def cache_dir() -> Path:
    """Where the compiled libraries are kept: $ATTNBIAS_CACHE, else ~/.cache/attnbias."""
    if os.environ.get("ATTNBIAS_CACHE"):
        return Path(os.environ["ATTNBIAS_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attnbias"


def compiler() -> str:
    """The C compiler that builds the libraries: $CC, else cc (or gcc) on the PATH."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


def library_path(source: Path, label: str, rebuild: bool = False) -> Path:
    """The shared library of `source` for this source, compiler and flags; built if absent
    (`label` names it in errors: "the training kernel").

    Built once per machine (about 0.3 s), then only loaded. The name holds a hash of the
    source and flags, so an edit builds a new one. `rebuild` replaces a cached file that
    would not load. Raises LibraryError when no C compiler works.
    """
    text = source.read_bytes()
    cc = compiler()
    ident = repr((cc, CFLAGS, NATIVE, platform.machine(), _cpu_flags())).encode()
    key = hashlib.sha256(text + ident).hexdigest()[:16]
    target = cache_dir() / f"attnbias_{source.stem.lstrip('_')}_{key}.so"
    if rebuild or not target.exists():
        _build(cc, source, target, label)
    return target


def _build(compiler: str, source: Path, target: Path, label: str) -> None:
    """Compile `source` into `target`, atomically: concurrent jobs may build it at once."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".kernel.", suffix=".so")
    except OSError as err:  # read-only, not a folder, no space: say which and how to fix
        raise LibraryError(
            f"the kernel cache {target.parent} cannot be written ({err.strerror or err}); "
            "set ATTNBIAS_CACHE to a writable folder"
        ) from None
    os.close(fd)
    try:
        errors = []
        for flags in ((*CFLAGS, *NATIVE), CFLAGS):
            cmd = [compiler, *flags, "-o", tmp, str(source), "-lm"]
            try:
                result = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as err:
                raise LibraryError(f"no C compiler ({compiler!r}: {err})") from None
            if result.returncode == 0:
                os.replace(tmp, target)
                return
            errors.append(f"{' '.join(cmd)}:\n{result.stderr}")
        raise LibraryError(f"building {label} failed:\n" + "\n".join(errors))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _cpu_flags() -> str:
    """The CPU's feature flags (Linux), so that a shared cache never serves a foreign build."""
    try:
        with open("/proc/cpuinfo") as fh:
            return next((line for line in fh if line.startswith("flags")), "")
    except OSError:
        return platform.processor()


def _open(path: Path, entry: str) -> ctypes.CDLL:
    """`path` loaded; OSError where it does not load, or loads but lacks the function
    `entry` (another library in its place). That one is closed again: the loader would
    otherwise hand the same stale library back for the rebuilt file at the same path."""
    lib = ctypes.CDLL(str(path))
    if not hasattr(lib, entry):
        if hasattr(_ctypes, "dlclose"):  # POSIX, where the libraries are built
            _ctypes.dlclose(lib._handle)
        raise OSError(f"{path} loads but has no function {entry!r}: not this library")
    return lib


def load(source: Path, entry: str, label: str) -> ctypes.CDLL:
    """`source` built (library_path) and loaded, checked to export `entry`; a cached file
    that does not load (truncated, overwritten, built for another libc) or is another
    library is rebuilt once, so that it never downgrades later runs to a fallback."""
    path = library_path(source, label)
    try:
        return _open(path, entry)
    except OSError as err:
        logging.getLogger(__name__).warning("rebuilding the cached library %s: %s", path, err)
    try:
        return _open(library_path(source, label, rebuild=True), entry)
    except OSError as err:
        raise LibraryError(f"{label}, freshly built, does not load: {err}") from None
