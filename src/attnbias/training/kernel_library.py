"""The compiled training kernel: _kernel.c built, cached and loaded (attnbias.c_library),
and its one entry.

The kernel (_kernel.c, C99 and libm) is compiled on first use with the machine's C compiler
($CC, else cc), cached (kernel_path) and loaded with ctypes: a later process loads it in
about a millisecond, and nothing here imports torch (2-3 s) or a JIT (numba: about 1 s to
import and load even a cached function, measured; see docs/speed.md). `segment` runs the
steps between two logged iterations in one call; training.kernel is the loop around it.
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path

from attnbias import c_library
from attnbias.c_library import compiler

KERNEL_SOURCE = Path(__file__).with_name("_kernel.c")
LABEL = "the training kernel"
# The kernel could not be built or loaded (no working C compiler, or no writable cache).
KernelError = c_library.LibraryError


def kernel_path(rebuild: bool = False) -> Path:
    """The shared library of _kernel.c for this source, compiler and flags; built if absent
    (c_library.library_path). Raises KernelError when no C compiler works."""
    return c_library.library_path(KERNEL_SOURCE, LABEL, rebuild)


_LIB = None


def _segment_fn():
    global _LIB
    if _LIB is None:
        lib = c_library.load(KERNEL_SOURCE, "segment", LABEL)
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
