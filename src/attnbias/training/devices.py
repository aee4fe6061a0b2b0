"""Which torch device a run uses, and how its provenance names it."""

from __future__ import annotations

import torch


def resolve_device(device: str) -> torch.device:
    """'auto' picks CUDA where present, else the CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"config asks for device {device!r} but no CUDA device is present")
    return torch.device(device)


def device_info(device: torch.device) -> dict[str, str]:
    """Where a run trained, for its provenance: the device, its name on CUDA, torch's version."""
    info = {"device": str(device), "torch": torch.__version__}
    if device.type == "cuda":
        info["device_name"] = torch.cuda.get_device_name(device)
    return info
