"""The neighbours' data: the generator of "Transformers as Support Vector Machines"
(umich-sota/TF-as-SVM, `local_converge.ipynb`'s and `svm_rank.ipynb`'s `data_generator`)
and of "Optimizing Attention with Mirror Descent" (aaronk2002/AttentionMD,
`synthetic-data/tools/generate_data.py`), and AttentionMD's fixed joint-training instance
(`synthetic-data/joint_training.py`).

Both are cross-attention data: sample i's query z_i is not one of its tokens, and the
score of token t is x_{i,t}^T W z_i. The dataset carries the queries as the key `Z` (n, d)
(the data file contract's cross-attention key; a dataset without it is self-attention,
z_i = x_{i,1}). The joint instance is self-attention (their z_i = x_{i,1}) and has no `Z`.

Apart from attnbias.data.models because it imports torch: their draws come from a seeded
torch.Generator, and only a torch draw reproduces them (tests/data/test_neighbours.py
restates their code and compares the instance exactly). Only the experiments of these
models import it.
"""

from __future__ import annotations

import numpy as np

from attnbias.data.models import DataError, check_sizes, token_scores

INITS = ("zero", "normal", "linear")


def seed_of(rng: np.random.Generator) -> int:
    """The integer seed `rng` was made from (np.random.default_rng(seed), as
    models.generate makes it): their generator is seeded with the run index itself."""
    entropy = rng.bit_generator.seed_seq.entropy
    if not isinstance(entropy, int) or entropy < 0:
        raise DataError(
            "the neighbours' generator needs the run's integer seed: pass "
            f"np.random.default_rng(seed) with an int seed (got entropy {entropy!r})"
        )
    return entropy


def _torch_generator(seed: int):
    import torch

    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


def _unit_rows(a):
    return a / a.norm(dim=-1, keepdim=True)


def cross_gaussian(
    rng: np.random.Generator,
    *,
    n: int = 6,
    T: int = 8,
    d: int = 10,
    init: str = "zero",
    init_std: float = 1.0,
) -> dict[str, np.ndarray]:
    """Their data: a torch.Generator seeded with the run's seed draws, in this order,
    v (d), Y = 2 (randn(n) > 0) - 1, X (n, T, d) and Z (n, d), all standard normal (float32,
    as torch draws them, then float64); v, every token and every query z_i scaled to unit
    l2 norm. Labels are independent of X. v is the fixed decoder u.

    opt is the globally optimal token, argmax_t y_i v^T x_{i,t} (their `best_ids`); their
    W-SVMs use instead the tokens the softmax selects at the last iteration
    (attnbias.neighbours.local_tokens).

    W0 (init): "zero" (AttentionMD's single runs); "normal", N(0, init_std^2) entries
    (AttentionMD's aggregated runs, std 1); "linear", nn.Linear's default draw,
    uniform on [-1/sqrt(d), 1/sqrt(d)] (TF-as-SVM's W runs). Their starts are drawn
    unseeded from torch's global stream; ours are drawn from the same generator after Z,
    so every run can be regenerated, and the draws of v, Y, X, Z are theirs.
    """
    import torch

    check_sizes(n, T, d)
    if init not in INITS:
        raise DataError(f"init must be one of {INITS}, got {init!r}")
    if not init_std > 0:
        raise DataError(f"init_std must be > 0, got {init_std}")
    generator = _torch_generator(seed_of(rng))
    v = torch.randn((d,), generator=generator)
    Y = 2 * torch.ones(n) * (torch.randn(n, generator=generator) > 0) - 1
    X = torch.randn((n, T, d), generator=generator)
    Z = torch.randn((n, d), generator=generator)
    W0 = torch.zeros((d, d), dtype=torch.float64)
    if init == "normal":
        W0 = init_std * torch.randn((d, d), generator=generator, dtype=torch.float64)
    elif init == "linear":
        bound = 1.0 / np.sqrt(d)
        W0 = torch.empty((d, d), dtype=torch.float64).uniform_(-bound, bound, generator=generator)
    # their normalisation, in float32 as theirs, then float64 (their .double() after it)
    v, X, Z = v / v.norm(), _unit_rows(X), _unit_rows(Z)
    data = {
        "X": X.double().numpy(),
        "y": Y.double().numpy(),
        "Z": Z.double().numpy(),
        "u": v.double().numpy(),
        "W0": W0.numpy(),
    }
    data["opt"] = np.argmax(token_scores(data["X"], data["y"], data["u"]), axis=1)
    return data


# AttentionMD's joint instance (synthetic-data/joint_training.py): n = 2 samples of T = 3
# tokens in d = 2, labels (+1, -1), self-attention (their z_i = x_{i,1}), W and v from 0.
JOINT_TOKENS = np.array(
    [[[-2.7, 1.2], [1.4, 2.1], [1.3, -0.1]], [[0.4, -2.2], [-1.1, -0.4], [0.9, 0.1]]]
)
JOINT_LABELS = np.array([1.0, -1.0])


def attentionmd_joint(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """AttentionMD's joint-training instance: W and v (u here) trained from 0 (no `u`: a
    trained decoder starts at u = 0). Their tokens are float32 literals made double
    (torch.Tensor(...).double()), so ours are too: -2.7 is -2.700000047683716 in both.

    opt: the tokens their l_2 joint run (lr 0.1, 2,000 epochs, the issue's) selects at its
    end, (1, 0): the second token of sample 1, the query of sample 2 (measured by restating
    their run: p = 1.75 (1,500 epochs) ends there too, p = 3 (20,000 epochs) on (0, 0)).
    `rng` is unused: the instance is fixed."""
    del rng
    X = JOINT_TOKENS.astype(np.float32).astype(np.float64)
    return {
        "X": X,
        "y": JOINT_LABELS.copy(),
        "opt": np.array([1, 0], dtype=np.int64),
        "W0": np.zeros((2, 2)),
    }
