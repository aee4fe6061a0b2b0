"""ViT for small datasets (Lee, Lee, Song 2021, arXiv 2112.13492): the paper's "ViT-small".

The same architecture as lucidrains' vit-pytorch `vit_pytorch/vit_for_small_dataset.py`,
which the paper used, written here in plain torch:

  Shifted Patch Tokenization (SPT): the image and four copies shifted by one pixel
    (right, left, down, up; zeros fill in) are stacked along the channels, cut into
    patch x patch patches, flattened, layer-normed and linearly embedded.
  a learned class token and learned position embeddings (randn init), then `depth` blocks
    x <- x + LSA(x), x <- x + FeedForward(x), both pre-norm,
  Locality Self-Attention (LSA): softmax(exp(t) q k^T) v with a learnable temperature t
    (init log(1 / sqrt(dim_head))) and the diagonal masked, so no token attends to itself;
    computed with PyTorch's fused scaled_dot_product_attention.
  head: LayerNorm and a linear layer on the class token (pool="cls") or the token mean.

Why not depend on vit-pytorch: its package `__init__` imports torchvision. Beside the CPU
build of torch, where torchvision has only CUDA wheels, `import torchvision` fails, and
transformers, which imports torchvision whenever it is installed, breaks with it; so the
project does without torchvision (docs/environment.md).

The defaults are Lee et al.'s ViT for 32x32 images (their `create_model.py`): dim 192,
depth 9, 12 heads of 16, MLP width 384, patch 4. The depth, heads and MLP width the paper
used were lost in extraction: set them in the config.

`layer_parameter_norms(model)` gives the Frobenius norm of each layer's parameters
(the paper's Fig. 7).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

# (left, right, top, bottom) padding of F.pad; a negative value crops. (1, -1, 0, 0) moves
# the image one pixel right, and so on: right, left, down, up.
SHIFTS = ((1, -1, 0, 0), (-1, 1, 0, 0), (0, 0, 1, -1), (0, 0, -1, 1))


def shifted_inputs(images: torch.Tensor) -> torch.Tensor:
    """(B, C, H, W) -> (B, 5C, H, W): the images, then shifted right, left, down and up."""
    return torch.cat([images, *(F.pad(images, shift) for shift in SHIFTS)], dim=1)


def to_patches(images: torch.Tensor, patch: int) -> torch.Tensor:
    """(B, C, H, W) -> (B, H/p * W/p, p * p * C): patches in row-major order, each flattened
    as (row in patch, column in patch, channel), vit-pytorch's order."""
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // patch, patch, w // patch, patch)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(b, (h // patch) * (w // patch), patch * patch * c)


class ShiftedPatchTokenization(nn.Module):
    def __init__(self, channels: int, patch_size: int, dim: int):
        super().__init__()
        self.patch_size = patch_size
        patch_dim = 5 * channels * patch_size**2
        self.norm = nn.LayerNorm(patch_dim)
        self.proj = nn.Linear(patch_dim, dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.proj(self.norm(to_patches(shifted_inputs(images), self.patch_size)))


class LocalitySelfAttention(nn.Module):
    # fused: F.scaled_dot_product_attention; False: the plain softmax(scores) @ v, kept as
    # the reference the tests hold the fused path to
    fused = True

    def __init__(self, dim: int, heads: int, dim_head: int, dropout: float = 0.0):
        super().__init__()
        self.heads, self.dim_head = heads, dim_head
        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, 3 * heads * dim_head, bias=False)
        # learnable temperature, stored as its log: the scores are exp(t) q k^T
        self.temperature = nn.Parameter(torch.tensor(math.log(dim_head**-0.5)))
        self.attn_dropout = nn.Dropout(dropout)
        self.to_out = nn.Sequential(nn.Linear(heads * dim_head, dim), nn.Dropout(dropout))

    def _qkv(self, x: torch.Tensor):
        b, n, _ = x.shape
        qkv = self.to_qkv(self.norm(x)).reshape(b, n, 3, self.heads, self.dim_head)
        return qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, heads, N, dim_head)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """The attention probabilities (B, heads, N, N), zero on the diagonal."""
        q, k, _ = self._qkv(x)
        return self._probs(q, k)

    def _fused_attention(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The same attention through PyTorch's scaled_dot_product_attention (fused kernels).
        Its `scale` must be a Python number, so the learned temperature scales q instead;
        its boolean mask marks the pairs that take part, here all but the diagonal."""
        n = q.shape[-2]
        return F.scaled_dot_product_attention(
            q * self.temperature.exp(),
            k,
            v,
            attn_mask=~torch.eye(n, dtype=torch.bool, device=q.device),
            dropout_p=self.attn_dropout.p if self.training else 0.0,
            scale=1.0,
        )

    def _probs(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        scores = (q @ k.transpose(-1, -2)) * self.temperature.exp()
        n = scores.shape[-1]
        diagonal = torch.eye(n, dtype=torch.bool, device=scores.device)
        # the most negative finite value, not -inf, as in vit-pytorch (safe in float16)
        scores = scores.masked_fill(diagonal, torch.finfo(scores.dtype).min)
        return scores.softmax(dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self._qkv(x)
        if self.fused:
            out = self._fused_attention(q, k, v)
        else:
            out = self.attn_dropout(self._probs(q, k)) @ v  # (B, heads, N, dim_head)
        b, _, n, _ = out.shape
        return self.to_out(out.transpose(1, 2).reshape(b, n, self.heads * self.dim_head))


class FeedForward(nn.Sequential):
    def __init__(self, dim: int, hidden: int, dropout: float = 0.0):
        super().__init__(
            nn.LayerNorm(dim),
            nn.Linear(dim, hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, dim),
            nn.Dropout(dropout),
        )


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, dim_head: int, mlp_dim: int, dropout: float):
        super().__init__()
        self.attention = LocalitySelfAttention(dim, heads, dim_head, dropout)
        self.feedforward = FeedForward(dim, mlp_dim, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(x)
        return x + self.feedforward(x)


class ViTSmall(nn.Module):
    """ViT with SPT and LSA for small images. Input (B, channels, image_size, image_size),
    output logits (B, num_classes)."""

    def __init__(
        self,
        *,
        image_size: int,
        channels: int,
        num_classes: int = 10,
        patch_size: int = 4,
        dim: int = 192,
        depth: int = 9,
        heads: int = 12,
        dim_head: int = 16,
        mlp_dim: int = 384,
        pool: str = "cls",
        dropout: float = 0.0,
        emb_dropout: float = 0.0,
    ):
        super().__init__()
        if image_size % patch_size:
            raise ValueError(
                f"image_size {image_size} is not a multiple of patch_size {patch_size}"
            )
        if pool not in ("cls", "mean"):
            raise ValueError(f"pool must be 'cls' or 'mean', got {pool!r}")
        self.image_size, self.channels, self.pool = image_size, channels, pool
        n_patches = (image_size // patch_size) ** 2
        self.patch_embedding = ShiftedPatchTokenization(channels, patch_size, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, n_patches + 1, dim))
        self.emb_dropout = nn.Dropout(emb_dropout)
        self.blocks = nn.ModuleList(
            Block(dim, heads, dim_head, mlp_dim, dropout) for _ in range(depth)
        )
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def tokens(self, images: torch.Tensor) -> torch.Tensor:
        """The embedded tokens entering the first block: (B, 1 + patches, dim)."""
        if images.shape[1:] != (self.channels, self.image_size, self.image_size):
            raise ValueError(
                f"expected images (B, {self.channels}, {self.image_size}, {self.image_size}), "
                f"got {tuple(images.shape)}"
            )
        x = self.patch_embedding(images)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        return self.emb_dropout(torch.cat([cls, x], dim=1) + self.pos_embedding)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.tokens(images)
        for block in self.blocks:
            x = block(x)
        x = x[:, 0] if self.pool == "cls" else x.mean(dim=1)
        return self.head(x)


def _norm(params) -> float:
    return math.sqrt(sum(float(p.detach().double().pow(2).sum()) for p in params))


def layer_parameter_norms(model: ViTSmall) -> dict[str, float]:
    """Frobenius norm of each layer's parameters (weights, biases, LayerNorms together):
    "patch_embedding" (SPT), "position_embedding" (position embeddings and class token),
    "block{i}.attention" (LSA, temperature included) and "block{i}.feedforward" for
    i = 0..depth-1, and "head". Every parameter is in exactly one entry."""
    norms = {
        "patch_embedding": _norm(model.patch_embedding.parameters()),
        "position_embedding": _norm([model.pos_embedding, model.cls_token]),
    }
    for i, block in enumerate(model.blocks):
        norms[f"block{i}.attention"] = _norm(block.attention.parameters())
        norms[f"block{i}.feedforward"] = _norm(block.feedforward.parameters())
    norms["head"] = _norm(model.head.parameters())
    return norms
