"""A real-data run's checkpoint: the random state it holds, and its writing with a digest of
its content and its safe reading on resume (attnbias.realdata.trainer).

A checkpoint holds only tensors, numbers, strings and their containers, read back with
torch's restricted unpickler; one that does not load that way, or whose content differs
from its digest, is refused by name, and so is a link or anything but a regular file in a
checkpoint's place (this pipeline writes regular files), unread.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
from pathlib import Path

import torch

from attnbias.workflow import file_kind, store

log = logging.getLogger(__name__)


def rng_state(device: torch.device) -> dict:
    """The random state a run draws from: torch's CPU generator and, on CUDA, the generator
    of the one device the run uses (not every GPU of the machine: a checkpoint then resumes
    on a machine with fewer)."""
    state = {"torch": torch.get_rng_state()}  # training draws from torch's generators only
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict, device: torch.device) -> None:
    """Restore `rng_state`'s result on the run's device (whichever index it had when saved).
    Older checkpoints hold a list of every GPU's state: the run's device index is taken."""
    torch.set_rng_state(state["torch"])
    saved = state.get("cuda")
    if device.type != "cuda" or saved is None:
        return
    if isinstance(saved, list | tuple):
        index = device.index if device.index is not None else torch.cuda.current_device()
        if index >= len(saved):
            log.warning("the checkpoint has no random state for %s; not restored", device)
            return
        saved = saved[index]
    torch.cuda.set_rng_state(saved, device)


DIGEST_KEY = "sha256"  # the checkpoint's entry holding the digest of everything else in it
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _hash_into(h, value) -> None:
    """Feed `value` (tensors, numbers, strings, None and their containers: what a
    checkpoint holds) into the hash `h`, tagged by type, so that equal content gives equal
    digests however torch lays the file out."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().to("cpu").contiguous().reshape(-1)
        h.update(f"tensor {flat.dtype} {tuple(value.shape)}\n".encode())
        h.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    elif isinstance(value, dict):
        h.update(f"dict {len(value)}\n".encode())
        for key in sorted(value, key=repr):  # optimizer states have int keys, others str
            _hash_into(h, key)
            _hash_into(h, value[key])
    elif isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__} {len(value)}\n".encode())
        for item in value:
            _hash_into(h, item)
    else:  # numbers (NaN included: repr is exact), strings, bools, None
        h.update(f"{type(value).__name__} {value!r}\n".encode())


def checkpoint_sha256(payload: dict) -> str:
    """The digest of a checkpoint's content: every entry but the digest itself."""
    h = hashlib.sha256()
    _hash_into(h, {k: v for k, v in payload.items() if k != DIGEST_KEY})
    return h.hexdigest()


def save_checkpoint(path, payload: dict) -> None:
    """Save `payload` with the digest of its content (checked on resume)."""
    with store.atomic_path(path) as tmp:
        torch.save({**payload, DIGEST_KEY: checkpoint_sha256(payload)}, tmp)


_GLOBAL = re.compile(r"GLOBAL (\S+) was not an allowed global")


def _unpickler_refusal(err: Exception) -> str | None:
    """What torch's restricted unpickler refused in the file (`the Python object io.open`),
    None where it did not refuse it; never torch's advice (`weights_only=False`, allowlist
    the global), which would run the file's code."""
    lines = [_ANSI.sub("", line).strip() for line in str(err).splitlines()]
    reason = next((line for line in lines if line.startswith("WeightsUnpickler error")), None)
    if reason is None:
        return None
    found = _GLOBAL.search(reason)
    if found:
        return f"the Python object {found[1]}"
    # another refusal ("Unsupported operand 149"): its first sentence, no advice after it
    return "what the unpickler refuses (" + reason.split(": ", 1)[-1].split(". ")[0] + ")"


def _why(err: Exception) -> str:
    """torch's reason, its first line, without terminal codes."""
    lines = [_ANSI.sub("", line).strip() for line in str(err).splitlines()]
    return next((line for line in lines if line), type(err).__name__)


def _open_plain(path: Path):
    """`path` opened for reading where it is a regular file (not through a link); None where
    there is none; FileContractError naming a link or another kind of file, unread."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        raise store.FileContractError(
            f"{path} is a symbolic link (to {path.resolve()}), not a regular file: this "
            "pipeline writes its checkpoints as regular files, so the link was put there, "
            f"and nothing is read through it. Remove the link (`rm {path}`: what it points "
            "to is kept) to train the run from the start; or, if it points to a checkpoint "
            "of this run, put a copy of that file in the link's place to resume from it"
        )

    def refuse(kind: str) -> store.FileContractError:
        return store.FileContractError(
            f"{path} is {kind}, not a regular file: not a checkpoint this pipeline wrote, and "
            "not opened. Move it away to train the run from the start"
        )

    if file_kind.irregular(mode):  # a FIFO would make open() wait for a writer
        raise refuse(file_kind.irregular(mode))
    # O_NOFOLLOW: a link put there since is not followed; the kind checked again on what opened
    handle = open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb")
    kind = file_kind.irregular(os.fstat(handle.fileno()).st_mode)
    if kind:
        handle.close()
        raise refuse(kind)
    return handle


def load_checkpoint(path, fingerprint: dict) -> dict | None:
    """The checkpoint at `path` if it belongs to this run (same fingerprint), else None.

    Read with weights_only=True: a checkpoint holds tensors, numbers, strings and the
    containers of these, so torch's restricted unpickler reads it, and a file planted in a
    results tree cannot run code when a run resumes. One that does not load that way is
    refused, naming it, and so is one whose content differs from the digest saved with it
    (changed or damaged after it was written, though it loads)."""
    path = Path(path)
    handle = _open_plain(path)
    if handle is None:
        return None
    start_over = f"delete {path} to train the run from the start"
    try:
        with handle:
            payload = torch.load(handle, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many kinds (IndexError on some text files)
        refused = _unpickler_refusal(err)
        if refused:
            raise store.FileContractError(
                f"{path} is not a checkpoint this project wrote: it pickles {refused}, which "
                "no checkpoint of ours holds, so it is not loaded (loading it could run any "
                f"code: do not load it by other means). Delete {path} to train the run from the "
                "start"
            ) from None
        raise store.FileContractError(
            f"{path} is not a checkpoint this run can read safely (it does not load with "
            f"torch.load(weights_only=True): {_why(err)}); it was not written by this "
            f"pipeline or is damaged: {start_over}"
        ) from None
    if not isinstance(payload, dict):
        raise store.FileContractError(
            f"{path} holds a {type(payload).__name__}, not a checkpoint's dict; {start_over}"
        )
    if DIGEST_KEY not in payload:
        raise store.FileContractError(
            f"{path} carries no digest of its content (written before checkpoints had one, "
            f"or not by this pipeline), so what it holds cannot be checked; {start_over}"
        )
    if payload[DIGEST_KEY] != checkpoint_sha256(payload):
        raise store.FileContractError(
            f"{path}: its content differs from the sha256 saved with it (changed or damaged "
            f"after it was written); resuming from it would train on other weights: "
            f"{start_over}"
        )
    if payload.get("fingerprint") != fingerprint:
        log.warning("ignoring checkpoint %s: it belongs to a run with other settings", path)
        return None
    return payload
