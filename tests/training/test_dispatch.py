"""The training dispatcher (attnbias.training.dispatch): which backend a run trains on, the
record of where it trained, the training job's entry (torch-free on the kernel), and its
batch of seeds against each seed's run alone.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from backend_runs import (
    DM,
    FIG8,
    assert_tables_agree,
    example1_problem,
    job_alone,
    svm_solutions,
    w_sum_u_first,
)

from attnbias.data import models
from attnbias.optim import rules
from attnbias.optim.rule import Look, Rule
from attnbias.optim.spec import OptimizerSpec
from attnbias.studies import global_convergence
from attnbias.svm import max_margin
from attnbias.training import dispatch, kernel, kernel_library
from attnbias.training.metrics import CROSSING_METRICS, log_grid


def test_backend_choice():
    assert kernel_library.available()
    assert dispatch.backend("auto", "float64") == "c"
    assert dispatch.backend("cpu", "float64") == "c"
    assert dispatch.backend("cpu", "float32") == "torch"
    assert dispatch.backend("cuda", "float64") == "torch"
    assert dispatch.record("c", "cpu") == kernel_library.kernel_info()
    assert kernel_library.kernel_info()["backend"] == "c"


def test_a_file_of_runs_on_two_backends_records_both():
    """dispatch.merged_record: one record where the runs agree, both values where not."""
    c, torch_cpu = dispatch.record("c", "cpu"), dispatch.record("torch", "cpu")
    assert dispatch.merged_record([c, c]) == c
    both = dispatch.merged_record([c, torch_cpu, c])
    assert both["backend"] == "c + torch" and both["device"] == "cpu"
    assert both["torch"] == " + ".join(sorted({"not used", torch.__version__}))
    assert both["kernel"] == f"{c['kernel']} + none"  # the torch record has no kernel


@dataclasses.dataclass(frozen=True)
class _SpecWithAnExtraSetting(OptimizerSpec):
    nesterov: bool = True  # a setting of some other rule: the kernel does not read it


def test_the_backend_follows_what_the_rule_declares(monkeypatch):
    """A setting added to the spec for another rule leaves NGD on the kernel (a check by
    the spec's field list sent it to torch); a gradient multiple the kernel lacks trains on torch
    (the hook an optimizer without a C counterpart uses); a direction rule on the full W."""
    extra = _SpecWithAnExtraSetting("ngd", lr=0.1)
    assert kernel.supports(extra) and dispatch.backend("cpu", "float64", extra) == "c"
    monkeypatch.setattr(rules, "RULES", dict(rules.RULES))
    rules.RULES["half-gd"] = Rule(
        "half-gd",
        settings=("lr",),
        caption=lambda s: "half GD",
        log_step=lambda s: {n: v * 0 + math.log(s.lrs[n] / 2) for n, v in s.log_norms.items()},
        names={"half-gd": "half GD"},
        looks={"half-gd": Look("gd", "s", "long-dash")},
    )
    half = OptimizerSpec("half-gd", lr=0.2)
    assert not kernel.supports(half) and dispatch.backend("cpu", "float64", half) == "torch"
    assert dispatch.backend("cpu", "float64", OptimizerSpec("adam")) == "full"
    ds = models.generate("bad_direction", 0, FIG8)
    W_mm, _ = svm_solutions([ds], False)
    runs = {}
    for spec in (half, OptimizerSpec("gd", lr=0.1)):
        table, _, record = dispatch.train(
            [ds], spec, W_mm=W_mm, iterations=20, log_iterations=log_grid(20, 5)
        )
        runs[record["backend"]] = table
    assert set(runs) == {"torch", "c"}  # GD at lr 0.1 is half-GD at lr 0.2
    np.testing.assert_allclose(runs["torch"]["log_loss"], runs["c"]["log_loss"], rtol=1e-10)


def test_a_training_job_never_imports_torch(tmp_path):
    """The job's entry (train_job.train_seeds, as workflow/scripts/train.py calls it) stays
    torch-free."""
    code = """
import sys
import numpy as np
from attnbias.data import models
from attnbias.optim.spec import spec_of
from attnbias.workflow.train_job import train_seeds
from attnbias.svm import max_margin
ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
sol = max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "t"))
config = dict(iterations=50, log_points=10, grid="log", loss="exponential", train_u=False)
spec = spec_of(dict(rule="ngd", lr=0.1), real=False)
its, metrics, final, info = train_seeds([ds], [sol], config, spec)
assert info["backend"] == "c" and np.isfinite(metrics[0]["log_loss"]).all()
assert "torch" not in sys.modules, "torch was imported"
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_training_job_on_torch_gives_the_kernels_numbers(monkeypatch):
    """The job's call (train_job.train_seeds) on both backends (torch by the supports hook):
    the same run, each recording where it trained."""
    from attnbias.training import devices

    ds = models.generate("dm", 0, DM)
    sol = max_margin.to_arrays(max_margin.solve_for_dataset(ds, True, "t"))
    config = dict(iterations=60, log_points=10, grid="log", loss="logistic", train_u=True)
    args = (ds, sol, config, OptimizerSpec("ngd", lr=0.1, momentum=0.5))
    its, got, got_final, got_info = job_alone(*args, device="cpu", threads=1)
    monkeypatch.setattr(kernel, "supports", lambda spec, rule=None: False)
    ref_its, ref, ref_final, ref_info = job_alone(*args, device="cpu", threads=1)
    assert got_info == kernel_library.kernel_info()
    assert ref_info == {**devices.device_info(torch.device("cpu")), "backend": "torch"}
    np.testing.assert_array_equal(its, ref_its)
    assert_tables_agree({k: v[None] for k, v in ref.items()}, {k: v[None] for k, v in got.items()})
    for key in ("W", "u"):
        np.testing.assert_allclose(got_final[key], ref_final[key], rtol=1e-10, atol=1e-12)


def test_study_mode_gives_diverged_runs_nan_and_keeps_the_others(monkeypatch):
    """nonfinite="nan" (the study): the loop gives a diverged run NaN and keeps the others,
    on the kernel as on the torch stepper (the reference)."""
    ds = models.perturbed_example1(
        np.random.default_rng([0, 0]), n=10, T=4, d=50, correlation=2, query_signal=0.5
    )
    W0s, _ = global_convergence.random_initialisations(
        np.random.default_rng([0, 1]), 50, 12, [1, 10, 100]
    )
    W_mm = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    grid = log_grid(1000, 30)
    spec = OptimizerSpec("polyak")  # uncapped: some runs overflow
    kw = dict(W0s=W0s, W_mm=W_mm[None], iterations=1000, log_iterations=grid, only="study")
    got, got_final, got_record = dispatch.train([ds], spec, **kw)
    monkeypatch.setattr(kernel, "supports", lambda spec, rule=None: False)  # the reference: torch
    ref, ref_final, ref_record = dispatch.train([ds], spec, **kw)
    assert (got_record["backend"], ref_record["backend"]) == ("c", "torch")
    lost = np.isnan(ref["gap_W"][:, -1])
    assert lost.any() and not lost.all()
    study = {"log_loss", "opt_softmax", "gap_W", "log_step_W", "max_log_step_W", *CROSSING_METRICS}
    assert set(ref) == set(got) == study  # only="study" on every backend; NaN under each
    assert np.isnan(ref["log_loss"][lost]).all() and np.isnan(ref_final["u"][lost]).all()
    for key, values in (("gap_W", got), ("opt_softmax", got), ("W", got_final)):
        reference = (ref_final if key == "W" else ref)[key]
        np.testing.assert_array_equal(np.isnan(values[key]), np.isnan(reference))
        finite = ~np.isnan(reference)
        np.testing.assert_allclose(values[key][finite], reference[finite], rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------- the full-W path


@pytest.mark.parametrize(
    "spec",
    [
        OptimizerSpec("sign", lr=0.01),
        OptimizerSpec("nsd", lr=0.05, norm="l3"),
        OptimizerSpec("nsd", lr=0.05, norm="spectral", schedule="sqrt"),
        OptimizerSpec("muon", lr=0.05),
        OptimizerSpec("adam", lr=0.01),
        OptimizerSpec("mirror", lr=1.0, p=3.0),
        OptimizerSpec("kq", lr=1.0, init_scale=0.1),
    ],
    ids=lambda s: s.caption(),
)
def test_each_direction_rule_trains_through_the_dispatcher(spec):
    """On the full W, batched: finite, the loss falls, and each run is what it is alone."""
    dss, W_mm, u_mm = example1_problem(True)
    grid = log_grid(200, 8)
    kw = dict(W_mm=W_mm, u_mm=u_mm, iterations=200, log_iterations=grid, train_u=True)
    table, final, record = dispatch.train(dss, spec, **kw)
    assert record["backend"] == "full" and dispatch.backend("cuda", "float32", spec) == "full"
    assert np.isfinite(table["log_loss"]).all() and np.isfinite(final["W"]).all()
    assert (table["log_loss"][:, -1] < table["log_loss"][:, 0]).all()
    alone, _, _ = dispatch.train(dss[1:], spec, **(kw | dict(W_mm=W_mm[1:], u_mm=u_mm[1:])))
    for name in alone:
        np.testing.assert_allclose(alone[name][0], table[name][1], rtol=1e-12, equal_nan=True)


# ---------------------------------------------------------------- backend choice


def _supports_by_fields(spec) -> bool:
    """A check by the spec's field list (the negative control): every field of the spec
    had to be a setting the kernel reads."""
    if spec.rule not in kernel.RULE_CODES:
        return False
    return not {f.name for f in dataclasses.fields(spec)} - kernel.KERNEL_SETTINGS


def test_a_new_setting_keeps_gd_ngd_and_ps_on_the_kernel():
    """OptimizerSpec gained settings the kernel does not read (schedule, norm, beta, ...):
    the old check moved GD, NGD and PS to torch; the rule's declaration keeps them on C."""
    for name in ("gd", "ngd", "polyak"):
        spec = OptimizerSpec(name)
        assert not _supports_by_fields(spec)  # the negative control: the field-list check's bug
        assert kernel.supports(spec)
        assert dispatch.backend("cpu", "float64", spec) == "c"

    @dataclasses.dataclass(frozen=True)
    class WithOneMore(OptimizerSpec):  # a setting added after this test was written
        nesterov: bool = False

    assert kernel.supports(WithOneMore("ngd", lr=0.1))
    for name, rule in rules.RULES.items():
        for example in rule.examples if rule.full_batch else ():
            assert kernel.supports(OptimizerSpec(name, **example)) == (rule.kernel_code is not None)


# ---------------------------------------------------------------- extra_metrics


@pytest.mark.parametrize(
    ("spec", "dtype", "expected_backend"),
    [
        (OptimizerSpec("ngd", lr=0.1), "float64", "c"),
        (OptimizerSpec("ngd", lr=0.1), "float32", "torch"),
        (OptimizerSpec("sign", lr=0.01), "float64", "full"),
    ],
    ids=["c", "torch", "full"],
)
def test_extra_metrics_on_every_backend(spec, dtype, expected_backend):
    dss, W_mm, u_mm = example1_problem(True)
    kw = dict(W_mm=W_mm, u_mm=u_mm, iterations=50, log_iterations=log_grid(50, 5), train_u=True,
              dtype=dtype)  # fmt: skip
    plain, plain_final, record = dispatch.train(dss, spec, **kw)
    hooked, final, _ = dispatch.train(dss, spec, extra_metrics=w_sum_u_first, **kw)
    assert record["backend"] == expected_backend
    assert set(hooked) - set(plain) == {"W_sum", "u_first"}
    for name in plain:  # the hook changes nothing else, bitwise
        np.testing.assert_array_equal(plain[name], hooked[name])
    np.testing.assert_array_equal(plain_final["W"], final["W"])
    np.testing.assert_allclose(hooked["W_sum"][:, -1], final["W"].sum(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(hooked["u_first"][:, -1], final["u"][:, 0], rtol=1e-6)
    assert hooked["W_sum"].shape == plain["log_loss"].shape
