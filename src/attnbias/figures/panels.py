"""What each figure kind draws, panel by panel: the one description of every figure.

`attnbias.figures.drawing` draws from these panels, and the report caption (`describe`, through the
figure rule's params) is written from the same descriptions, so reordering or editing a
panel changes the picture and its caption together; the caption opens with the data
model's description, which the workflow takes from the model's registry entry
(attnbias.data.models; this module does not import it, so the figure jobs need neither the
generators nor what they import). Plain Python: the workflow reads this module at parse
time, without matplotlib or torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A rate the paper states is drawn as a line of that rate starting on the curve at
# t = REFERENCE_ANCHOR * t_max (t = 30 of 10^4); the claims table reads its lost-constant
# bounds against the same line (claims.measure.lost_constant_bound)
REFERENCE_ANCHOR = 0.003


# What a rate is proved for and a figure is about, as OptimizerSpec.algorithm names
# optimizers (never by config name, as the claims): NGD capped or not (App. C's NGD cap
# never binds in fig2's 10^4 steps, docs/regime.md), GD, Eq. 10 with its step factors
# (Thms. 2-4).
NGD = ("ngd", "ngd-capped")
GD = ("gd",)
EQ10 = ("eq10",)


def curve_of(algorithms: tuple[str, ...], keys: dict[str, str]) -> str | None:
    """The optimizer whose curve a rate (or the focus) is drawn on: the first of `keys`
    ({optimizer: its look key, OptimizerSpec.look_key}, in legend order) that is one of
    `algorithms`; None where the figure draws none of them."""
    return next((name for name, key in keys.items() if key in algorithms), None)


@dataclass(frozen=True)
class Reference:
    """A rate the paper states for `algorithms`: C * shape(t), starting on the mean curve
    of the figure's optimizer of those algorithms (curve_of) at t = anchor * t_max (C puts
    it there; the claims table's bounds read their trends against the same line)."""

    algorithms: tuple[str, ...]
    shape: str  # key of attnbias.figures.references.SHAPES
    label: str  # drawn at the line's end
    source: str = ""  # where the paper states it, for the caption
    anchor: float = REFERENCE_ANCHOR


@dataclass(frozen=True)
class Panel:
    """One panel: a metric against the iteration t on a log axis (every panel of a figure).

    `yscale` "log" draws the quantity itself on a log axis; a metric stored as its natural
    log (`natural_log`: quantities far below float64's range, 1e-400) is drawn on a log axis
    too, from its logarithm, so no value underflows."""

    metric: str
    ylabel: str
    description: str  # what the panel shows, for the caption
    yscale: str = "log"  # "log" | "linear"
    natural_log: bool = False
    references: tuple[Reference, ...] = field(default_factory=tuple)


ONE_MINUS_SOFTMAX = Panel(
    "log1m_opt_softmax",
    r"$1 - \bar s_{\mathrm{opt}}$",
    "one minus the optimal token's softmax, averaged over samples",
    natural_log=True,
)
EXCESS_LOSS = Panel(
    "log_excess_loss",
    r"$L(W_t) - L^{*}$",
    "the train loss above its infimum L* (all attention on the optimal tokens)",
    natural_log=True,
)
GAP_W = "1 - cos(W_t, W_mm)"

PANELS = {
    "fixed_decoder": [
        Panel(
            "loss",
            r"train loss $L(W_t)$",
            "the train loss, which tends to L* > 0 with u fixed (its rate is read in (b))",
            "linear",
        ),
        EXCESS_LOSS,
        Panel(
            "W_norm",
            r"$\|W_t\|_F$",
            "the Frobenius norm of W_t",
            references=(Reference(NGD, "t", r"$\propto t$"),),
        ),
        ONE_MINUS_SOFTMAX,
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            f"{GAP_W}",
            references=(Reference(NGD, "t^-3/4", r"$t^{-3/4}$", "Thm. 1"),),
        ),
        Panel(
            "log_step_W",
            r"step size $\eta_t$",
            "the step size applied to W (flat where a cap binds)",
            natural_log=True,
        ),
    ],
    "joint": [
        Panel("log_loss", r"train loss $L(W_t, u_t)$", "the train loss", natural_log=True),
        Panel("W_norm", r"$\|W_t\|_F$", "the Frobenius norm of W_t"),
        Panel("u_norm", r"$\|u_t\|$", "the norm of u_t"),
        ONE_MINUS_SOFTMAX,
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            f"{GAP_W}",
            # Thm. 3 is proved for Eq. 10 with its step factors
            references=(Reference(EQ10, "1/log t", r"$1/\log t$", "Thm. 3"),),
        ),
        Panel("gap_u", r"$1 - \cos(u_t, u_{mm})$", "1 - cos(u_t, u_mm)"),
    ],
    "bad_init": [
        Panel(
            "opt_softmax",
            r"mean opt-token softmax $\bar s_{\mathrm{opt}}$",
            "the optimal token's softmax, averaged over samples",
            "linear",
        ),
        Panel("loss", r"train loss $L(W_t)$", "the train loss", "linear"),
        Panel("gap_W", r"$1 - \cos(W_t, W_{mm})$", GAP_W),
        Panel("W_norm", r"$\|W_t\|_F$", "the Frobenius norm of W_t"),
    ],
    # App. C.1's 2-D instance: a tokens panel (drawn from the data, not a metric) comes
    # first; then these, against t + 1 on a log axis (iteration 0 included).
    "bad_init_2d": [
        Panel(
            "opt_softmax_0",
            r"sample 1: $s_{1,\mathrm{opt}}$",
            "the softmax of sample 1's optimal token (dotted: 1/T; a star marks a curve's "
            "minimum where it comes after t = 0)",
            "linear",
        ),
        Panel(
            "opt_softmax_1",
            r"sample 2: $s_{2,\mathrm{opt}}$",
            "the same for sample 2",
            "linear",
        ),
        Panel("gap_W", r"$1 - \cos(W_t, W_{mm})$", GAP_W),
        Panel(
            "log_excess_loss",
            r"$L(W_t) - L^{*}$",
            "the train loss minus its infimum L* = (1/n) sum_i exp(-y_i u^T x_i,opt), the loss "
            "with all attention on the optimal tokens",
            natural_log=True,
        ),
    ],
    "two_token": [
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            GAP_W,
            references=(
                Reference(GD, "1/log^2 t", r"$1/\log^2 t$"),
                Reference(NGD, "t^-2", r"$t^{-2}$"),
            ),
        ),
        Panel(
            "W_norm",
            r"$\|W_t\|_F$",
            "the Frobenius norm of W_t",
            references=(
                Reference(GD, "log t", r"$\propto \log t$"),
                Reference(NGD, "t", r"$\propto t$"),
            ),
        ),
    ],
}

LAYOUT = {
    "fixed_decoder": (2, 3),
    "joint": (2, 3),
    "bad_init": (1, 4),
    "bad_init_2d": (2, 3),  # the tokens panel spans the first column's two rows
    "two_token": (1, 2),
}

# The algorithm each kind of figure is about, drawn strongest: the one whose rates the
# paper proves and the reference lines follow.
FOCUS = {
    "fixed_decoder": NGD,  # Thm. 1
    "joint": EQ10,  # Thms. 2-4
}

# The panels a kind's layout draws before its metric panels (figures.drawing.LAYOUTS),
# which no metric backs: their descriptions, in drawing order.
LEADING_PANELS = {
    "bad_init_2d": (
        "the tokens x_it of the two samples (filled: the optimal token, hollow: the other; + "
        "the origin) and, for each sample i, the direction of W x_i1 (a token's attention "
        "logit is its inner product with W x_i1): dashed for W = W_0, solid for W = W_mm; "
        "arrows show directions only (sample 2's drawn shorter)",
    ),
}


def letter(index: int) -> str:
    """The panel label: (a), (b), ..."""
    return f"({chr(97 + index)})"


def first_metric_panel(kind: str) -> int:
    """The index (letter) of a kind's first metric panel: after its LEADING_PANELS."""
    return len(LEADING_PANELS.get(kind, ()))


def panel_descriptions(kind: str) -> list[str]:
    """One description per drawn panel, in drawing order (LEADING_PANELS first)."""
    if kind not in PANELS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {sorted(PANELS)}")
    return [*LEADING_PANELS.get(kind, ()), *(panel.description for panel in PANELS[kind])]


def describe(kind: str, data: str, curves: dict[str, str]) -> str:
    """The report caption's description of a figure: `data`, its data model's description
    (attnbias.data.models.DataModel.description), then each panel, and the rates drawn on
    the figure's `curves` ({legend label: its look key, OptimizerSpec.look_key}, in legend
    order)."""
    described = panel_descriptions(kind)  # first: it names an unknown kind
    panels = ", ".join(f"{letter(i)} {text}" for i, text in enumerate(described))
    references = [
        f"{letter(i)} {ref.shape}{f' ({ref.source})' if ref.source else ''}, starting on "
        f"{curve}'s curve"
        for i, panel in enumerate(PANELS[kind], start=first_metric_panel(kind))
        for ref in panel.references
        if (curve := curve_of(ref.algorithms, curves)) is not None
    ]
    drawn = (
        f" Rates the paper states (black, labelled at their end): {'; '.join(references)}."
        if references
        else ""
    )
    return f"{data} Panels: {panels}.{drawn}"
