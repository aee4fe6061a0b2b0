"""docs/real-data.md's registry: the numbers the real-data figures on any machine measure
(fig1_minilm, fig4_minilm, fig6_mnist5k: optional targets, each named), by marker name
(attnbias.quotes.marks). Each is the mean over the figure's reported seeds at its last
logged step, as <figure>_final.csv has it, or the count of steps at which a cap bound."""

from __future__ import annotations

import numpy as np

from attnbias.quotes.quote import Page
from attnbias.quotes.sources import computed
from attnbias.realdata import cap_bound

REAL_DATA = "docs/real-data.md"
FIGURES = ("fig1_minilm", "fig4_minilm", "fig6_mnist5k")
OPTIMIZERS = ("sgd", "sngd", "sps", "adam")
METRICS = {"loss": "train_loss", "accuracy": "test_accuracy"}


def final_mean(figure: str, optimizer: str, metric: str):
    """The mean over seeds of `metric` at the last logged step (<figure>_final.csv's)."""
    return computed(
        f"{figure} {optimizer}: mean over seeds of {metric} at the last step",
        lambda b: float(np.mean(b.final(figure, optimizer, metric))),
        target=f"results/{figure}.pdf",
    )


def cap_steps(figure: str, optimizer: str, which: str):
    """The steps at which `optimizer`'s cap bound (`which`: bound) or all its steps (steps),
    summed over seeds (realdata.cap_bound.bound_steps)."""
    return computed(
        f"{figure} {optimizer}: {which} steps of its cap, summed over seeds",
        lambda b: float(cap_bound.bound_steps(b.metrics(figure), optimizer)[which].sum()),
        target=f"results/{figure}.pdf",
    )


NUMBERS = {
    f"{figure}.{optimizer}.{short}": final_mean(figure, optimizer, metric)
    for figure in FIGURES
    for optimizer in OPTIMIZERS
    for short, metric in METRICS.items()
}
NUMBERS |= {
    f"fig1_minilm.sps.cap.{which}": cap_steps("fig1_minilm", "sps", which)
    for which in ("bound", "steps")
}

PAGE = Page(REAL_DATA, NUMBERS)
