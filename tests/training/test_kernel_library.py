"""The compiled kernel's cache heals itself; only a compiler that fails falls back to torch.

Each test builds into its own cache folder ($ATTNBIAS_CACHE) with the module's loaded
library reset, so nothing here touches the user's cache or the other tests' kernel.
"""

from __future__ import annotations

import _ctypes
import ctypes
import shutil
import stat

import pytest

from attnbias import c_library
from attnbias.training import dispatch, kernel_library

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler"
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(kernel_library, "_LIB", None)
    return tmp_path / "cache"


def _is_elf(path) -> bool:
    return path.read_bytes()[:4] == b"\x7fELF"


def test_a_corrupted_cached_kernel_is_rebuilt_and_loads(cache):
    path = kernel_library.kernel_path()
    path.write_bytes(b"not a shared library")
    assert kernel_library.unavailable_reason() is None
    assert dispatch.backend("auto", "float64") == "c"
    assert _is_elf(path)  # replaced in place, for the next process too
    assert [p.name for p in cache.iterdir()] == [path.name]  # no temporary left behind


def _has_segment(path) -> bool:
    """Whether the library at `path` has the kernel's function; closed again (an open
    handle would make the loader return it for the rebuilt file)."""
    lib = ctypes.CDLL(str(path))
    try:
        return hasattr(lib, "segment")
    finally:
        _ctypes.dlclose(lib._handle)


def test_a_cached_library_without_the_kernels_function_is_rebuilt(cache):
    """The trial's case: a file that loads but lacks `segment` (an AttributeError in the
    workflow's onstart before, and no rebuild)."""
    path = kernel_library.kernel_path()
    other = cache.parent / "other.c"
    other.write_text("int other(void) { return 0; }\n")
    c_library.subprocess.run(
        [kernel_library.compiler(), "-shared", "-fPIC", "-o", str(path), str(other)], check=True
    )
    assert not _has_segment(path)  # the case itself
    assert kernel_library.unavailable_reason() is None
    assert dispatch.backend("auto", "float64") == "c"
    assert _has_segment(path)  # rebuilt in place


def test_a_truncated_cached_kernel_is_rebuilt(cache):
    path = kernel_library.kernel_path()
    path.write_bytes(path.read_bytes()[:100])
    assert kernel_library.unavailable_reason() is None
    assert _is_elf(path) and path.stat().st_size > 100


def test_no_compiler_falls_back_to_torch_with_the_reason(cache, monkeypatch):
    monkeypatch.setenv("CC", str(cache.parent / "no-such-compiler"))
    reason = kernel_library.unavailable_reason()
    assert reason is not None and "no C compiler" in reason
    assert dispatch.backend("auto", "float64") == "torch"
    line = dispatch.backend_line("auto", "float64")
    assert "training on torch" in line and "no-such-compiler" in line


def test_a_failing_compiler_falls_back_to_torch(cache, monkeypatch):
    monkeypatch.setenv("CC", "false")
    reason = kernel_library.unavailable_reason()
    assert reason is not None and "building the training kernel failed" in reason
    assert dispatch.backend("auto", "float64") == "torch"


def test_a_compiler_whose_output_never_loads_falls_back(cache, monkeypatch):
    """The rebuild is tried once: a second load failure is the compiler's, not the cache's."""
    fake = cache.parent / "fake-cc"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\necho garbage > "$2"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CC", str(fake))
    reason = kernel_library.unavailable_reason()
    assert reason is not None and "does not load" in reason
    assert dispatch.backend("auto", "float64") == "torch"


def test_the_console_line_names_the_kernel_when_it_loads(cache):
    line = dispatch.backend_line("auto", "float64")
    assert "compiled C kernel" in line and kernel_library.kernel_path().name in line
    assert "torch" in dispatch.backend_line("cuda", "float64")
    assert "torch" in dispatch.backend_line("cpu", "float32")


@pytest.mark.parametrize("how", ["a file in the way", "read-only"])
def test_an_unwritable_cache_falls_back_to_torch_naming_the_folder(cache, monkeypatch, how):
    """An empty cache folder that cannot be written: a KernelError naming the folder and
    ATTNBIAS_CACHE (not an OSError traceback at the workflow's start), and torch trains."""
    if how == "a file in the way":
        cache.parent.mkdir(exist_ok=True)
        cache.write_text("not a folder")
        folder = cache
    else:  # root ignores permission bits: the refusal a read-only folder gives, simulated
        cache.mkdir()
        folder = cache

        def read_only(*args, **kwargs):
            raise PermissionError(13, "Permission denied", str(cache))

        monkeypatch.setattr(c_library.tempfile, "mkstemp", read_only)
    reason = kernel_library.unavailable_reason()
    assert reason is not None
    assert f"the kernel cache {folder} cannot be written" in reason
    assert "ATTNBIAS_CACHE" in reason
    assert kernel_library.available() is False
    assert dispatch.backend("auto", "float64") == "torch"
    line = dispatch.backend_line("auto", "float64")
    assert "training on torch" in line and str(folder) in line


def test_kernel_is_built_once_per_source(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNBIAS_CACHE", str(tmp_path))
    first = kernel_library.kernel_path()
    assert first.parent == tmp_path and first.exists()
    assert kernel_library.kernel_path() == first
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temporary left over
