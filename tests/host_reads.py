"""A guard that fails on any read of a tensor's value into Python.

On a GPU each such read (`float(t)`, `t.item()`, `bool(t)`, ...) waits for the device to
finish all work queued so far; a training step with none can run ahead of the device. On
the CPU there is nothing to wait for, so the tests count the reads instead.
"""

from __future__ import annotations

import contextlib

import torch

READS = ("item", "tolist", "__float__", "__int__", "__bool__", "__index__", "numpy")


class HostRead(AssertionError):
    """A tensor's value was read into Python where none may be."""


@contextlib.contextmanager
def no_host_reads(monkeypatch):
    """Inside, every read of a tensor's value into Python raises HostRead."""
    with monkeypatch.context() as patch:
        for name in READS:

            def fail(self, *args, _name=name, **kwargs):
                raise HostRead(f"Tensor.{_name} read a value from the device")

            patch.setattr(torch.Tensor, name, fail)
        yield
