"""Guards on reads of a tensor's value into Python.

On a GPU each such read (`float(t)`, `t.item()`, `bool(t)`, ...) waits for the device to
finish all work queued so far; a training step with none can run ahead of the device. On
the CPU there is nothing to wait for, so the tests forbid or count the reads instead.
"""

from __future__ import annotations

import contextlib

import torch

READS = ("item", "tolist", "__float__", "__int__", "__bool__", "__index__", "numpy")


class HostRead(AssertionError):
    """A tensor's value was read into Python where none may be."""


def _on_every_read(patch, action) -> None:
    """Make every read call `action(name)` first (it may raise), then read as usual."""
    for name in READS:
        original = getattr(torch.Tensor, name)

        def read(tensor, *args, _name=name, _original=original, **kwargs):
            action(_name)
            return _original(tensor, *args, **kwargs)

        patch.setattr(torch.Tensor, name, read)


@contextlib.contextmanager
def no_host_reads(monkeypatch):
    """Inside, every read of a tensor's value into Python raises HostRead."""

    def fail(name):
        raise HostRead(f"Tensor.{name} read a value from the device")

    with monkeypatch.context() as patch:
        _on_every_read(patch, fail)
        yield


class CountReads:
    """Counts the reads of tensors' values into Python while `patch` (a monkeypatch
    context) is active."""

    def __init__(self, patch):
        self.count = 0
        _on_every_read(patch, self._add)

    def _add(self, name) -> None:
        self.count += 1
