"""The full-batch optimizer (attnbias.optim.full_batch): each rule's step against a step
computed by hand on tiny tensors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnbias.model.gradient_weights import ScaledGradient
from attnbias.optim.full_batch import Optimizer
from attnbias.optim.spec import OptimizerSpec

F64 = torch.float64


def sg(log_scale, direction, log_norm):
    return ScaledGradient(
        torch.tensor(log_scale, dtype=F64),
        torch.tensor(direction, dtype=F64),
        torch.tensor(log_norm, dtype=F64),
    )


# Two runs (B = 2). W-block directions (B, 2, 2) and u-block directions (B, 2). The norms are
# given independently of the directions (for W they are norms in W-space, not of the
# coordinates), so the optimizer must use log_norm and never recompute it.
DIR_W = [[[1.0, -2.0], [0.5, 0.0]], [[0.0, 1.0], [3.0, -1.0]]]
DIR_U = [[2.0, -1.0], [0.25, 4.0]]
SCALE_W = [math.log(0.5), math.log(2.0)]
SCALE_U = [math.log(3.0), math.log(0.1)]
NORM_W = [math.log(4.0), math.log(0.25)]  # ||grad_W||
NORM_U = [math.log(3.0), math.log(0.5)]  # ||grad_u||
W_LIKE = torch.tensor(DIR_W, dtype=F64)  # a (B, 2, 2) tensor, for broadcasting per-run values


def grads_w():
    return {"W": sg(SCALE_W, DIR_W, NORM_W)}


def grads_wu():
    return {"W": sg(SCALE_W, DIR_W, NORM_W), "u": sg(SCALE_U, DIR_U, NORM_U)}


def params_like(grads, fill=1.0):
    return {name: torch.full_like(g.direction, fill) for name, g in grads.items()}


def per_run(values, like):
    """(B,) python values broadcast against a (B, ...) tensor."""
    v = torch.tensor(values, dtype=F64)
    return v.view(-1, *([1] * (like.dim() - 1)))


def full_grad(g: ScaledGradient):
    return per_run(g.log_scale.exp().tolist(), g.direction) * g.direction


def apply(spec, grads, log_excess=None, start=1.0):
    params = params_like(grads, start)
    Optimizer(spec).step(params, grads, log_excess)
    return params


def test_gd():
    grads = grads_wu()
    params = apply(OptimizerSpec("gd", lr=0.3), grads)
    for name in ("W", "u"):
        expected = 1.0 - 0.3 * full_grad(grads[name])
        torch.testing.assert_close(params[name], expected, rtol=1e-15, atol=1e-15)


def test_gd_lr_u():
    grads = grads_wu()
    params = apply(OptimizerSpec("gd", lr=0.3, lr_u=0.05), grads)
    torch.testing.assert_close(
        params["W"], 1.0 - 0.3 * full_grad(grads["W"]), rtol=1e-15, atol=1e-15
    )
    torch.testing.assert_close(
        params["u"], 1.0 - 0.05 * full_grad(grads["u"]), rtol=1e-15, atol=1e-15
    )


def test_ngd_uncapped():
    grads = grads_w()
    params = apply(OptimizerSpec("ngd", lr=0.1), grads)
    # step = lr / ||g|| * g, ||g|| = 4 and 0.25
    expected = 1.0 - per_run([0.1 / 4.0, 0.1 / 0.25], W_LIKE) * full_grad(grads["W"])
    torch.testing.assert_close(params["W"], expected, rtol=1e-15, atol=1e-15)


def test_ngd_cap_binding_in_one_run_only():
    # lr/||g|| = 0.025 (run 0) and 0.4 (run 1); cap 0.1 binds in run 1 only
    grads = grads_w()
    params = apply(OptimizerSpec("ngd", lr=0.1, max_step=0.1), grads)
    expected = 1.0 - per_run([0.025, 0.1], W_LIKE) * full_grad(grads["W"])
    torch.testing.assert_close(params["W"], expected, rtol=1e-15, atol=1e-15)


def test_ngd_cap_not_binding():
    grads = grads_w()
    capped = apply(OptimizerSpec("ngd", lr=0.1, max_step=10.0), grads)
    uncapped = apply(OptimizerSpec("ngd", lr=0.1), grads)
    torch.testing.assert_close(capped["W"], uncapped["W"], rtol=0, atol=0)
    assert not torch.equal(
        capped["W"], apply(OptimizerSpec("ngd", lr=0.1, max_step=0.1), grads)["W"]
    )


def test_ngd_gradient_far_below_smallest_float():
    """||g|| = 5 e^-2000 underflows, yet the normalised step is lr * G~ / 5.

    The logs are of size 2e3, where one ulp is 2.3e-13: that bounds the attainable relative
    accuracy of the step (the tolerance below is two such ulps)."""
    direction = [[[3.0, 4.0]]]
    grads = {"W": sg([-2000.0], direction, [-2000.0 + math.log(5.0)])}
    params = apply(OptimizerSpec("ngd", lr=0.1), grads, start=0.0)
    torch.testing.assert_close(
        params["W"], torch.tensor([[[-0.06, -0.08]]], dtype=F64), rtol=4.6e-13, atol=0
    )


def test_ngd_global_vs_per_block():
    grads = grads_wu()
    glob = apply(OptimizerSpec("ngd", lr=0.1), grads)
    per = apply(OptimizerSpec("ngd", lr=0.1, normalize="per_block"), grads)
    # global: ||(g_W, g_u)|| = sqrt(4^2 + 3^2) = 5 and sqrt(0.25^2 + 0.5^2)
    total = [5.0, math.sqrt(0.25**2 + 0.5**2)]
    for name in ("W", "u"):
        g = full_grad(grads[name])
        expected = 1.0 - per_run([0.1 / v for v in total], g) * g
        torch.testing.assert_close(glob[name], expected, rtol=1e-14, atol=1e-15)
    own = {"W": [4.0, 0.25], "u": [3.0, 0.5]}
    for name in ("W", "u"):
        g = full_grad(grads[name])
        expected = 1.0 - per_run([0.1 / v for v in own[name]], g) * g
        torch.testing.assert_close(per[name], expected, rtol=1e-14, atol=1e-15)


def test_ngd_per_block_lr_u():
    grads = grads_wu()
    per = apply(OptimizerSpec("ngd", lr=0.1, lr_u=0.02, normalize="per_block"), grads)
    g = full_grad(grads["u"])
    torch.testing.assert_close(
        per["u"], 1.0 - per_run([0.02 / 3.0, 0.02 / 0.5], g) * g, rtol=1e-14, atol=1e-15
    )


@pytest.mark.parametrize("normalize", ["global", "per_block"])
def test_zero_gradient_block_is_skipped(normalize):
    """At u = 0 the W-gradient is exactly zero (log_scale = log_norm = -inf)."""
    grads = {
        "W": sg([-math.inf, -math.inf], [[[0.0, 0.0], [0.0, 0.0]]] * 2, [-math.inf, -math.inf]),
        "u": sg(SCALE_U, DIR_U, NORM_U),
    }
    params = apply(OptimizerSpec("ngd", lr=0.1, normalize=normalize), grads)
    assert torch.equal(params["W"], torch.ones(2, 2, 2, dtype=F64))
    # u moves by its own norm in both modes (the W block adds nothing to the global norm)
    g = full_grad(grads["u"])
    torch.testing.assert_close(
        params["u"], 1.0 - per_run([0.1 / 3.0, 0.1 / 0.5], g) * g, rtol=1e-14, atol=1e-15
    )
    for p in params.values():
        assert bool(torch.isfinite(p).all())


@pytest.mark.parametrize("rule", ["gd", "ngd", "polyak"])
def test_all_zero_gradient_gives_no_nan(rule):
    grads = {"W": sg([-math.inf], [[[0.0, 0.0]]], [-math.inf])}
    le = torch.tensor([math.log(0.3)], dtype=F64) if rule == "polyak" else None
    settings = {"gd": dict(lr=0.1), "ngd": dict(lr=0.1, max_step=1.0), "polyak": {}}[rule]
    params = apply(OptimizerSpec(rule, **settings), grads, le)
    assert torch.equal(params["W"], torch.ones(1, 1, 2, dtype=F64))


def test_polyak_uncapped():
    grads = grads_w()
    excess = [0.2, 1e-3]
    log_excess = torch.tensor([math.log(v) for v in excess], dtype=F64)
    params = apply(OptimizerSpec("polyak"), grads, log_excess)
    # step = (L - f*) / ||g||^2
    steps = [0.2 / 16.0, 1e-3 / 0.0625]
    expected = 1.0 - per_run(steps, W_LIKE) * full_grad(grads["W"])
    torch.testing.assert_close(params["W"], expected, rtol=1e-14, atol=1e-15)


def test_polyak_eta_max_binding_and_not():
    grads = grads_w()
    log_excess = torch.tensor([math.log(0.2), math.log(1e-3)], dtype=F64)
    # uncapped steps: 0.0125 and 0.016; eta_max 0.014 binds only in run 1
    params = apply(OptimizerSpec("polyak", eta_max=0.014), grads, log_excess)
    expected = 1.0 - per_run([0.0125, 0.014], W_LIKE) * full_grad(grads["W"])
    torch.testing.assert_close(params["W"], expected, rtol=1e-14, atol=1e-15)
    loose = apply(OptimizerSpec("polyak", eta_max=1.0), grads, log_excess)
    free = apply(OptimizerSpec("polyak"), grads, log_excess)
    torch.testing.assert_close(loose["W"], free["W"], rtol=0, atol=0)


def test_polyak_global_norm_over_two_blocks():
    grads = grads_wu()
    log_excess = torch.tensor([math.log(0.5), math.log(0.01)], dtype=F64)
    params = apply(OptimizerSpec("polyak"), grads, log_excess)
    sq = [25.0, 0.25**2 + 0.5**2]
    for name in ("W", "u"):
        g = full_grad(grads[name])
        expected = 1.0 - per_run([0.5 / sq[0], 0.01 / sq[1]], g) * g
        torch.testing.assert_close(params[name], expected, rtol=1e-14, atol=1e-15)


def test_polyak_tiny_excess_in_logs():
    """L - f* = e^-1000 and ||g||^2 = 4 e^-1000 both underflow; the step length is 1/4 and
    the update 0.25 * g with g = e^-500 G~. (Logs of size 1e3: one ulp is 1.1e-13.)"""
    grads = {"W": sg([-500.0], [[[1.0, -2.0]]], [-500.0 + math.log(2.0)])}
    params = apply(OptimizerSpec("polyak"), grads, torch.tensor([-1000.0], dtype=F64), start=0.0)
    expected = -0.25 * math.exp(-500.0) * torch.tensor([[[1.0, -2.0]]], dtype=F64)
    assert expected.abs().min() > 0
    torch.testing.assert_close(params["W"], expected, rtol=2.3e-13, atol=0)


@pytest.mark.parametrize("rule", ["gd", "ngd"])
def test_momentum_two_steps(rule):
    beta = 0.9
    spec = OptimizerSpec(rule, lr=0.1, momentum=beta)
    opt = Optimizer(spec)
    g1 = grads_w()
    g2 = {
        "W": sg(
            [0.0, math.log(3.0)],
            [[[1.0, 1.0], [1.0, 1.0]], [[-1.0, 0.0], [2.0, 0.0]]],
            [math.log(2.0), math.log(6.0)],
        )
    }
    params = params_like(g1, 0.0)
    opt.step(params, g1)
    if rule == "gd":
        step1 = 0.1 * full_grad(g1["W"])
        step2 = 0.1 * full_grad(g2["W"])
    else:
        step1 = per_run([0.1 / 4.0, 0.1 / 0.25], W_LIKE) * full_grad(g1["W"])
        step2 = per_run([0.1 / 2.0, 0.1 / 6.0], W_LIKE) * full_grad(g2["W"])
    torch.testing.assert_close(params["W"], -step1, rtol=1e-14, atol=1e-15)
    opt.step(params, g2)
    buf = beta * step1 + step2
    torch.testing.assert_close(params["W"], -step1 - buf, rtol=1e-14, atol=1e-15)
    # without momentum the second step would be different
    assert not torch.allclose(params["W"], -step1 - step2)


def test_momentum_buffers_are_per_block():
    beta = 0.5
    opt = Optimizer(OptimizerSpec("ngd", lr=1.0, momentum=beta, normalize="per_block"))
    grads = grads_wu()
    params = params_like(grads, 0.0)
    opt.step(params, grads)
    opt.step(params, grads)
    for name, own in (("W", [4.0, 0.25]), ("u", [3.0, 0.5])):
        g = full_grad(grads[name])
        step = per_run([1.0 / v for v in own], g) * g
        torch.testing.assert_close(
            params[name], -(step + (beta * step + step)), rtol=1e-14, atol=1e-15
        )


@pytest.mark.parametrize(
    "spec",
    [OptimizerSpec("mirror", p=1.75, dual_normalize="per_block"),
     OptimizerSpec("kq", dual_normalize="per_block")],
)  # fmt: skip
def test_a_direction_rule_is_refused_by_the_step_length_backends(spec):
    """The kernel's and torch stepper's Optimizer cannot take mirror's or kq's update (it
    leaves the token coordinates): a clear refusal, not a TypeError or another rule."""
    with pytest.raises(ValueError, match=f"rule {spec.rule} is a direction rule"):
        Optimizer(spec)
    Optimizer(OptimizerSpec("ngd"))  # control: a step-length rule is taken


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("rule", ["gd", "ngd"])
def test_numpy_blocks_take_the_steps_torch_blocks_take(rule, momentum):
    """numpy blocks (the full W) form coef * G~ in the optimizer's buffer (_product), made
    once; two steps agree with torch's, with momentum too, whose buffer must keep the first
    step (with _product's buffer under momentum, the second step read it overwritten)."""
    spec = OptimizerSpec(rule, lr=0.1, momentum=momentum)
    g2 = sg([0.0, math.log(3.0)], [[[1.0, 1.0], [1.0, 1.0]], [[-1.0, 0.0], [2.0, 0.0]]],
            [math.log(2.0), math.log(6.0)])  # fmt: skip
    steps = [grads_w(), {"W": g2}]
    as_numpy = [
        {k: ScaledGradient(*(np.array(v.numpy()) for v in (g.log_scale, g.direction, g.log_norm)))
         for k, g in grads.items()}
        for grads in steps
    ]  # fmt: skip
    opt_t, opt_n = Optimizer(spec), Optimizer(spec)
    params_t, params_n = params_like(steps[0], 0.0), {"W": np.zeros((2, 2, 2))}
    for grads_t, grads_n in zip(steps, as_numpy, strict=True):
        opt_t.step(params_t, grads_t)
        opt_n.step(params_n, grads_n)
    np.testing.assert_allclose(params_n["W"], params_t["W"].numpy(), rtol=1e-14, atol=1e-15)
