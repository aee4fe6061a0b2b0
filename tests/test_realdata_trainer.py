"""The real-data training loop (attnbias.realdata.trainer) on the CPU: what it logs equals a
plain loop's, it reads nothing from the device per step, it resumes from a checkpoint
written on a machine with more GPUs, and dynamic padding changes no loss."""

from __future__ import annotations

import math
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fixtures_text import fixture_vocab, write_mnli, write_tiny_bert
from host_reads import CountReads
from tiny_runs import (
    MODELS,
    RESUME_OPTIMIZERS,
    SCHEDULE,
    Interrupted,
    assert_same_run,
    bert_data,
    fit_run,
    resume_against_uninterrupted,
    resume_task,
    tiny_bert,
)

from attnbias.optim.stochastic import SNGD, SPS
from attnbias.realdata import bert, checkpoints, mnli, sample_order, tasks, trainer
from attnbias.realdata.bert import trim_padding
from attnbias.workflow import store

CPU = torch.device("cpu")


def plain_losses(model_name: str, optimizer_name: str) -> list[float]:
    """The train_loss column of a fit run, recomputed by a plain loop that reads every
    step's loss as a Python float (what fit did before it kept the loss on the device)."""
    torch.manual_seed(0)
    task, _ = resume_task(model_name)
    optimizer = RESUME_OPTIMIZERS[optimizer_name](task.model.parameters())
    schedule = trainer.Schedule(**SCHEDULE, seed=0, progress=False)
    per_epoch = trainer.steps_per_epoch(task, schedule)
    total, logged, window = schedule.epochs * per_epoch, [math.nan], []
    task.model.train()
    for step in range(total):
        epoch, position = divmod(step, per_epoch)
        order = sample_order.epoch_order(0, epoch, len(task.train["labels"]))
        index = order[position * schedule.batch_size : (position + 1) * schedule.batch_size]
        batch = {k: v[index] for k, v in task.train.items()}

        def closure(batch=batch):
            optimizer.zero_grad(set_to_none=True)
            inputs = {k: v for k, v in batch.items() if k != "labels"}
            loss = F.cross_entropy(task.logits(task.model, inputs).float(), batch["labels"])
            window.append(float(loss.detach()))
            loss.backward()
            return loss.detach()

        optimizer.step(closure)
        if (step + 1) % schedule.log_every == 0 or step + 1 == total:
            logged.append(sum(window) / len(window))
            window.clear()
    return logged


@pytest.mark.parametrize("optimizer_name", list(RESUME_OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(MODELS))
def test_logged_train_loss_equals_a_plain_loop_reading_every_step(model_name, optimizer_name):
    (steps, metrics), _ = fit_run(model_name, optimizer_name, "cpu")
    assert list(steps) == [0, 3, 6, 9, 10]
    # the same float64 sums of the same float32 losses: equal, not merely close
    np.testing.assert_array_equal(metrics["train_loss"], plain_losses(model_name, optimizer_name))


def _vit_run_reads(monkeypatch, epochs: int, optimizer_name: str) -> int:
    torch.manual_seed(0)
    task, _ = resume_task("vit")
    task.model_metrics = None
    optimizer = RESUME_OPTIMIZERS[optimizer_name](task.model.parameters())
    # log points at step 0 and at the end only: any read per step shows as a difference
    schedule = trainer.Schedule(epochs=epochs, batch_size=8, log_every=10**6, progress=False)
    with monkeypatch.context() as patch:
        reads = CountReads(patch)
        trainer.fit(task, optimizer, schedule, device=CPU)
    return reads.count


# torch's Adam reads its step counts, which it keeps on the host by design (no device wait)
@pytest.mark.parametrize("optimizer_name", ["sgd", "sngd", "sps"])
def test_no_read_from_the_device_per_step(monkeypatch, optimizer_name):
    one, three = (_vit_run_reads(monkeypatch, e, optimizer_name) for e in (1, 3))
    assert one > 0  # the log points do read (the counter works)
    assert three == one, f"{three - one} more reads over 10 more steps"


def test_training_warns_nothing():
    """No warning per step (reading a loss that requires grad used to warn each time)."""
    torch.manual_seed(0)
    task, _ = resume_task("vit")
    optimizer = RESUME_OPTIMIZERS["sps"](task.model.parameters())
    schedule = trainer.Schedule(**SCHEDULE, seed=0, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trainer.fit(task, optimizer, schedule, device=CPU)


def test_the_read_counter_counts(monkeypatch):
    """Negative control: a loop that reads each step's loss is counted."""
    with monkeypatch.context() as patch:
        reads = CountReads(patch)
        for _ in range(5):
            float(torch.ones(2).sum())
    assert reads.count == 5


def test_a_non_finite_loss_is_reported_at_the_next_log_point():
    torch.manual_seed(0)
    task, _ = resume_task("vit")
    logits = task.logits
    task.logits = lambda model, batch: logits(model, batch) * math.inf
    optimizer = RESUME_OPTIMIZERS["sgd"](task.model.parameters())
    schedule = trainer.Schedule(**SCHEDULE, seed=0, progress=False)
    with pytest.raises(FloatingPointError, match="not finite at a step from 0 to 2"):
        trainer.fit(task, optimizer, schedule, device=CPU)


# ---------------------------------------------------------------- whether the cap bound

CAPPED = {  # a cap that binds at every step, one that never does, and no cap to count
    "sps-bound": (lambda params: SPS(params, eta_max=1e-9), 1.0),
    "sngd-bound": (lambda params: SNGD(params, lr=0.05, momentum=0.9, max_step=1e-9), 1.0),
    "sps-free": (lambda params: SPS(params, eta_max=1e9), 0.0),
    "sngd-free": (lambda params: SNGD(params, lr=0.05, max_step=1e9), 0.0),
}


@pytest.mark.parametrize("name", list(CAPPED))
def test_the_share_of_steps_at_which_the_cap_bound_is_logged(monkeypatch, name):
    make, share = CAPPED[name]
    monkeypatch.setitem(RESUME_OPTIMIZERS, name, make)
    (steps, metrics), _ = fit_run("vit", name, "cpu")
    assert list(steps) == [0, 3, 6, 9, 10]
    np.testing.assert_array_equal(metrics["cap_bound_share"], [np.nan] + [share] * 4)


def test_the_cap_share_is_that_of_the_steps_since_the_previous_log_point(monkeypatch):
    """A cap that binds from the 5th step on: the window 3 to 6 has 2 of 3 bound."""
    counts = {"steps": 0}

    class LateCap(SPS):
        def step(self, closure=None, loss=None):
            counts["steps"] += 1
            for group in self.param_groups:
                group["lr"] = 1e9 if counts["steps"] <= 4 else 1e-9
            return super().step(closure, loss)

    monkeypatch.setitem(RESUME_OPTIMIZERS, "late", lambda params: LateCap(params))
    (_, metrics), _ = fit_run("vit", "late", "cpu")
    np.testing.assert_array_equal(metrics["cap_bound_share"], [np.nan, 0, 2 / 3, 1, 1])


def test_optimizers_without_a_cap_log_no_cap_share():
    (_, metrics), _ = fit_run("vit", "adam", "cpu")
    assert "cap_bound_share" not in metrics


@pytest.mark.parametrize("name", ["sps-bound", "sngd-bound"])
def test_a_resumed_run_logs_the_uninterrupted_cap_share(monkeypatch, tmp_path, name):
    """The checkpoint at step 4 falls inside the log window 3 to 6: the resumed run goes on
    counting from the checkpoint's count (a count restarted at 0, or a window restarted at
    the resume, would log another share at step 6)."""
    monkeypatch.setitem(RESUME_OPTIMIZERS, name, CAPPED[name][0])
    reference, _, resumed = resume_against_uninterrupted("vit", name, "cpu", tmp_path)
    assert_same_run(resumed, reference, "resumed against uninterrupted")
    np.testing.assert_array_equal(resumed[1]["cap_bound_share"], [np.nan, 1, 1, 1, 1])


# ---------------------------------------------------------------- resume across machines


def test_resume_on_the_cpu_gives_the_uninterrupted_metrics(tmp_path):
    reference, again, resumed = resume_against_uninterrupted("vit", "sngd", "cpu", tmp_path)
    assert_same_run(again, reference, "two uninterrupted runs")
    assert_same_run(resumed, reference, "resumed against uninterrupted")


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


# ---------------------------------------------------------------- dynamic padding


def _padded_bert_batch(extra: int):
    """tiny_runs' BERT batch with `extra` more padding columns at the end."""
    batch = bert_data(16, seed=3)
    pad = {k: torch.zeros(len(v), extra, dtype=v.dtype) for k, v in batch.items() if v.dim() == 2}
    return {k: torch.cat([v, pad[k]], dim=1) if k in pad else v for k, v in batch.items()}


def test_trim_padding_cuts_to_the_longest_row_only():
    batch = _padded_bert_batch(extra=4)
    trimmed = trim_padding(batch)
    longest = int(batch["attention_mask"].sum(1).max())
    assert trimmed["input_ids"].shape == (16, longest) < batch["input_ids"].shape
    assert torch.equal(trimmed["labels"], batch["labels"])
    for key in ("input_ids", "attention_mask", "token_type_ids"):
        assert torch.equal(trimmed[key], batch[key][:, :longest])
        assert not batch[key][:, longest:].any()  # only padding was cut


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_dynamic_padding_gives_the_loss_and_gradient_of_fixed_padding(attention):
    model = tiny_bert(seed=0)
    model.config._attn_implementation = attention
    batch = _padded_bert_batch(extra=4)  # 16 columns; the rows hold 6 to 12 tokens
    results = []
    for b in (batch, trim_padding(batch)):
        model.zero_grad()
        inputs = {k: v for k, v in b.items() if k != "labels"}
        loss = F.cross_entropy(model(**inputs).logits, b["labels"])
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    (fixed, g_fixed), (dynamic, g_dynamic) = results
    assert batch["input_ids"].shape[1] > trim_padding(batch)["input_ids"].shape[1]
    torch.testing.assert_close(dynamic, fixed, rtol=1e-6, atol=1e-6)  # float32 rounding
    for a, b in zip(g_dynamic, g_fixed, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- the text task on fixtures


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("text")
    write_mnli(root / "data", n_train=40, n_test=16, seed=0)
    write_tiny_bert(root / "bert", fixture_vocab())
    return root


def test_text_task_has_sdpa_attention_and_dynamic_padding(fixture_root):
    settings = {
        "dataset": "mnli",
        "model_path": str(fixture_root / "bert"),
        "max_length": 48,
        "train": {"train_samples": None, "test_samples": None},
    }
    task = tasks.build(settings, seed=0, data_root=str(fixture_root / "data"))
    assert task.model.config._attn_implementation == "sdpa"
    assert task.collate is trim_padding
    assert task.train["input_ids"].shape[1] == 48  # padded once to max_length, trimmed per batch
    assert trim_padding(task.train)["input_ids"].shape[1] < 48


def test_sdpa_bert_gives_the_plain_attention_loss_and_gradient(fixture_root):
    """The fixture BERT loaded with transformers' sdpa attention and with its plain
    ("eager") softmax(QK^T/sqrt(d))V, on a fixture batch with padding: the same logits,
    loss and gradients to float32 rounding."""
    split = mnli.load_mnli(str(fixture_root / "data"), "train")
    results = {}
    for attention in ("sdpa", "eager"):
        tokenizer, model = bert.load_text_model(
            str(fixture_root / "bert"), 3, seed=0, attention=attention
        )
        assert model.config._attn_implementation == attention
        batch = bert.tokenize_split(tokenizer, split, 24)
        assert not batch["attention_mask"].all()  # the mask matters
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        logits = model(**inputs).logits
        loss = F.cross_entropy(logits, batch["labels"])
        loss.backward()
        results[attention] = (logits.detach(), loss.detach(), [p.grad for p in model.parameters()])
    (l_s, loss_s, g_s), (l_e, loss_e, g_e) = results["sdpa"], results["eager"]
    torch.testing.assert_close(l_s, l_e, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(loss_s, loss_e, rtol=1e-6, atol=1e-7)
    for a, b in zip(g_s, g_e, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- torch.compile switch


class RecordingCompile:
    """Stands in for torch.compile (minutes on the CPU): records its arguments and returns a
    module that counts the forwards it passes on to the model."""

    def __init__(self):
        self.calls, self.forwards = [], 0

    def __call__(self, model, **kwargs):
        self.calls.append((model, kwargs))
        recorder = self

        class Compiled(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = model

            @property
            def training(self) -> bool:  # as torch's OptimizedModule: the model's mode
                return self.inner.training if "inner" in self.__dict__.get("_modules", {}) else True

            @training.setter
            def training(self, value: bool) -> None:
                if "inner" in self.__dict__.get("_modules", {}):
                    self.inner.training = value

            def forward(self, *args, **kw):
                recorder.forwards += 1
                return self.inner(*args, **kw)

        return Compiled()


@pytest.mark.parametrize("switch", [True, False])
def test_the_compile_switch_compiles_the_model_for_every_forward(monkeypatch, tmp_path, switch):
    compile_ = RecordingCompile()
    monkeypatch.setattr(torch, "compile", compile_)
    torch.manual_seed(0)
    task, calls = resume_task("vit")
    optimizer = RESUME_OPTIMIZERS["sgd"](task.model.parameters())
    checkpoint = tmp_path / "run.pt"
    schedule = trainer.Schedule(**SCHEDULE, seed=0, progress=False, compile=switch)
    with pytest.raises(Interrupted):  # stop after the checkpoint at step 4, to look at it
        task.logits = _stop_at(task.logits, 7)
        trainer.fit(task, optimizer, schedule, device=CPU, checkpoint=checkpoint)
    if not switch:
        assert compile_.calls == [] and compile_.forwards == 0
        return
    assert compile_.calls == [(task.model, {"mode": "max-autotune-no-cudagraphs"})]
    # every training forward (6 taken) and the two evaluations went through it
    assert compile_.forwards >= 6 + 2
    saved = torch.load(checkpoint, weights_only=True)["model"]
    assert set(saved) == set(task.model.state_dict())  # the plain model's keys


def _stop_at(logits, n):
    count = {"train": 0}

    def wrapped(model, batch):
        if model.training:
            count["train"] += 1
            if count["train"] == n:
                raise Interrupted
        return logits(model, batch)

    return wrapped


def test_compile_is_off_by_default_in_the_config():
    import yaml
    from snakemake.utils import validate

    repo = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((repo / "config" / "tiny.yaml").read_text())
    validate(config, str(repo / "workflow" / "schemas" / "config.schema.yaml"), set_default=True)
    assert config["real_data"]["compile"] is False
    assert trainer.Schedule(epochs=1, batch_size=1, log_every=1).compile is False


# ---------------------------------------------------------------- length-bucketed batches


def _mnli_like_lengths(n: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(5)
    return (36 * torch.exp(0.4 * torch.randn(n, generator=gen))).long().clamp(8, 128)


def test_bucketed_order_uses_the_epoch_samples_in_batches_of_alike_lengths():
    lengths, batch = _mnli_like_lengths(1000), 32  # 31 batches, 8 samples dropped
    plain = sample_order.epoch_order(3, 1, 1000)
    bucketed = sample_order.bucketed_order(3, 1, lengths, batch, pool=8)
    used = 1000 // batch * batch
    assert sorted(bucketed.tolist()) == list(range(1000))
    assert set(bucketed[:used].tolist()) == set(plain[:used].tolist())  # same samples used
    assert torch.equal(bucketed[used:], plain[used:])  # and the same ones dropped
    assert torch.equal(bucketed, sample_order.bucketed_order(3, 1, lengths, batch, pool=8))
    assert not torch.equal(bucketed, sample_order.bucketed_order(3, 2, lengths, batch, pool=8))

    def mean_padded(order):  # columns per batch under dynamic padding
        return float(lengths[order[:used]].view(-1, batch).max(dim=1).values.double().mean())

    assert mean_padded(bucketed) < 0.8 * mean_padded(plain)
    # the batches' order is shuffled: lengths do not just rise through each pool
    firsts = lengths[bucketed[:used:batch]].tolist()
    assert firsts != sorted(firsts)


def test_bucketed_runs_resume_exactly(monkeypatch, tmp_path):
    monkeypatch.setitem(SCHEDULE, "length_buckets", 2)
    reference, again, resumed = resume_against_uninterrupted("bert", "sps", "cpu", tmp_path)
    assert_same_run(resumed, reference, "bucketed run resumed against uninterrupted")
    plain = sample_order.epoch_order(0, 0, 40)
    bucketed = sample_order.bucketed_order(
        0, 0, bert_data(40, seed=1)["attention_mask"].sum(1), 8, 2
    )
    assert not torch.equal(plain, bucketed)  # the option changed the batches


def test_bucketing_needs_text_batches():
    torch.manual_seed(0)
    task, _ = resume_task("vit")
    optimizer = RESUME_OPTIMIZERS["sgd"](task.model.parameters())
    schedule = trainer.Schedule(**SCHEDULE, seed=0, progress=False, length_buckets=2)
    with pytest.raises(ValueError, match="length_buckets needs text batches"):
        trainer.fit(task, optimizer, schedule, device=CPU)


def test_the_config_refuses_bucketing_for_images():
    import yaml

    from attnbias.workflow import configcheck, configkeys

    repo = Path(__file__).resolve().parents[1]
    schema = yaml.safe_load((repo / "workflow" / "schemas" / "config.schema.yaml").read_text())
    config = yaml.safe_load((repo / "config" / "tiny.yaml").read_text())
    config["real_data"]["experiments"]["fig1"]["train"]["length_buckets"] = 4
    configcheck.check(config, schema)  # text: accepted
    config["real_data"]["experiments"]["fig6"]["train"]["length_buckets"] = 4
    with pytest.raises(configkeys.ConfigError, match="fig6.train.length_buckets"):
        configcheck.check(config, schema)


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
