"""SNGD and SPS (attnbias.optim.stochastic) against steps computed by hand from plain tensors."""

from __future__ import annotations

import copy
import io
import math

import pytest
import torch
from host_reads import HostRead, no_host_reads

from attnbias.optim import cap_count, stochastic
from attnbias.optim.stochastic import SNGD, SPS, make_optimizer

# Two tensors whose gradients have very different norms, so a per-tensor norm and the
# global one give visibly different steps.
G_A = torch.tensor([[3.0, 0.0], [0.0, 4.0]], dtype=torch.float64)  # norm 5
G_B = torch.tensor([0.1, -0.2, 0.2], dtype=torch.float64)  # norm 0.3


def _params():
    torch.manual_seed(0)
    a = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    return a, b


def _set_grads(params, grads):
    for p, g in zip(params, grads, strict=True):
        p.grad = g.clone()


def _global_norm(grads):
    return math.sqrt(sum(float((g**2).sum()) for g in grads))


def test_sngd_step_uses_the_global_norm_not_per_tensor():
    a, b = _params()
    a0, b0 = a.detach().clone(), b.detach().clone()
    opt = SNGD([a, b], lr=0.1)
    _set_grads((a, b), (G_A, G_B))
    opt.step()
    norm = math.sqrt(5.0**2 + 0.3**2)
    assert _global_norm((G_A, G_B)) == pytest.approx(norm)
    torch.testing.assert_close(a.detach(), a0 - 0.1 * G_A / norm)
    torch.testing.assert_close(b.detach(), b0 - 0.1 * G_B / norm)
    # per-tensor normalisation would move b by 0.1 in norm; the global one by 0.1 * 0.3 / norm
    assert float((b.detach() - b0).norm()) == pytest.approx(0.1 * 0.3 / norm)
    assert opt.last_step_sizes == [pytest.approx(0.1 / norm)]


def test_sngd_global_norm_spans_param_groups_each_with_its_lr():
    a, b = _params()
    a0, b0 = a.detach().clone(), b.detach().clone()
    opt = SNGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    _set_grads((a, b), (G_A, G_B))
    opt.step()
    norm = math.sqrt(25.09)
    torch.testing.assert_close(a.detach(), a0 - 0.1 * G_A / norm)
    torch.testing.assert_close(b.detach(), b0 - 1.0 * G_B / norm)


def test_sngd_cap_binds_only_when_lr_over_norm_exceeds_it():
    a, b = _params()
    a0 = a.detach().clone()
    opt = SNGD([a], lr=1.0, max_step=0.05)
    small = G_A * 1e-3  # norm 5e-3: lr / norm = 200 > cap, so the step is 0.05 * g
    _set_grads((a,), (small,))
    opt.step()
    torch.testing.assert_close(a.detach(), a0 - 0.05 * small)
    a1 = a.detach().clone()
    _set_grads((a,), (G_A * 100,))  # norm 500: lr / norm = 2e-3 < cap, plain NGD
    opt.step()
    torch.testing.assert_close(a.detach(), a1 - G_A * 100 / 500)


def test_sngd_momentum_is_heavy_ball_on_the_normalized_gradient():
    a, b = _params()
    p = [a.detach().clone(), b.detach().clone()]
    opt = SNGD([a, b], lr=0.2, momentum=0.9)
    grads = [(G_A, G_B), (-2 * G_A, G_B), (G_A, 3 * G_B)]
    buf = [torch.zeros_like(x) for x in p]
    for g in grads:
        _set_grads((a, b), g)
        opt.step()
        norm = _global_norm(g)
        # by hand: buf <- 0.9 buf + (lr / ||g||) g ; p <- p - buf
        buf = [0.9 * v + 0.2 / norm * gi for v, gi in zip(buf, g, strict=True)]
        p = [x - v for x, v in zip(p, buf, strict=True)]
    torch.testing.assert_close(a.detach(), p[0])
    torch.testing.assert_close(b.detach(), p[1])


def test_sngd_follows_an_lr_schedule_down_to_zero():
    a, b = _params()
    opt = SNGD([a, b], lr=0.1, momentum=0.9, max_step=1.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: max(1.0 - t / 2, 0.0))
    norm = math.sqrt(25.09)
    for expected in (0.1 / norm, 0.05 / norm, 0.0):
        _set_grads((a, b), (G_A, G_B))
        before = a.detach().clone()
        opt.step()
        schedule.step()
        assert opt.last_step_sizes == [pytest.approx(expected)]
    torch.testing.assert_close(a.detach(), before)  # lr 0 moves nothing, momentum or not


def test_zero_gradient_skips_the_step_momentum_included():
    a, b = _params()
    opt = SNGD([a, b], lr=0.1, momentum=0.9)
    _set_grads((a, b), (G_A, G_B))
    opt.step()
    before = [a.detach().clone(), b.detach().clone()]
    buffers = [opt.state[p]["momentum_buffer"].clone() for p in (a, b)]
    _set_grads((a, b), (torch.zeros_like(G_A), torch.zeros_like(G_B)))
    opt.step()  # heavy ball would still move by 0.9 * buf; a skipped step does not
    torch.testing.assert_close(a.detach(), before[0])
    torch.testing.assert_close(b.detach(), before[1])
    for p, old in zip((a, b), buffers, strict=True):
        torch.testing.assert_close(opt.state[p]["momentum_buffer"], old)
    assert opt.last_step_sizes == [None]

    sps = SPS([a, b], eta_max=1.0)
    sps.step(loss=1.0)
    torch.testing.assert_close(a.detach(), before[0])


def test_no_gradients_at_all_is_a_no_op():
    a, b = _params()
    a0 = a.detach().clone()
    SNGD([a, b], lr=0.1).step()
    torch.testing.assert_close(a.detach(), a0)


@pytest.mark.parametrize(
    "eta_max, loss, f_star, c",
    [
        (100.0, 2.0, 0.0, 0.5),  # Polyak step (2 / (0.5 * 25.09)) below the cap
        (0.01, 2.0, 0.0, 0.5),  # the cap binds
        (100.0, 2.0, 1.5, 0.2),  # f_star and c enter
        (100.0, 1.0, 1.5, 0.5),  # loss below f_star: no move
    ],
)
def test_sps_step_against_hand_computed(eta_max, loss, f_star, c):
    a, b = _params()
    a0, b0 = a.detach().clone(), b.detach().clone()
    opt = SPS([a, b], eta_max=eta_max, c=c, f_star=f_star)
    _set_grads((a, b), (G_A, G_B))
    opt.step(loss=torch.tensor(loss))
    sq = 5.0**2 + 0.3**2
    size = min(eta_max, max(loss - f_star, 0.0) / (c * sq))
    torch.testing.assert_close(a.detach(), a0 - size * G_A)
    torch.testing.assert_close(b.detach(), b0 - size * G_B)
    assert opt.last_step_sizes == [pytest.approx(size)]


def _quadratic_problem():
    torch.manual_seed(1)
    X = torch.randn(16, 3, dtype=torch.float64)
    y = torch.randn(16, dtype=torch.float64)
    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    return X, y, w


def test_sps_closure_and_loss_and_add_loss_give_the_same_step():
    results = []
    for mode in ("closure", "loss", "add_loss"):
        X, y, w = _quadratic_problem()
        opt = SPS([w], eta_max=10.0)

        def closure(X=X, y=y, w=w, opt=opt):
            opt.zero_grad()
            loss = ((X @ w - y) ** 2).mean()
            loss.backward()
            return loss

        if mode == "closure":
            returned = opt.step(closure)
            assert float(returned.detach()) > 0
        else:
            loss = closure()
            if mode == "loss":
                opt.step(loss=loss)
            else:  # handed over in two halves, as with gradient accumulation
                opt.add_loss(loss / 2)
                opt.add_loss(float(loss.detach()) / 2)
                opt.step()
        results.append(w.detach().clone())
    # by hand: loss = mean(y^2) at w = 0, g = -2 X^T y / n
    X, y, _ = _quadratic_problem()
    g = -2 * X.T @ y / len(y)
    size = min(10.0, float((y**2).mean()) / (0.5 * float(g @ g)))
    for w in results:
        torch.testing.assert_close(w, -size * g)


def test_sps_without_loss_or_with_both_is_a_clear_error():
    X, y, w = _quadratic_problem()
    opt = SPS([w])
    ((X @ w - y) ** 2).mean().backward()
    with pytest.raises(ValueError, match="needs the mini-batch loss"):
        opt.step()
    with pytest.raises(ValueError, match="either a closure or loss"):
        opt.step(lambda: torch.tensor(1.0), loss=1.0)
    opt.add_loss(1.0)
    opt.step()
    with pytest.raises(ValueError, match="needs the mini-batch loss"):
        opt.step()  # a handed-over loss serves one step only


def test_sps_param_group_may_name_the_cap_eta_max():
    a, b = _params()
    opt = SPS([{"params": [a], "eta_max": 1e-3}, {"params": [b]}], eta_max=100.0)
    assert [g["lr"] for g in opt.param_groups] == [1e-3, 100.0]
    b0 = b.detach().clone()
    _set_grads((a, b), (G_A, G_B))
    opt.step(loss=2.0)
    size_b = min(100.0, 2.0 / (0.5 * 25.09))  # the norm is global, the cap per group
    torch.testing.assert_close(b.detach(), b0 - size_b * G_B)
    assert opt.last_step_sizes[0] == pytest.approx(1e-3)


def _tiny_model():
    torch.manual_seed(2)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def _batches(n):
    gen = torch.Generator().manual_seed(3)
    for _ in range(n):
        x = torch.randn(8, 4, generator=gen)
        yield x, (x[:, 0] > 0).long() + (x[:, 1] > 0).long()


@pytest.mark.parametrize(
    "name, settings",
    [("sngd", {"lr": 0.1, "momentum": 0.5, "max_step": 1.0}), ("sps", {"eta_max": 0.5})],
)
def test_state_dict_round_trip_mid_run_gives_identical_next_steps(name, settings):
    model = _tiny_model()
    opt = make_optimizer(name, model.parameters(), **settings)
    batches = list(_batches(6))
    loss_fn = torch.nn.CrossEntropyLoss()

    def train_step(m, o, x, t):
        o.zero_grad()
        loss = loss_fn(m(x), t)
        loss.backward()
        o.step(loss=loss) if isinstance(o, SPS) else o.step()

    for x, t in batches[:3]:
        train_step(model, opt, x, t)
    clone = copy.deepcopy(model)
    restored = make_optimizer(name, clone.parameters(), **{k: 1e-9 for k in settings})
    # Through bytes, as from a checkpoint: a live state_dict holds references to the
    # buffers themselves (torch.optim.SGD's too), which two optimizers would then share.
    checkpoint = io.BytesIO()
    torch.save(opt.state_dict(), checkpoint)
    checkpoint.seek(0)
    restored.load_state_dict(torch.load(checkpoint))
    for x, t in batches[3:]:
        train_step(model, opt, x, t)
        train_step(clone, restored, x, t)
        for p, q in zip(model.parameters(), clone.parameters(), strict=True):
            assert torch.equal(p, q)
    if settings.get("momentum"):
        for p, q in zip(model.parameters(), clone.parameters(), strict=True):
            assert torch.equal(
                opt.state[p]["momentum_buffer"], restored.state[q]["momentum_buffer"]
            )


@pytest.mark.parametrize(
    "name, settings",
    [
        ("sgd", {"lr": 0.5}),
        ("sngd", {"lr": 0.05}),
        ("sngd", {"lr": 0.05, "momentum": 0.5}),
        ("sps", {"eta_max": 1.0}),
        ("adam", {"lr": 0.01}),
    ],
)
def test_usable_in_a_plain_training_loop(name, settings):
    model = _tiny_model()
    opt = make_optimizer(name, model.parameters(), **settings)
    x, t = next(_batches(1))
    loss_fn = torch.nn.CrossEntropyLoss()

    def closure():
        opt.zero_grad()
        loss = loss_fn(model(x), t)
        loss.backward()
        return loss

    first = float(closure().detach())
    for _ in range(60):
        opt.step(closure)
    assert float(closure().detach()) < 0.7 * first


def test_make_optimizer_maps_names_and_rejects_unknowns():
    params = list(_tiny_model().parameters())
    assert type(make_optimizer("sgd", params, lr=0.1)) is torch.optim.SGD
    assert type(make_optimizer("adam", params, lr=0.1)) is torch.optim.Adam
    assert type(make_optimizer("sngd", params, lr=0.1, max_step=2.0)) is SNGD
    sps = make_optimizer("sps", params, eta_max=2.0, c=0.2, f_star=0.1)
    assert type(sps) is SPS
    assert sps.param_groups[0]["lr"] == 2.0 and sps.param_groups[0]["c"] == 0.2
    with pytest.raises(ValueError, match=r"unknown optimizer 'lbfgs'.*'sngd'"):
        make_optimizer("lbfgs", params)
    with pytest.raises(ValueError, match=r"'sps'.*\['lr'\].*eta_max"):
        make_optimizer("sps", params, lr=0.1)
    with pytest.raises(ValueError, match=r"'sngd'.*\['cap'\]"):
        make_optimizer("sngd", params, lr=0.1, cap=1.0)


@pytest.mark.parametrize(
    "cls, settings",
    [
        (SNGD, {"lr": 0.0}),
        (SNGD, {"lr": 0.1, "momentum": 1.0}),
        (SNGD, {"lr": 0.1, "max_step": -1.0}),
        (SPS, {"eta_max": 0.0}),
        (SPS, {"c": -0.5}),
        (SPS, {"f_star": math.nan}),
    ],
)
def test_bad_settings_are_rejected(cls, settings):
    with pytest.raises(ValueError, match=cls.__name__):
        cls(_tiny_model().parameters(), **settings)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_non_finite_gradient_is_an_error_when_the_step_is_read(dtype):
    """The step itself reads nothing from the device, so the error comes with the first read
    of its result (the trainer's log points read the loss, which is then not finite). The
    fused path (float32) skips the step; the foreach path (float64) spoils the parameters,
    as torch's SGD does."""
    a, b = (p.detach().to(dtype).requires_grad_() for p in _params())
    a0 = a.detach().clone()
    _set_grads((a, b), (G_A.to(dtype) * math.inf, G_B.to(dtype)))
    opt = SNGD([a, b], lr=0.1)
    opt.step()
    with pytest.raises(FloatingPointError, match="gradient norm is nan"):
        opt.last_step_sizes  # noqa: B018 (the read is the test)
    if dtype == torch.float32:
        torch.testing.assert_close(a.detach(), a0)


def test_sps_non_finite_loss_moves_nothing_and_is_an_error_when_read():
    a, b = _params()
    before = [a.detach().clone(), b.detach().clone()]
    opt = SPS([a, b], eta_max=1.0)
    _set_grads((a, b), (G_A, G_B))
    opt.step(loss=torch.tensor(math.nan))
    torch.testing.assert_close(a.detach(), before[0])
    torch.testing.assert_close(b.detach(), before[1])
    with pytest.raises(FloatingPointError, match="the loss is nan"):
        opt.last_step_sizes  # noqa: B018
    with pytest.raises(FloatingPointError, match="the loss is inf"):
        opt.step(loss=math.inf)  # a Python float is checked at once: no device to wait for


def test_the_host_read_guard_catches_reads(monkeypatch):
    """Negative control for the guard the no-sync tests use."""
    t = torch.tensor([1.5])
    for read in (float, bool, lambda x: x.item(), lambda x: x.tolist()):
        with no_host_reads(monkeypatch), pytest.raises(HostRead):
            read(t)
    assert float(t) == 1.5  # and it is gone afterwards


@pytest.mark.parametrize(
    "name, settings",
    [
        ("sngd", {"lr": 0.1}),
        ("sngd", {"lr": 0.1, "momentum": 0.9, "max_step": 0.5}),
        ("sps", {"eta_max": 0.5, "f_star": 0.1}),
    ],
)
def test_a_step_reads_nothing_from_the_device(monkeypatch, name, settings):
    model = _tiny_model()
    opt = make_optimizer(name, model.parameters(), **settings)
    x, t = next(_batches(1))

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), t)
        loss.backward()
        return loss

    before = [p.detach().clone() for p in model.parameters()]
    with no_host_reads(monkeypatch):
        for _ in range(3):
            opt.step(closure)
        if name == "sps":  # the HF Trainer's way too
            opt.add_loss(closure())
            opt.step()
    assert all(s is not None and s > 0 for s in opt.last_step_sizes)
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True))


def _plain_sngd(params, grads, lr, momentum, cap, bufs):
    """SNGD with a Python loop over the parameters and the norm as a Python float."""
    norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
    size = lr / norm if cap is None else min(lr / norm, cap)
    for p, g, buf in zip(params, grads, bufs, strict=True):
        if momentum:
            buf.mul_(momentum).add_(g, alpha=size / lr)
            p.sub_(lr * buf)
        else:
            p.sub_(size * g)


def _plain_sps(params, grads, loss, eta_max, c, f_star):
    sq = sum(float((g.double() ** 2).sum()) for g in grads)
    size = min(eta_max, max(loss - f_star, 0.0) / (c * sq))
    for p, g in zip(params, grads, strict=True):
        p.sub_(size * g)


@pytest.mark.parametrize(
    "name, settings",
    [
        ("sngd", {"lr": 0.3, "momentum": 0.0, "max_step": None}),
        ("sngd", {"lr": 0.3, "momentum": 0.9, "max_step": None}),
        ("sngd", {"lr": 0.3, "momentum": 0.5, "max_step": 0.2}),  # the cap binds at times
        ("sps", {"eta_max": 0.4, "c": 0.5, "f_star": 0.0}),  # the cap binds at times
        ("sps", {"eta_max": 100.0, "c": 0.3, "f_star": 0.7}),  # f* decides, even no move
    ],
)
@pytest.mark.parametrize("path", ["fused", "foreach"])
def test_device_steps_equal_the_plain_per_parameter_form(monkeypatch, name, settings, path):
    """Ten steps on random gradients of very different sizes (so caps bind in some steps
    only) over three float32 tensors in two param groups, against a Python loop; through
    torch's fused SGD kernel and through the foreach ops (float64's path) alike."""
    fused_calls = []
    fused = torch._fused_sgd_
    monkeypatch.setattr(
        torch, "_fused_sgd_", lambda *a, **k: fused_calls.append(1) or fused(*a, **k)
    )
    if path == "foreach":
        monkeypatch.setattr(stochastic, "_fusable", lambda params: False)
    gen = torch.Generator().manual_seed(4)
    shapes = [(4, 3), (3,), (2, 2, 2)]
    params = [torch.randn(s, generator=gen) for s in shapes]
    plain = [p.clone() for p in params]
    bufs = [torch.zeros_like(p) for p in params]
    groups = [{"params": params[:2]}, {"params": params[2:]}]
    opt = make_optimizer(name, groups, **{k: v for k, v in settings.items() if v is not None})
    for step in range(10):
        scale = 10.0 ** (step % 5 - 2)  # 0.01 ... 100
        grads = [scale * torch.randn(s, generator=gen) for s in shapes]
        loss = float(torch.rand((), generator=gen)) * 2
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        if name == "sngd":
            opt.step()
            _plain_sngd(plain, grads, settings["lr"], settings["momentum"],
                        settings["max_step"], bufs)  # fmt: skip
        else:
            opt.step(loss=torch.tensor(loss))
            _plain_sps(plain, grads, loss, **settings)
        for p, q in zip(params, plain, strict=True):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    assert bool(fused_calls) == (path == "fused")


# ---------------------------------------------------------------- when the cap binds


def _cap_steps(opt, grads, loss=1.0):
    """Step `opt` once per gradient pair of `grads` (SPS with `loss`)."""
    a, b = (p for group in opt.param_groups for p in group["params"])
    for g in grads:
        _set_grads((a, b), g)
        opt.step(loss=loss) if isinstance(opt, SPS) else opt.step()


STEPS = [(G_A, G_B), (-2 * G_A, G_B), (G_A * 1e-3, 3 * G_B)]
ZERO = (torch.zeros_like(G_A), torch.zeros_like(G_B))


@pytest.mark.parametrize(
    "make, bound",
    [
        (lambda p: SNGD(p, lr=1.0, max_step=1e-9), True),  # lr / ||g|| >= 1e-9 always
        (lambda p: SNGD(p, lr=1.0, momentum=0.9, max_step=1e-9), True),
        (lambda p: SNGD(p, lr=1.0, max_step=1e9), False),
        (lambda p: SNGD(p, lr=1.0), False),  # no cap
        (lambda p: SPS(p, eta_max=1e-9), True),  # the Polyak step is above 1e-9 always
        (lambda p: SPS(p, eta_max=1e9), False),
        (lambda p: SPS(p), False),  # eta_max inf: no cap
    ],
)
def test_the_cap_bound_count_counts_the_steps_at_which_it_bound(make, bound):
    opt = make(list(_params()))
    assert opt.cap_bound_steps == 0 and opt.last_cap_bound is None
    _cap_steps(opt, STEPS)
    assert opt.cap_bound_steps == (len(STEPS) if bound else 0)
    assert opt.last_cap_bound is bound
    _cap_steps(opt, [ZERO])  # a skipped step (zero gradient) is not counted as bound
    assert opt.cap_bound_steps == (len(STEPS) if bound else 0)
    assert opt.last_cap_bound is None


def test_the_cap_binds_at_exactly_the_steps_where_the_step_size_is_the_cap():
    """SNGD: lr / ||g|| >= max_step; SPS: the Polyak step >= eta_max; per step, and a step
    counts once when the cap binds in any group."""
    norm = math.sqrt(25.09)
    opt = SNGD(list(_params()), lr=1.0, max_step=1 / (1.5 * norm))  # binds at ||g|| <= 1.5 norm
    record = []
    for g in [(G_A, G_B), (2 * G_A, 2 * G_B), (0.5 * G_A, 0.5 * G_B)]:
        _cap_steps(opt, [g])
        record.append(opt.last_cap_bound)
    assert record == [True, False, True] and opt.cap_bound_steps == 2
    a, b = _params()
    # the Polyak step 1 / (0.5 * 25.09) ~ 0.08: above group b's cap, below group a's
    sps = SPS([{"params": [a], "eta_max": 1.0}, {"params": [b], "eta_max": 0.01}])
    _cap_steps(sps, [(G_A, G_B)] * 2)
    assert sps.last_step_sizes == [pytest.approx(2 / 25.09), pytest.approx(0.01)]
    assert sps.cap_bound_steps == 2  # bound in one group: the step counts, once


@pytest.mark.parametrize("name", ["sngd", "sps"])
def test_the_cap_bound_count_is_in_the_state_dict(name):
    settings = {"lr": 1.0, "max_step": 1e-9} if name == "sngd" else {"eta_max": 1e-9}
    opt = make_optimizer(name, list(_params()), **settings)
    _cap_steps(opt, STEPS)
    checkpoint = io.BytesIO()
    torch.save(opt.state_dict(), checkpoint)
    checkpoint.seek(0)
    restored = make_optimizer(name, list(_params()), **settings)
    restored.load_state_dict(torch.load(checkpoint, weights_only=True))
    assert restored.cap_bound_steps == len(STEPS)
    _cap_steps(restored, STEPS[:1])
    assert restored.cap_bound_steps == len(STEPS) + 1
    assert opt.cap_bound_steps == len(STEPS)  # not shared with the restored one
    older = opt.state_dict()  # a state dict written before the count was kept
    del older[cap_count.CAP_BOUND_KEY]
    fresh = make_optimizer(name, list(_params()), **settings)
    fresh.load_state_dict(older)
    assert fresh.cap_bound_steps == 0


def test_counting_the_cap_reads_nothing_from_the_device(monkeypatch):
    opt = SPS(list(_params()), eta_max=1e-9)
    with no_host_reads(monkeypatch):
        _cap_steps(opt, STEPS)
    assert opt.cap_bound_steps == len(STEPS)  # read when asked
