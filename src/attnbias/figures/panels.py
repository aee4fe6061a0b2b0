"""What each figure kind draws, panel by panel: the one description of every figure.

`attnbias.figures.drawing` draws from these panels, and the report caption (`describe`, through the
figure rule's params) is written from the same descriptions, so reordering or editing a
panel changes the picture and its caption together. Plain Python: the workflow reads this
module at parse time, without matplotlib or torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reference:
    """A rate the paper states: C * shape(t), anchored on `optimizer`'s curve at anchor * t_max."""

    optimizer: str
    shape: str  # key of attnbias.figures.drawing.SHAPES
    label: str
    anchor: float = 0.003


@dataclass(frozen=True)
class Panel:
    metric: str
    ylabel: str
    description: str  # what the panel shows, for the report caption
    xscale: str = "log"
    yscale: str = "log"
    transform: str | None = None  # "log10" turns a natural-log metric into log10
    references: tuple[Reference, ...] = field(default_factory=tuple)


# what attnbias.figures.drawing does with a log10 panel whose curves end decades apart
SPANS_DECADES = " (where the curves end decades apart: minus it, on a log axis)"

LOG10_1M_SOFTMAX = Panel(
    "log1m_opt_softmax",
    r"$\log_{10}(1 - \bar s_{\mathrm{opt}})$",
    "log10 of one minus the optimal token's softmax, averaged over samples" + SPANS_DECADES,
    "linear",
    "linear",
    "log10",
)
LOG10_EXCESS_LOSS = Panel(
    "log_excess_loss",
    r"$\log_{10}(L(W_t) - L_\star)$",
    "log10 of the train loss above its infimum L* (all attention on the optimal tokens)"
    + SPANS_DECADES,
    "log",
    "linear",
    "log10",
)
GAP_W = "1 - cos(W_t, W_mm)"

PANELS = {
    "fixed_decoder": [
        Panel(
            "loss",
            r"train loss $L(W_t)$",
            "the train loss, which tends to L* > 0 with u fixed (its rate is read in (b))",
        ),
        LOG10_EXCESS_LOSS,
        Panel(
            "W_norm",
            r"$\|W_t\|_F$",
            "the Frobenius norm of W_t",
            references=(Reference("ngd", "t", r"$\propto t$"),),
        ),
        LOG10_1M_SOFTMAX,
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            f"{GAP_W}",
            references=(Reference("ngd", "t^-3/4", r"$t^{-3/4}$ (Thm. 1 rate)"),),
        ),
        Panel(
            "log_step_W",
            r"step size $\log_{10}\eta_t$",
            "log10 of the step size applied to W (flat where a cap binds)",
            "log",
            "linear",
            "log10",
        ),
    ],
    "joint": [
        Panel(
            "log_loss",
            r"$\log_{10} L(W_t, u_t)$",
            "log10 of the train loss" + SPANS_DECADES,
            "log",
            "linear",
            "log10",
        ),
        Panel("W_norm", r"$\|W_t\|_F$", "the Frobenius norm of W_t"),
        Panel("u_norm", r"$\|u_t\|$", "the norm of u_t"),
        LOG10_1M_SOFTMAX,
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            f"{GAP_W}",
            # Thm. 3 is proved for Eq. 10 with its step factors (config name eq10)
            references=(Reference("eq10", "1/log t", r"$1/\log t$ (Thm. 3 rate)"),),
        ),
        Panel("gap_u", r"$1 - \cos(u_t, u_{mm})$", "1 - cos(u_t, u_mm)"),
    ],
    "bad_init": [
        Panel(
            "opt_softmax",
            r"mean opt-token softmax $\bar s_{\mathrm{opt}}$",
            "the optimal token's softmax, averaged over samples",
            "log",
            "linear",
        ),
        Panel("loss", r"train loss $L(W_t)$", "the train loss", "log", "linear"),
        Panel("gap_W", r"$1 - \cos(W_t, W_{mm})$", GAP_W),
        Panel("W_norm", r"$\|W_t\|_F$", "the Frobenius norm of W_t"),
    ],
    # App. C.1's 2-D instance: a geometry panel (drawn from the data, not a metric) comes
    # first; then these, against t on a symlog axis (iteration 0 included).
    "bad_init_2d": [
        Panel(
            "opt_softmax_0",
            r"sample 1: opt-token softmax $s_{1,\mathrm{opt}}$",
            "the softmax of sample 1's optimal token (dotted: 1/T; a star marks a curve's "
            "minimum where it comes after t = 0)",
            "symlog",
            "linear",
        ),
        Panel(
            "opt_softmax_1",
            r"sample 2: opt-token softmax $s_{2,\mathrm{opt}}$",
            "the same for sample 2",
            "symlog",
            "linear",
        ),
        Panel("gap_W", r"$1 - \cos(W_t, W_{mm})$", GAP_W, "symlog", "log"),
        Panel(
            "excess_loss",
            r"train loss above its infimum, $L(W_t) - L_\star$",
            "the train loss minus its infimum L* = (1/n) sum_i exp(-y_i u^T x_i,opt), the loss "
            "with all attention on the optimal tokens",
            "symlog",
            "log",
        ),
    ],
    "two_token": [
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            GAP_W,
            references=(
                Reference("gd", "1/log^2 t", r"$1/\log^2 t$"),
                Reference("ngd", "t^-2", r"$t^{-2}$"),
            ),
        ),
        Panel(
            "W_norm",
            r"$\|W_t\|_F$",
            "the Frobenius norm of W_t",
            references=(
                Reference("gd", "log t", r"$\propto \log t$"),
                Reference("ngd", "t", r"$\propto t$"),
            ),
        ),
    ],
}

LAYOUT = {
    "fixed_decoder": (2, 3),
    "joint": (2, 3),
    "bad_init": (1, 4),
    "bad_init_2d": (1, 5),
    "two_token": (1, 2),
}

# The geometry panel of bad_init_2d, which no metric backs.
GEOMETRY_DESCRIPTION = (
    "the tokens x_it of the two samples (filled: the optimal token, hollow: the other; + the "
    "origin) and, for each sample i, the direction of W x_i1 (a token's attention logit is "
    "its inner product with W x_i1): dashed for W = W_0, solid for W = W_mm; arrows show "
    "directions only (sample 2's drawn shorter)"
)

# What a figure kind shows, before its panels; a data model may say it more precisely.
SUMMARY = {
    "fixed_decoder": "Example 1 with a fixed decoder u (Fig. 2 of the paper).",
    "joint": "Data model DM, W and u trained jointly (Fig. 3 of the paper).",
    "bad_init": "Training started in a bad stationary direction, which favours a non-optimal "
    "token (Fig. 8 of the paper); training still reaches the direction of W_mm.",
    "bad_init_2d": "App. C.1's 2-D instance (Fig. 8 of the paper): two samples of two tokens, "
    "labels +1 and -1, training started in a bad stationary direction that favours the "
    "non-optimal token of sample 1 and violates its W-SVM constraint.",
    "two_token": "The two-token example of Sec. 3.3, whose W_mm is known in closed form.",
}
DATA_SUMMARY = {
    "binary_digits": "Binary digits (Fig. 9 of the paper, App. C.2): one patch of each "
    "sequence is a real 0 or 1 image, the others Gaussian noise, and u is a fixed linear "
    "classifier fitted on other images of the same two digits.",
}


def letter(index: int) -> str:
    """The panel label: (a), (b), ..."""
    return f"({chr(97 + index)})"


def panel_descriptions(kind: str) -> list[str]:
    """One description per drawn panel, in drawing order (the geometry panel first)."""
    if kind not in PANELS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {sorted(PANELS)}")
    described = [panel.description for panel in PANELS[kind]]
    if kind == "bad_init_2d":
        described.insert(0, GEOMETRY_DESCRIPTION)
    return described


def describe(kind: str, data_model: str | None = None) -> str:
    """The report caption's description of a figure: what it shows, then each panel."""
    described = panel_descriptions(kind)  # first: it names an unknown kind
    summary = DATA_SUMMARY.get(data_model, SUMMARY[kind])
    panels = ", ".join(f"{letter(i)} {text}" for i, text in enumerate(described))
    references = [
        f"{letter(i)} {ref.shape} anchored on {ref.optimizer}"
        for i, panel in enumerate(PANELS[kind], start=int(kind == "bad_init_2d"))
        for ref in panel.references
    ]
    drawn = f" Rates the paper states, in black: {'; '.join(references)}." if references else ""
    return f"{summary} Panels: {panels}.{drawn}"
