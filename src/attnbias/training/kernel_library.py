"""The compiled training kernel: _kernel.c built, cached and loaded, and its one entry.

The kernel (_kernel.c, C99 and libm) is compiled on first use with the machine's C compiler
($CC, else cc), cached (kernel_path) and loaded with ctypes: a later process loads it in
about a millisecond, and nothing here imports torch (2-3 s) or a JIT (numba: about 1 s to
import and load even a cached function, measured; see docs/speed.md). `segment` runs the
steps between two logged iterations in one call; training.kernel is the loop around it.
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

KERNEL_SOURCE = Path(__file__).with_name("_kernel.c")
# No -ffast-math and no FMA contraction: every operation rounds as IEEE says, so -inf and
# NaN behave as in the torch reference and the vector width (-march) changes no result.
CFLAGS = ("-O3", "-ffp-contract=off", "-fno-math-errno", "-std=c99", "-fPIC", "-shared")
NATIVE = ("-march=native",)  # tried first; the key holds the CPU's flags (shared homes)


def _cache_dir() -> Path:
    """Where the compiled kernel is kept: $ATTNBIAS_CACHE, else ~/.cache/attnbias."""
    if os.environ.get("ATTNBIAS_CACHE"):
        return Path(os.environ["ATTNBIAS_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attnbias"


def compiler() -> str:
    """The C compiler that builds the kernel: $CC, else cc (or gcc) on the PATH."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


def kernel_path(rebuild: bool = False) -> Path:
    """The shared library of _kernel.c for this source, compiler and flags; built if absent.

    Built once per machine (about 0.3 s), then only loaded (about a millisecond). The name
    holds a hash of the source and flags, so an edit builds a new one. `rebuild` replaces a
    cached file that would not load. Raises KernelError when no C compiler works.
    """
    source = KERNEL_SOURCE.read_bytes()
    cc = compiler()
    ident = repr((cc, CFLAGS, NATIVE, platform.machine(), _cpu_flags())).encode()
    key = hashlib.sha256(source + ident).hexdigest()[:16]
    target = _cache_dir() / f"attnbias_kernel_{key}.so"
    if rebuild or not target.exists():
        _build(cc, target)
    return target


def _build(compiler: str, target: Path) -> None:
    """Compile _kernel.c into `target`, atomically: concurrent jobs may build it at once."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".kernel.", suffix=".so")
    except OSError as err:  # read-only, not a folder, no space: say which and how to fix
        raise KernelError(
            f"the kernel cache {target.parent} cannot be written ({err.strerror or err}); "
            "set ATTNBIAS_CACHE to a writable folder"
        ) from None
    os.close(fd)
    try:
        errors = []
        for flags in ((*CFLAGS, *NATIVE), CFLAGS):
            cmd = [compiler, *flags, "-o", tmp, str(KERNEL_SOURCE), "-lm"]
            try:
                result = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as err:
                raise KernelError(f"no C compiler ({compiler!r}: {err})") from None
            if result.returncode == 0:
                os.replace(tmp, target)
                return
            errors.append(f"{' '.join(cmd)}:\n{result.stderr}")
        raise KernelError("building the training kernel failed:\n" + "\n".join(errors))
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


class KernelError(RuntimeError):
    """The C kernel could not be built (no working C compiler, or no writable cache)."""


_LIB = None


def _open(path: Path) -> ctypes.CDLL:
    """`path` loaded; OSError where it does not load, or loads but lacks the kernel's entry
    `segment` (another library in its place). That one is closed again: the loader would
    otherwise hand the same stale library back for the rebuilt file at the same path."""
    lib = ctypes.CDLL(str(path))
    if not hasattr(lib, "segment"):
        if hasattr(_ctypes, "dlclose"):  # POSIX, where the kernel is built
            _ctypes.dlclose(lib._handle)
        raise OSError(f"{path} loads but has no function 'segment': not this kernel")
    return lib


def _load() -> ctypes.CDLL:
    """The kernel loaded; a cached file that does not load (truncated, overwritten, built
    for another libc) or is another library is rebuilt once, so that it never downgrades
    later builds to torch."""
    path = kernel_path()
    try:
        return _open(path)
    except OSError as err:
        logging.getLogger(__name__).warning("rebuilding the cached kernel %s: %s", path, err)
    try:
        return _open(kernel_path(rebuild=True))
    except OSError as err:
        raise KernelError(f"the freshly built kernel does not load: {err}") from None


def _segment_fn():
    global _LIB
    if _LIB is None:
        lib = _load()
        lib.segment.restype = ctypes.c_int
        long, ptr = ctypes.c_long, ctypes.c_void_p
        # t0, t1, settings, B, n, T, Bp, 21 arrays (P .. mm_norm), n_thr, 3 arrays
        lib.segment.argtypes = [long, long, ptr, long, long, long, long, *[ptr] * 21, long]
        lib.segment.argtypes += [ptr] * 4  # thresholds, first, first_step, max_step
        _LIB = lib
    return _LIB.segment


def unavailable_reason() -> str | None:
    """Why the compiled kernel cannot be built and loaded here; None when it can."""
    try:
        _segment_fn()
    except KernelError as err:
        return str(err)
    return None


def available() -> bool:
    """Whether the compiled kernel can be built and loaded here."""
    reason = unavailable_reason()
    if reason is not None:
        logging.getLogger(__name__).warning("the compiled kernel is unavailable: %s", reason)
    return reason is None


def kernel_info() -> dict[str, str]:
    """Where a run trained on this path, for its provenance (cf. devices.device_info)."""
    return {
        "device": "cpu",
        "backend": "c",
        "kernel": kernel_path().name,
        "compiler": compiler(),
        "torch": "not used",
    }


def segment(t0, t1, settings, P, K, *arrays, thresholds, first, first_step, max_step):
    """Steps t0 .. t1 - 1 of the kernel, in place on contiguous float64 (int64: opt) arrays
    (their order and meaning: _kernel.c's `segment`, as kernel.KernelStepper passes them)."""
    B, n = arrays[2].shape  # y
    T = P.shape[1] // n
    for a in (settings, P, K, *arrays, thresholds, first, first_step, max_step):
        if not a.flags.c_contiguous or a.dtype.itemsize != 8:
            raise TypeError("the kernel takes C-contiguous 8-byte arrays")
    ptr = [a.ctypes.data for a in arrays]
    status = _segment_fn()(
        t0, t1, settings.ctypes.data, B, n, T, P.shape[0], P.ctypes.data, K.ctypes.data,
        *ptr, len(thresholds), thresholds.ctypes.data, first.ctypes.data, first_step.ctypes.data,
        max_step.ctypes.data,
    )  # fmt: skip
    if status != 0:
        raise MemoryError("the training kernel could not allocate its scratch space")
