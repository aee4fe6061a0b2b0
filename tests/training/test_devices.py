"""Where a run trains (attnbias.training.devices) on a machine without a GPU;
tests/project/test_cuda.py covers the GPU."""

from __future__ import annotations

import pytest
import torch

from attnbias.training import devices


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only fallback")
def test_resolve_device_cpu_only():
    assert devices.resolve_device("auto") == torch.device("cpu")
    assert devices.resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(RuntimeError, match="cuda"):
        devices.resolve_device("cuda")
    with pytest.raises(RuntimeError, match="cuda:1"):
        devices.resolve_device("cuda:1")
