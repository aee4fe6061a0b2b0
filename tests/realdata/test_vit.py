"""ViT for small datasets: shapes, SPT's shifts, LSA's mask and temperature, training."""

from __future__ import annotations

import math

import pytest
import torch
from fixtures_vision import write_cifar10, write_mnist

from attnbias.optim.stochastic import make_optimizer
from attnbias.realdata.vision import load_vision
from attnbias.realdata.vit import (
    LocalitySelfAttention,
    ViTSmall,
    layer_parameter_norms,
    shifted_inputs,
    to_patches,
)

SMALL = dict(dim=32, depth=2, heads=2, dim_head=8, mlp_dim=64)


@pytest.mark.parametrize("channels, size, tokens", [(1, 28, 49 + 1), (3, 32, 64 + 1)])
def test_output_and_token_shapes_for_mnist_and_cifar_sizes(channels, size, tokens):
    torch.manual_seed(0)
    model = ViTSmall(image_size=size, channels=channels, num_classes=10, **SMALL)
    images = torch.randn(5, channels, size, size)
    assert model(images).shape == (5, 10)
    assert model.tokens(images).shape == (5, tokens, 32)
    with pytest.raises(ValueError, match=rf"expected images \(B, {channels}, {size}, {size}\)"):
        model(torch.randn(5, channels, size + 4, size + 4))


def test_default_model_is_lee_et_al_vit():
    model = ViTSmall(image_size=32, channels=3)
    assert len(model.blocks) == 9
    lsa = model.blocks[0].attention
    assert (lsa.heads, lsa.dim_head) == (12, 16)
    assert model.blocks[0].feedforward[1].out_features == 384
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 10)


def test_shifted_inputs_are_the_image_and_its_four_one_pixel_shifts():
    x = torch.arange(2 * 2 * 4 * 4, dtype=torch.float32).reshape(2, 2, 4, 4) + 1
    out = shifted_inputs(x)
    assert out.shape == (2, 10, 4, 4)
    c = 2
    right, left, down, up = (out[:, c * (i + 1) : c * (i + 2)] for i in range(4))
    torch.testing.assert_close(out[:, :c], x)
    torch.testing.assert_close(right[..., 1:], x[..., :-1])
    assert (right[..., 0] == 0).all()
    torch.testing.assert_close(left[..., :-1], x[..., 1:])
    assert (left[..., -1] == 0).all()
    torch.testing.assert_close(down[..., 1:, :], x[..., :-1, :])
    assert (down[..., 0, :] == 0).all()
    torch.testing.assert_close(up[..., :-1, :], x[..., 1:, :])
    assert (up[..., -1, :] == 0).all()


def test_patches_are_row_major_and_flattened_row_column_channel():
    torch.manual_seed(1)
    x = torch.randn(2, 3, 8, 12)
    p = 4
    patches = to_patches(x, p)
    assert patches.shape == (2, 2 * 3, p * p * 3)
    for b, j, r, col, ch in [(0, 0, 0, 0, 0), (1, 4, 3, 2, 1), (0, 5, 1, 3, 2)]:
        row0, col0 = (j // 3) * p, (j % 3) * p
        assert patches[b, j, (r * p + col) * 3 + ch] == x[b, ch, row0 + r, col0 + col]


def _reference_lsa(lsa: LocalitySelfAttention, x: torch.Tensor) -> torch.Tensor:
    """LSA written out per head from the module's weights, with -inf on the diagonal."""
    h, d = lsa.heads, lsa.dim_head
    xn = torch.nn.functional.layer_norm(x, (x.shape[-1],), lsa.norm.weight, lsa.norm.bias)
    W = lsa.to_qkv.weight
    outs = []
    for head in range(h):
        q = xn @ W[head * d : (head + 1) * d].T
        k = xn @ W[h * d + head * d : h * d + (head + 1) * d].T
        v = xn @ W[2 * h * d + head * d : 2 * h * d + (head + 1) * d].T
        scores = q @ k.transpose(-1, -2) * math.exp(float(lsa.temperature.detach()))
        n = scores.shape[-1]
        scores = scores + torch.diag(torch.full((n,), -math.inf))
        outs.append(torch.softmax(scores, dim=-1) @ v)
    return lsa.to_out(torch.cat(outs, dim=-1))


def test_lsa_masks_the_diagonal_and_matches_a_reference():
    torch.manual_seed(2)
    lsa = LocalitySelfAttention(dim=16, heads=2, dim_head=8).double()
    with torch.no_grad():
        lsa.temperature.fill_(1.3)  # a non-default temperature must enter too
    x = torch.randn(3, 7, 16, dtype=torch.float64)
    probs = lsa.attention(x)
    assert probs.shape == (3, 2, 7, 7)
    # without the mask the diagonal would carry the largest share here: q_i and k_i are
    # both linear in x_i, so exp(t) q_i.k_i is usually the biggest score of row i
    assert torch.all(torch.diagonal(probs, dim1=-2, dim2=-1) == 0)
    torch.testing.assert_close(probs.sum(-1), torch.ones(3, 2, 7, dtype=torch.float64))
    torch.testing.assert_close(lsa(x), _reference_lsa(lsa, x))


def test_lsa_temperature_is_learnable_and_starts_at_log_inverse_sqrt_dim_head():
    lsa = LocalitySelfAttention(dim=16, heads=2, dim_head=8)
    assert isinstance(lsa.temperature, torch.nn.Parameter)
    assert float(lsa.temperature.detach()) == pytest.approx(math.log(8**-0.5))
    lsa(torch.randn(2, 5, 16)).pow(2).sum().backward()
    assert lsa.temperature.grad is not None and float(lsa.temperature.grad.abs()) > 0


def test_layer_parameter_norms_cover_every_parameter_once():
    torch.manual_seed(3)
    model = ViTSmall(image_size=28, channels=1, **SMALL)
    norms = layer_parameter_norms(model)
    assert list(norms) == [
        "patch_embedding",
        "position_embedding",
        "block0.attention",
        "block0.feedforward",
        "block1.attention",
        "block1.feedforward",
        "head",
    ]
    total = sum(float(p.detach().double().pow(2).sum()) for p in model.parameters())
    assert sum(v**2 for v in norms.values()) == pytest.approx(total, rel=1e-12)
    ff = model.blocks[1].feedforward
    flat = torch.cat([p.detach().flatten() for p in ff.parameters()])
    assert norms["block1.feedforward"] == pytest.approx(float(torch.linalg.norm(flat)), rel=1e-6)


@pytest.mark.parametrize(
    "dataset, name, settings",
    [
        ("mnist", "sngd", {"lr": 0.3}),
        ("cifar10", "sngd", {"lr": 0.3}),
        ("cifar10", "sps", {"eta_max": 0.5}),
        ("mnist", "adam", {"lr": 3e-3}),
    ],
)
def test_a_few_steps_reduce_the_loss_on_a_fixture_batch(tmp_path, dataset, name, settings):
    (write_mnist if dataset == "mnist" else write_cifar10)(tmp_path, 40, 10, seed=4)
    train = load_vision(dataset, tmp_path)["train"]
    torch.manual_seed(5)
    model = ViTSmall(image_size=train.images.shape[-1], channels=train.images.shape[1], **SMALL)
    opt = make_optimizer(name, model.parameters(), **settings)
    loss_fn = torch.nn.CrossEntropyLoss()

    def closure():
        opt.zero_grad()
        loss = loss_fn(model(train.images), train.labels)
        loss.backward()
        return loss

    first = float(closure().detach())  # about log(10) = 2.3
    losses = [float(opt.step(closure).detach()) for _ in range(20)]
    # full-batch steps this large are not monotone (SPS least): judge the last few
    assert min(losses[-5:]) < 0.75 * first, losses


def test_fused_attention_gives_the_plain_attention_outputs_loss_and_gradients(monkeypatch):
    """The whole model with F.scaled_dot_product_attention against the plain softmax @ v
    (LocalitySelfAttention.fused = False), in float32 as trained: the same logits, loss and
    gradients (the learned temperature's included) to rounding."""
    torch.manual_seed(6)
    model = ViTSmall(image_size=16, channels=3, num_classes=10, **SMALL)
    images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    results = {}
    for fused in (True, False):
        monkeypatch.setattr(LocalitySelfAttention, "fused", fused)
        model.zero_grad()
        logits = model(images)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        grads = {name: p.grad.clone() for name, p in model.named_parameters()}
        results[fused] = (logits.detach(), loss.detach(), grads)
    (l_f, loss_f, g_f), (l_p, loss_p, g_p) = results[True], results[False]
    torch.testing.assert_close(l_f, l_p, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(loss_f, loss_p, rtol=1e-6, atol=1e-7)
    assert float(g_f["blocks.0.attention.temperature"].abs()) > 0
    for name in g_f:
        torch.testing.assert_close(g_f[name], g_p[name], rtol=1e-4, atol=1e-6, msg=name)
