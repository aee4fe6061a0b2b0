"""Real-data checkpoints (attnbias.realdata.checkpoints): device random states, and a
planted, damaged, linked or edited checkpoint refused by name.
"""

from __future__ import annotations

import os
import re

import pytest
import torch
from tiny_runs import (
    Interrupted,
    assert_same_run,
    fit_run,
)

from attnbias.realdata import checkpoints
from attnbias.workflow import store


def test_a_checkpoint_from_a_machine_with_more_gpus_resumes(tmp_path):
    """A checkpoint that holds eight GPUs' random states (as every one written before only
    the run's device was saved) resumes here, to the uninterrupted run's metrics. (On the
    CPU no CUDA state is restored at all; the next two tests restore them on a fake CUDA.)"""
    reference, _ = fit_run("vit", "sps", "cpu")
    checkpoint = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        fit_run("vit", "sps", "cpu", checkpoint=checkpoint, stop_at=7)
    payload = torch.load(checkpoint, weights_only=True)
    payload["rng"]["cuda"] = [torch.zeros(16, dtype=torch.uint8)] * 8
    payload[checkpoints.DIGEST_KEY] = checkpoints.checkpoint_sha256(
        payload
    )  # as a writer stamps it
    torch.save(payload, checkpoint)
    resumed, _ = fit_run("vit", "sps", "cpu", checkpoint=checkpoint)
    assert_same_run(resumed, reference, "resumed from an eight-GPU checkpoint")


class FakeCuda:
    """torch.cuda's random-state calls on a machine with `count` GPUs; like the real ones,
    they refuse a device index the machine does not have."""

    def __init__(self, monkeypatch, count: int):
        self.count, self.states = (
            count,
            {i: torch.full((4,), i, dtype=torch.uint8) for i in range(count)},
        )
        for name in ("get_rng_state", "set_rng_state"):
            monkeypatch.setattr(torch.cuda, name, getattr(self, name))
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "set_rng_state_all", self.set_rng_state_all)

    def _index(self, device) -> int:
        index = device if isinstance(device, int) else torch.device(device).index or 0
        if index >= self.count:
            raise RuntimeError(f"CUDA error: invalid device ordinal {index}")
        return index

    def get_rng_state(self, device="cuda"):
        return self.states[self._index(device)].clone()

    def set_rng_state(self, state, device="cuda"):
        self.states[self._index(device)] = state.clone()

    def set_rng_state_all(self, states):  # as torch's: one set_rng_state per saved state
        for i, state in enumerate(states):
            self.set_rng_state(state, i)


@pytest.mark.parametrize("saved_on", ["cuda:0", "cuda:3"])
def test_only_the_run_device_random_state_is_saved_and_restored(monkeypatch, saved_on):
    writer = FakeCuda(monkeypatch, count=4)
    state = checkpoints.rng_state(torch.device(saved_on))
    assert torch.equal(state["cuda"], writer.states[int(saved_on[-1])])  # one state, not four
    reader = FakeCuda(monkeypatch, count=1)  # a one-GPU machine
    checkpoints.set_rng_state(state, torch.device("cuda:0"))
    assert torch.equal(reader.states[0], state["cuda"])


def test_an_old_all_gpu_checkpoint_restores_the_run_device_only(monkeypatch):
    old = {
        "torch": torch.get_rng_state(),
        "cuda": [torch.full((4,), 10 + i, dtype=torch.uint8) for i in range(8)],
    }
    reader = FakeCuda(monkeypatch, count=1)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):  # what failed before
        torch.cuda.set_rng_state_all(old["cuda"])
    checkpoints.set_rng_state(old, torch.device("cuda:0"))
    assert torch.equal(reader.states[0], old["cuda"][0])


# ---------------------------------------------------------------- checkpoints run no code


class _OpensAFile:
    """Unpickles to open(target, "w"): the code a planted checkpoint would run."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_a_planted_checkpoint_runs_no_code_and_is_refused_by_name(tmp_path):
    planted, target = tmp_path / "seed0.pt", tmp_path / "created-by-the-checkpoint"
    torch.save({"fingerprint": {}, "payload": _OpensAFile(target)}, planted)
    with pytest.raises(store.FileContractError, match=str(planted)):
        checkpoints.load_checkpoint(planted, {"total_steps": 1})
    assert not target.exists()


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", b"PK\x03\x04truncated"])
def test_a_damaged_checkpoint_is_refused_by_name(tmp_path, content):
    path = tmp_path / "seed0.pt"
    path.write_bytes(content)
    with pytest.raises(store.FileContractError, match=str(path)):
        checkpoints.load_checkpoint(path, {"total_steps": 1})


def test_the_checkpoint_fit_writes_loads_with_weights_only(tmp_path):
    """What fit stores (model, optimizer state, random states, settings) is of the types
    torch's restricted unpickler reads; the resume tests then use this path."""
    checkpoint = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        fit_run("vit", "sps", "cpu", checkpoint=checkpoint, stop_at=7)
    payload = torch.load(checkpoint, weights_only=True)
    assert {"fingerprint", "model", "optimizer", "rng", "state"} <= set(payload)


# ---------------------------------------------------------------- checkpoints carry a digest


def _saved(tmp_path):
    checkpoint = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        fit_run("vit", "sps", "cpu", checkpoint=checkpoint, stop_at=7)
    return checkpoint, torch.load(checkpoint, weights_only=True)


def test_a_checkpoint_with_zeroed_weights_is_refused_not_resumed(tmp_path, caplog):
    """The trial's case: weights zeroed, fingerprint (and the old digest) kept; before,
    the run resumed from it and its table got a fresh, valid checksum."""
    checkpoint, payload = _saved(tmp_path)
    for tensor in payload["model"].values():
        tensor.zero_()
    torch.save(payload, checkpoint)
    with caplog.at_level("INFO"), pytest.raises(store.FileContractError) as err:
        fit_run("vit", "sps", "cpu", checkpoint=checkpoint)
    message = str(err.value)
    assert message.startswith(f"{checkpoint}: its content differs from the sha256 saved")
    assert f"delete {checkpoint} to train the run from the start" in message
    assert "resumed from" not in caplog.text
    assert checkpoint.exists()  # the user decides: nothing is deleted for them


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["state"].update(step=p["state"]["step"] + 1),  # a number
        lambda p: p["state"]["logged"][0].update(test_accuracy=0.5),  # a logged metric
        lambda p: p["optimizer"]["param_groups"][0].update(lr=1.0),  # an optimizer setting
        lambda p: p.pop(checkpoints.DIGEST_KEY),  # no digest: written before, or by hand
    ],
    ids=["step", "logged", "optimizer", "no-digest"],
)
def test_any_change_to_a_loadable_checkpoint_is_refused_by_name(tmp_path, change):
    checkpoint, payload = _saved(tmp_path)
    assert payload[checkpoints.DIGEST_KEY] == checkpoints.checkpoint_sha256(payload)
    change(payload)
    torch.save(payload, checkpoint)
    with pytest.raises(store.FileContractError, match=f"^{re.escape(str(checkpoint))}"):
        checkpoints.load_checkpoint(checkpoint, payload["fingerprint"])


def test_the_digest_sees_dtype_shape_and_nan():
    base = {"a": torch.zeros(2, 2), "b": [1.0, float("nan")]}
    digest = checkpoints.checkpoint_sha256(base)
    assert digest == checkpoints.checkpoint_sha256(
        {"b": [1.0, float("nan")], "a": torch.zeros(2, 2)}
    )
    for other in (
        {**base, "a": torch.zeros(4)},
        {**base, "a": torch.zeros(2, 2, dtype=torch.float64)},
        {**base, "b": [1.0, 0.0]},
        {**base, "b": (1.0, float("nan"))},
    ):
        assert checkpoints.checkpoint_sha256(other) != digest


def link_refusal(link, target) -> str:
    return (
        f"{link} is a symbolic link (to {target}), not a regular file: this pipeline writes "
        "its checkpoints as regular files, so the link was put there, and nothing is read "
        f"through it. Remove the link (`rm {link}`: what it points to is kept) to train the "
        "run from the start; or, if it points to a checkpoint of this run, put a copy of "
        "that file in the link's place to resume from it"
    )


def test_a_checkpoint_linked_to_a_text_file_is_refused_by_name(tmp_path):
    """The trial's case (an IndexError from torch before, then a misleading 'No such file'
    for a path with ' (a link to ...)' in it): the link and its target named, unread."""
    text, link = tmp_path / "notes.txt", tmp_path / "seed0.pt"
    text.write_text("some notes\nnot a checkpoint\n" * 20)
    link.symlink_to(text)
    with pytest.raises(store.FileContractError) as err:
        checkpoints.load_checkpoint(link, {"total_steps": 1})
    assert str(err.value) == link_refusal(link, text)


@pytest.mark.parametrize("target", ["checkpoint", "missing"])
def test_a_symlinked_checkpoint_is_refused_as_a_link(tmp_path, target):
    """A link to a good checkpoint of this run, or to nothing: refused as a link (not with
    ENOENT, nor silently trained from the start over it); the link and its target kept."""
    real, link = tmp_path / "elsewhere.pt", tmp_path / "seed0.pt"
    if target == "checkpoint":
        checkpoints.save_checkpoint(real, {"fingerprint": {"total_steps": 1}})
    link.symlink_to(real)
    with pytest.raises(store.FileContractError) as err:
        checkpoints.load_checkpoint(link, {"total_steps": 1})
    assert str(err.value) == link_refusal(link, real)
    assert "No such file" not in str(err.value)
    assert link.is_symlink() and real.exists() == (target == "checkpoint")


def test_a_folder_or_fifo_in_a_checkpoints_place_is_refused_unopened(tmp_path):
    folder, fifo = tmp_path / "seed0.pt", tmp_path / "seed1.pt"
    folder.mkdir()
    os.mkfifo(fifo)  # opened for reading, it would wait for a writer: the test would hang
    for path, kind in ((folder, "a directory"), (fifo, "a FIFO")):
        with pytest.raises(store.FileContractError) as err:
            checkpoints.load_checkpoint(path, {"total_steps": 1})
        assert str(err.value) == (
            f"{path} is {kind}, not a regular file: not a checkpoint this pipeline wrote, and "
            f"not opened. Move it away to train the run from the start"
        )
    assert folder.is_dir() and fifo.exists()


def test_the_refusal_of_a_planted_checkpoint_quotes_no_unsafe_advice(tmp_path):
    """torch's message advises weights_only=False or allowlisting the global (each would
    run the file's code): the refusal relays neither, and says what the file is not."""
    planted = tmp_path / "seed0.pt"
    torch.save({"payload": _OpensAFile(tmp_path / "x")}, planted)
    with pytest.raises(store.FileContractError) as err:
        checkpoints.load_checkpoint(planted, {"total_steps": 1})
    message = str(err.value)
    assert message == (
        f"{planted} is not a checkpoint this project wrote: it pickles the Python object "
        "io.open, which no checkpoint of ours holds, so it is not loaded (loading it could "
        "run any code: do not load it by other means). Delete "
        f"{planted} to train the run from the start"
    )
    for advice in ("weights_only=False", "trust", "safe_globals", "allowlist", "\x1b"):
        assert advice not in message
