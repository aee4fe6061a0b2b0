"""Synthetic datasets of the paper, as plain numpy arrays.

Every generator returns one seed's dataset as the data file holds it
(`results/data/{experiment}.npz`, under `seed{s}/`: docs/file-contract.md):
  X   (n, T, d)  token sequences; row 0 of each sequence is the query token x_1
  y   (n,)       labels in {+1, -1}
  opt (n,)       index of the optimal token of each sequence
  W0  (d, d)     initial key-query matrix
  u   (d,)       the fixed decoder (only for fixed-decoder experiments; a trained
                 decoder starts at u = 0)
The constants are ours (the paper's values were lost in extraction); they live in
config/config.yaml. docs/data-models.md describes each model, and docs/regime.md why its
constants were chosen.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


class DataError(ValueError):
    """A data-model parameter that cannot produce a valid dataset."""


def _labels(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.choice(np.array([-1.0, 1.0]), size=n)


def check_sizes(n: int, T: int, d: int, *, min_T: int = 2) -> None:
    if n < 1 or d < 1 or T < min_T:
        raise DataError(f"need n >= 1, T >= {min_T}, d >= 1; got n={n}, T={T}, d={d}")


def example1(
    rng: np.random.Generator,
    *,
    n: int,
    T: int,
    d: int,
    opt_signal: float = 1.0,
    query_signal: float = 0.0,
    noise_orthogonal_to_u: bool = True,
) -> dict[str, np.ndarray]:
    """Example 1 (Sec. 3): fixed decoder u = e_1, nearly orthogonal Gaussian tokens.

    Every token starts as N(0, I/d). A signal token at a random position >= 2 (index >= 1)
    adds `opt_signal * y * u`; the query x_1 adds `query_signal * y * u`. With
    `noise_orthogonal_to_u` the noise has no component along u, so the signal token is the
    optimal one and, with query_signal 0 (the default), all non-optimal tokens share the
    score 0 (Assumption 2); a query signal gives the query its own score and breaks it.
    Otherwise opt is the best-scoring token, which noise can make another one.
    """
    check_sizes(n, T, d)
    if query_signal >= opt_signal:
        raise DataError(
            f"query_signal ({query_signal}) must be below opt_signal ({opt_signal}), "
            "or the query token would be the optimal one"
        )
    u = np.zeros(d)
    u[0] = 1.0
    y = _labels(rng, n)
    X = rng.standard_normal((n, T, d)) / np.sqrt(d)
    if noise_orthogonal_to_u:
        X[..., 0] = 0.0
    signal = rng.integers(1, T, size=n)
    X[np.arange(n), signal] += opt_signal * y[:, None] * u
    X[:, 0] += query_signal * y[:, None] * u
    # opt is argmax_t gamma by definition: the signal token, unless noise along u outscores it
    opt = np.argmax(token_scores(X, y, u), axis=1)
    return {"X": X, "y": y, "opt": opt, "u": u, "W0": np.zeros((d, d))}


def data_model_dm(
    rng: np.random.Generator,
    *,
    n: int,
    T: int,
    d: int,
    mu_norm: float = 1.0,
    noise_scale: float = 0.5,
) -> dict[str, np.ndarray]:
    """Data model DM (Sec. 4), for joint training of W and u.

    The optimal token is the query token: x_1 = y * mu + N(0, I/d), with mu = mu_norm * e_1
    the fixed vector that generates the label. The other T-1 tokens are N(0, noise_scale^2 I/d):
    a smaller norm, as Condition 1 asks. W and u start at zero.
    """
    check_sizes(n, T, d)
    mu = np.zeros(d)
    mu[0] = mu_norm
    y = _labels(rng, n)
    X = noise_scale * rng.standard_normal((n, T, d)) / np.sqrt(d)
    X[:, 0] = y[:, None] * mu + rng.standard_normal((n, d)) / np.sqrt(d)
    return {"X": X, "y": y, "opt": np.zeros(n, dtype=np.int64), "W0": np.zeros((d, d))}


def two_token(rng: np.random.Generator, *, d: int = 2) -> dict[str, np.ndarray]:
    """The single-sample two-token example of Sec. 3.3.

    x_1 = e_1 (the query and the optimal token), x_2 = e_2, u = e_1, y = +1, so
    W_mm = (x_1 - x_2) x_1^T / (||x_1 - x_2||^2 ||x_1||^2). Every gradient is a multiple of
    (x_1 - x_2) x_1^T, so W0 = (e_1 + e_2) e_1^T / sqrt(2), orthogonal to W_mm, never decays
    and the direction converges only as fast as ||W_t|| grows. `rng` is unused: the example
    is deterministic, and takes it only to share the generators' signature.
    """
    del rng
    if d < 2:
        raise DataError(f"the two-token example needs d >= 2, got d={d}")
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    X = np.stack([e1, e2])[None]
    W0 = np.outer(e1 + e2, e1) / np.sqrt(2.0)
    return {"X": X, "y": np.ones(1), "opt": np.zeros(1, dtype=np.int64), "u": e1, "W0": W0}


# App. C.1's 2-D instance (ours: the paper's coordinates were lost in extraction). Row i is
# sample i, row 0 of each the query x_{i,1}; labels (+1, -1); the decoder u = e_1.
APP_C1_TOKENS = np.array([[[0.5, 0.5], [1.0, -1.0]], [[0.0, 0.5], [1.0, -0.5]]])
APP_C1_LABELS = np.array([1.0, -1.0])
APP_C1_DECODER = np.array([1.0, 0.0])


def app_c1(
    rng: np.random.Generator, *, init_norm: float, direction: list[list[float]]
) -> dict[str, np.ndarray]:
    """The 2-D instance of App. C.1 (Fig. 8): d = 2, n = 2 samples of T = 2 tokens each.

    The paper gives two explicit samples, a decoder and an initial direction, but its
    numbers were lost in extraction; the coordinates below are OURS, chosen to meet every
    property the text states. With u = e_1 and labels (+1, -1):

      sample 1 (y = +1): x_{1,1} = (0.5, 0.5) (query, score 0.5), x_{1,2} = (1, -1) (score 1)
      sample 2 (y = -1): x_{2,1} = (0, 0.5)   (query, score 0),   x_{2,2} = (1, -0.5) (score -1)

    so token optimality (Definition 1) gives opt = (2, 1) (indices (1, 0) here): the
    optimal token is the second one in sample 1 and the query in sample 2. The W-SVM is
    feasible (the queries are independent), with W_mm = [[2/3, -5/3], [-2, 1/3]]; both
    constraints are active.

    W0 = init_norm * direction / ||direction||_F. The configured direction
    D = [[-1, -2], [3, 4]] = -4 a_1 x_{1,1}^T + 2 a_2 x_{2,1}^T, with a_i = x_{i,opt} - x_{i,other},
    lies in the span that every gradient lives in (for T = 2 sample i's gradient is a
    multiple of a_i x_{i,1}^T, so no part of W0 is frozen), has a negative cosine (-0.135)
    with W_mm, and gives logit gaps a_i^T D x_{i,1} = (-6, 3): it favours the non-optimal
    token (the query) of sample 1 and the optimal one of sample 2. Along R * D, R -> inf,
    both softmaxes saturate (sample 1's on its non-optimal token: s_opt -> 0) and the
    gradient vanishes: a "bad" stationary direction. W0 violates sample 1's W-SVM
    constraint, a_1^T W0 x_{1,1} < 0 < 1: its key W0 x_{1,1} correlates more with the
    non-optimal token. GD's first steps are dominated by sample 2's gradient, and the two
    constraint matrices have a negative inner product (<a_1, a_2> <x_{1,1}, x_{2,1}> = -0.5),
    so sample 1's optimal softmax falls at first while sample 2's rises. init_norm = 0.5 is
    small in the sense of Lemma 2 (whose bound was lost): every initial logit is below 0.5 in
    magnitude and no softmax starts saturated; from init_norm = 10 instead, GD is still
    stuck near the bad direction at t = 10^4. `bad` records the token W0 favours in each
    sample (the argmax of its logits): the non-optimal one in sample 1, the optimal one in
    sample 2. `rng` is unused: the instance is deterministic.
    """
    del rng
    D = np.asarray(direction, dtype=np.float64)
    if D.shape != (2, 2) or not np.all(np.isfinite(D)) or not np.linalg.norm(D) > 0:
        raise DataError(f"direction must be a non-zero 2x2 matrix, got {direction!r}")
    if not init_norm > 0:
        raise DataError(f"init_norm must be positive, got {init_norm}")
    X, y, u = APP_C1_TOKENS.copy(), APP_C1_LABELS.copy(), APP_C1_DECODER.copy()
    W0 = init_norm * D / np.linalg.norm(D)
    opt = np.argmax(token_scores(X, y, u), axis=1)
    logits = np.einsum("ntd,de,ne->nt", X, W0, X[:, 0])
    return {"X": X, "y": y, "opt": opt, "u": u, "W0": W0, "bad": np.argmax(logits, axis=1)}


def perturbed_example1(
    rng: np.random.Generator,
    *,
    n: int,
    T: int,
    d: int,
    correlation: float = 0.0,
    score_spread: float = 0.0,
    **example1_params,
) -> dict[str, np.ndarray]:
    """Example-1 data moved away from Assumption 1 (`correlation`) or 2 (`score_spread`).

    correlation > 0: every token gets `correlation * g`, with g ~ N(0, I/d) one vector shared
    by all tokens and its component along u removed, so the scores stay as they are while
    every pair of tokens gains an inner product of about correlation^2.
    score_spread > 0: each token that is neither optimal nor the query gets an extra score
    s ~ Uniform(0, score_spread), i.e. `s * y_i * u` is added to it, so the non-optimal scores
    of a sequence are no longer equal. opt is then recomputed as the argmax of the scores.
    Extra random numbers are drawn only for a knob that is > 0, so zero knobs give exactly
    data.example1 for the same generator state.
    """
    opt_signal = example1_params.get("opt_signal", keyword_defaults(example1)["opt_signal"])
    if correlation < 0 or score_spread < 0:
        raise DataError(
            f"correlation ({correlation}) and score_spread ({score_spread}) must be >= 0"
        )
    if score_spread > 0 and score_spread >= opt_signal:
        raise DataError(
            f"score_spread ({score_spread}) must be below opt_signal ({opt_signal}), "
            "or a noise token could rival the optimal one"
        )
    ds = example1(rng, n=n, T=T, d=d, **example1_params)
    X, y, u = ds["X"], ds["y"], ds["u"]
    if correlation > 0:
        g = rng.standard_normal(d) / np.sqrt(d)
        g -= (g @ u) / (u @ u) * u  # u = e_1: zeroes coordinate 0
        X += correlation * g
    if score_spread > 0:
        extra = rng.uniform(0.0, score_spread, size=(n, T))
        noise_token = np.arange(T)[None, :] != ds["opt"][:, None]
        noise_token[:, 0] = False  # the query keeps its own score
        X += np.where(noise_token, extra, 0.0)[..., None] * (y[:, None, None] * u)
    ds["opt"] = np.argmax(token_scores(X, y, u), axis=1)
    return ds


def binary_digits_source(params: dict) -> str:
    """Which real images binary_digits draws from (its `source` and `digits`), and the
    noise of the other patches: a constant of ours that decides Ass. 2 (their scores are
    equal at noise 0 only), so every row and title on these data names it."""
    params = {**keyword_defaults(generator("binary_digits")), **params}
    digits = params["digits"]
    if params["source"] == "mnist":
        origin = "MNIST (28x28)"
    else:
        origin = "scikit-learn's handwritten digits (8x8)"
    images = f"digits {digits[0]} vs {digits[1]} from {origin}"
    return f"{images}, noise patches of std {params['noise']:g}" if "noise" in params else images


@dataclass(frozen=True)
class DataModel:
    """A registered data model.

    generator: its function, or the dotted name of the module that defines a function of
      the model's name, imported only when asked.
    description: what the data are and where the paper uses them. It opens the caption of
      every figure drawn on the model (figures.panels.describe), so it is required.
    source: for data drawn from real images, a function of the model's params that says
      which (a note under the figure's title); None for synthetic data.
    """

    generator: Callable | str
    description: str
    source: Callable[[dict], str] | None = None
    name: str = ""  # the data in a few words, as the claims' "where" names them

    def __post_init__(self):
        if not isinstance(self.description, str) or not self.description.strip():
            name = getattr(self.generator, "__name__", self.generator)
            raise DataError(
                f"data model {name!r}: give it a description (what the data are; it opens "
                f"its figures' captions), got {self.description!r}"
            )


# The registry: a new data model is one entry here (docs/layout.md, "Adding a data model").
DATA_MODELS = {
    "example1": DataModel(
        example1, "Example 1 with a fixed decoder u (Fig. 2 of the paper).", name="Example 1"
    ),
    "dm": DataModel(
        data_model_dm,
        "Data model DM, W and u trained jointly (Fig. 3 of the paper).",
        name="data model DM",
    ),
    "two_token": DataModel(
        two_token,
        "The two-token example of Sec. 3.3, whose W_mm is known in closed form.",
        name="Sec. 3.3's two-token example",
    ),
    "app_c1": DataModel(
        app_c1,
        "App. C.1's 2-D instance (Fig. 8 of the paper): two samples of two tokens, labels +1 "
        "and -1, training started in a bad stationary direction that favours the non-optimal "
        "token of sample 1 and violates its W-SVM constraint.",
        name="App. C.1's 2-D instance",
    ),
    # in a module of its own: the only model drawn from real images (scikit-learn's digits
    # or MNIST), so only its experiments' data jobs depend on that code
    "binary_digits": DataModel(
        "attnbias.data.binary_digits",
        "Binary digits (Fig. 9 of the paper, App. C.2): one patch of each sequence is a real "
        "0 or 1 image, the others Gaussian noise, and u is a fixed linear classifier fitted "
        "on other images of the same two digits.",
        source=binary_digits_source,
        name="binary digits",
    ),
    # in a module of its own: bad_direction solves an SVM, so only its experiments' data
    # jobs depend on the SVM module (SEPARATE_GENERATORS below)
    "bad_direction": DataModel(
        "attnbias.data.bad_direction",
        "Training started in a bad stationary direction, which favours a non-optimal token "
        "(Fig. 8 of the paper); training still reaches the direction of W_mm.",
        name="Example 1 (random 20-d) from a bad direction",
    ),
    # in a module of its own: the neighbours' draws come from a torch.Generator, so only
    # their experiments' data jobs import torch
    "cross_gaussian": DataModel(
        "attnbias.data.neighbours",
        "The neighbours' cross-attention data (TF-as-SVM's and AttentionMD's generator): "
        "unit-norm Gaussian tokens X, queries Z and decoder v (fixed), labels independent "
        "of X, drawn from a torch.Generator seeded with the run's seed.",
        name="the neighbours' cross-attention data",
    ),
    "attentionmd_joint": DataModel(
        "attnbias.data.neighbours",
        "AttentionMD's joint-training instance: two samples of three tokens in 2-D, "
        "self-attention, W and v trained jointly from 0.",
        name="AttentionMD's joint instance",
    ),
}
MODELS = sorted(DATA_MODELS)
# The models whose generator lies in a module of its own: the workflow adds that module's
# files to their data jobs' code (codedeps.package_module_files).
SEPARATE_GENERATORS = {
    name: model.generator for name, model in DATA_MODELS.items() if isinstance(model.generator, str)
}


def data_model(model: str) -> DataModel:
    """The registry entry of data model `model`."""
    if model not in DATA_MODELS:
        raise DataError(f"unknown data model {model!r}; choose one of {MODELS}")
    return DATA_MODELS[model]


def source_note(model: str, params: dict) -> str | None:
    """What real data a dataset was drawn from, for the figure's title (None: synthetic)."""
    source = data_model(model).source
    return source(params) if source else None


def data_name(model: str, params: dict) -> str:
    """The data in a few words, with the real images they are drawn from: "binary digits:
    digits 0 vs 1 from scikit-learn's handwritten digits (8x8), noise patches of std 0.1"."""
    entry = data_model(model)
    name = entry.name or model
    return f"{name}: {entry.source(params)}" if entry.source else name


def generator(model: str):
    """The function that generates data model `model`."""
    function = data_model(model).generator
    if isinstance(function, str):
        return getattr(importlib.import_module(function), model)
    return function


def keyword_defaults(function) -> dict:
    """A generator's keyword defaults: their one home, which the config checks and the
    schema's test read. One that passes **example1_params on to example1 has its too."""
    params = inspect.signature(function).parameters.values()
    found = {p.name: p.default for p in params if p.default is not p.empty}
    if any(p.kind is p.VAR_KEYWORD and p.name == "example1_params" for p in params):
        found = {**keyword_defaults(example1), **found}
    return found


def generate(model: str, seed: int, params: dict) -> dict[str, np.ndarray]:
    """Generate dataset `model` with `params` from a seeded, reproducible stream."""
    return generator(model)(np.random.default_rng(seed), **params)


def token_scores(X: np.ndarray, y: np.ndarray, u: np.ndarray) -> np.ndarray:
    """gamma_{i,t} = y_i u^T x_{i,t}, shape (n, T)."""
    return y[:, None] * (X @ u)


def assumption_report(data: dict[str, np.ndarray]) -> dict[str, float]:
    """The data-side quantities of Assumptions 1 and 2, for the record.

    Assumption 1 (near orthogonality): the largest |<x, x'>| between distinct tokens,
    relative to the smallest squared token norm. Assumption 2: the largest spread of
    scores among non-optimal tokens, and the smallest gap between the optimal score and
    the best non-optimal one (only where the decoder is fixed).
    """
    X = data["X"]
    tokens = X.reshape(-1, X.shape[-1])
    gram = tokens @ tokens.T
    sq = np.diag(gram).copy()
    np.fill_diagonal(gram, 0.0)
    report = {"max_offdiag_inner": float(np.abs(gram).max()), "min_sq_norm": float(sq.min())}
    if "u" in data:
        gamma = token_scores(X, data["y"], data["u"])
        T = X.shape[1]
        non_opt = np.arange(T)[None, :] != data["opt"][:, None]
        g_non = np.where(non_opt, gamma, np.nan)
        g_opt = gamma[np.arange(len(gamma)), data["opt"]]
        report["max_nonopt_score_spread"] = float(
            np.nanmax(np.nanmax(g_non, 1) - np.nanmin(g_non, 1))
        )
        report["min_opt_score_gap"] = float(np.min(g_opt - np.nanmax(g_non, 1)))
    return report
