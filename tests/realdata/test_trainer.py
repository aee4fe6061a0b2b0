"""The real-data training loop (attnbias.realdata.trainer) on the CPU: what it logs equals a
plain loop's, it reads nothing from the device per step, it resumes from a checkpoint
written on a machine with more GPUs, and dynamic padding changes no loss.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from host_reads import CountReads
from tiny_runs import (
    MODELS,
    RESUME_OPTIMIZERS,
    SCHEDULE,
    Interrupted,
    assert_same_run,
    fit_run,
    resume_against_uninterrupted,
    resume_task,
)

from attnbias.optim.stochastic import SNGD, SPS
from attnbias.realdata import sample_order, trainer

CPU = torch.device("cpu")


def plain_losses(model_name: str, optimizer_name: str) -> tuple[list[float], list[float]]:
    """The train_loss column of a fit run and every step's loss, recomputed by a plain loop
    that reads every step's loss as a Python float (what fit did before it kept the loss on
    the device)."""
    torch.manual_seed(0)
    task, _ = resume_task(model_name)
    optimizer = RESUME_OPTIMIZERS[optimizer_name](task.model.parameters())
    schedule = trainer.Schedule(**SCHEDULE, seed=0, progress=False)
    per_epoch = trainer.steps_per_epoch(task, schedule)
    total, logged, window, every = schedule.epochs * per_epoch, [math.nan], [], []
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
            every.append(window[-1])
            loss.backward()
            return loss.detach()

        optimizer.step(closure)
        if (step + 1) % schedule.log_every == 0 or step + 1 == total:
            logged.append(sum(window) / len(window))
            window.clear()
    return logged, every


@pytest.mark.parametrize("optimizer_name", list(RESUME_OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(MODELS))
def test_logged_train_loss_equals_a_plain_loop_reading_every_step(model_name, optimizer_name):
    (steps, metrics), _ = fit_run(model_name, optimizer_name, "cpu")
    assert list(steps) == [0, 3, 6, 9, 10]
    logged, every = plain_losses(model_name, optimizer_name)
    # the same float64 sums of the same float32 losses: equal, not merely close
    np.testing.assert_array_equal(metrics["train_loss"], logged)
    np.testing.assert_array_equal(metrics[trainer.BATCH_LOSS], every)  # every step's, kept


# ---------------------------------------------------------------- every step, probe, pairs


def test_every_step_lays_the_log_points_and_the_step_losses_on_the_iterations():
    steps = np.array([0, 2, 3])
    metrics = {"train_loss": np.array([np.nan, 1.0, 2.0]), trainer.BATCH_LOSS: np.array([5, 6, 7])}
    every, out = trainer.every_step(steps, metrics)
    assert list(every) == [0, 1, 2, 3]
    np.testing.assert_array_equal(out["train_loss"], [np.nan, np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(out[trainer.BATCH_LOSS], [5, 6, 7, np.nan])


def _probe_run(optimizer_name: str, seed: int, probe_samples: int, model_name: str = "vit"):
    torch.manual_seed(0)
    task, _ = resume_task(model_name)
    optimizer = RESUME_OPTIMIZERS[optimizer_name](task.model.parameters())
    schedule = trainer.Schedule(
        **{**SCHEDULE, "checkpoint_every": 0}, seed=seed, progress=False,
        probe_samples=probe_samples,
    )  # fmt: skip
    return task, trainer.fit(task, optimizer, schedule, device=CPU)


@pytest.mark.parametrize("model_name", list(MODELS))
def test_the_probe_loss_is_the_loss_on_the_fixed_subset_at_each_log_point(model_name):
    """Text probes are taken in order of length: the loss is that of the subset still."""
    task, (steps, metrics) = _probe_run("sgd", 0, 16, model_name)
    assert np.isfinite(metrics[trainer.PROBE_METRIC]).all()
    assert len(metrics[trainer.PROBE_METRIC]) == len(steps)
    # at the end: the trained model's eval-mode loss on the subset, recomputed here
    index = sample_order.probe_subset(len(task.train["labels"]), 16)
    task.model.eval()
    with torch.no_grad():
        inputs = {k: v[index] for k, v in task.train.items() if k != "labels"}
        logits = task.logits(task.model, inputs)
        expected = float(F.cross_entropy(logits.float(), task.train["labels"][index]).double())
    assert metrics[trainer.PROBE_METRIC][-1] == pytest.approx(expected, rel=1e-6)


def test_the_probe_subset_is_one_for_every_seed_and_changes_no_run():
    a = sample_order.probe_subset(40, 16)
    np.testing.assert_array_equal(a, sample_order.probe_subset(40, 16))
    assert len(set(a.tolist())) == 16
    _, (_, probed) = _probe_run("sps", 0, 16)
    _, (_, plain) = _probe_run("sps", 0, 0)
    assert trainer.PROBE_METRIC not in plain
    np.testing.assert_array_equal(probed[trainer.BATCH_LOSS], plain[trainer.BATCH_LOSS])


def test_a_probe_larger_than_the_training_set_is_refused():
    with pytest.raises(ValueError, match=r"train.probe_samples is 41, larger than the training"):
        _probe_run("sgd", 0, 41)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_optimizers_of_a_seed_see_the_same_batches(seed):
    """Paired races: from the same start, every optimizer's first step reads the same batch
    (equal first losses); another seed draws another batch (the control)."""
    first = {
        name: _probe_run(name, seed, 0)[1][1][trainer.BATCH_LOSS][0] for name in RESUME_OPTIMIZERS
    }
    assert len(set(first.values())) == 1, first
    other = _probe_run("sgd", seed + 1, 0)[1][1][trainer.BATCH_LOSS][0]
    assert other != first["sgd"]


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

    repo = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((repo / "config" / "tiny.yaml").read_text())
    validate(config, str(repo / "workflow" / "schemas" / "config.schema.yaml"), set_default=True)
    assert config["real_data"]["compile"] is False
    assert trainer.Schedule(epochs=1, batch_size=1, log_every=1).compile is False


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

    repo = Path(__file__).resolve().parents[2]
    schema = yaml.safe_load((repo / "workflow" / "schemas" / "config.schema.yaml").read_text())
    config = yaml.safe_load((repo / "config" / "tiny.yaml").read_text())
    config["real_data"]["experiments"]["fig1"]["train"]["length_buckets"] = 4
    configcheck.check(config, schema)  # text: accepted
    config["real_data"]["experiments"]["fig6"]["train"]["length_buckets"] = 4
    with pytest.raises(configkeys.ConfigError, match="fig6.train.length_buckets"):
        configcheck.check(config, schema)
