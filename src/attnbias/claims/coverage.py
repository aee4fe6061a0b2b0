"""What each result covers: the algorithms it is proved for, and the hypotheses on the data.

A row on an algorithm its result does not cover is a comparison; a row on data outside
the result's hypotheses says so (Claim.category). The hypotheses are measured on the run's
data by attnbias.data.hypotheses.
"""

from __future__ import annotations

from attnbias.data import hypotheses as hyp

# The algorithm of a run, from its optimizer's settings: each result covers some of them.
ALGORITHMS = {
    "gd": "GD",
    "ngd": "NGD (uncapped)",
    "ngd-capped": "NGD with a step cap",
    "ngd-mom": "NGD with momentum",
    "ps": "PS (uncapped)",
    "ps-capped": "PS with a step cap",
    "per-block-ngd": "per-block NGD, Eq. 10 without its step factors",
    "joint-ngd": "joint NGD, one norm over (W, u)",
    "eq10": "Eq. 10 with its step factors",
}
# Which algorithms each result is proved for (Sec. 3: NGD and PS uncapped; Sec. 4: Eq. 10).
SEC3_NGD, SEC3_PS, EQ10 = ("ngd",), ("ps",), ("eq10",)
GLOBAL = ("gd", "ngd")  # global convergence: Thm. 1 (NGD); App. C.1 shows it for GD

# The hypotheses each result needs (keys of data.hypotheses.summarize); Sec. 3's: ass1, ass2
JOINT_NEEDS = ("ass1", "cond1")
LEMMA11_NEEDS = ("ass1", "cond1", "cond1_sv")


def algorithm(name: str, settings: dict, layout: str) -> str:
    """The ALGORITHMS key of an optimizer (its config name and settings) in a layout."""
    rule = settings.get("rule") or {"gd": "gd", "ps": "polyak"}.get(name, "ngd")
    if rule == "gd":
        return "gd"
    if rule == "polyak":
        return "ps" if settings.get("eta_max") is None else "ps-capped"
    if rule != "ngd":  # a rule of optim/rules.py that no result is proved for: its own name
        return rule
    if settings.get("decay_W") or settings.get("decay_u"):
        return "eq10"
    if settings.get("momentum"):
        return "ngd-mom"
    if layout == "joint":
        return "per-block-ngd" if settings.get("normalize") == "per_block" else "joint-ngd"
    return "ngd" if settings.get("max_step") is None else "ngd-capped"


def uncapped(opt: dict) -> bool:
    return opt.get("max_step") is None and opt.get("eta_max") is None


def hypotheses_of(summary: dict | None, needs) -> tuple[str, bool]:
    """The text and verdict of the hypotheses in `needs` (ass1, ass2, cond1) on the data."""
    if summary is None:
        return "not measured", False
    parts, inside = [], True
    for need in needs:
        if f"{need}_holds" not in summary:
            parts.append(f"{_NAMES[need]} BROKEN (not applicable to this data model)")
            inside = False
            continue
        ok = summary[f"{need}_holds"]
        inside &= ok
        parts.append(f"{_NAMES[need]} {'holds' if ok else 'BROKEN'} ({_VALUES[need](summary)})")
    return "; ".join(parts), inside


_NAMES = {
    "ass1": "Ass. 1",
    "ass2": "Ass. 2",
    "cond1": "Cond. 1",
    "cond1_sv": "Cond. 1 iii as Lem. 11 uses it",
}
_VALUES = {
    "ass1": lambda s: f"rho {s['ass1_rho']:.2g} {'<=' if s['ass1_holds'] else '>'} {hyp.RHO_MAX:g}",
    "cond1_sv": lambda s: (
        f"{s['cond1_sv_fraction']:.0%} of samples are u-SVM support vectors (worst seed); "
        f"largest u-SVM margin {s['cond1_u_margin_max']:.3g}"
    ),
    "ass2": lambda s: (
        f"non-opt score spread {s['ass2_spread']:.2g}, opt gap {s['ass2_opt_gap']:.2g}"
    ),
    "cond1": lambda s: (
        f"zero init {s['cond1_zero_init']}, opt/non-opt sq-norm ratio "
        f"{s['cond1_opt_norm_ratio']:.2g}, d/(nT) {s['cond1_d_over_nT']:.2g}; step size not "
        "judged (constant lost)"
    ),
}
