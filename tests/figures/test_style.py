"""Every figure at print size: a page of at most 7 x 9 in, no text under 7 pt,
few words inside the image, its caption beside it in <name>.caption.md, and curves that
differ by colour and marker. Read back from the PDFs the drawing writes."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from pdf_text import body_sizes, font_sizes, page_inches, words
from system_packages import requires

from attnbias.data import hypotheses
from attnbias.figures import algorithm_style, drawing, panels, style
from attnbias.workflow import markdown, npz

MAX_WORDS = 150
LEGEND = {
    "gd": ("GD", "GD lr=1"),
    "ngd": ("NGD", "NGD lr=0.1"),
    "ps": ("PS", "Polyak step"),
    "joint-ngd": ("joint NGD", "NGD, one norm"),
    "eq10": ("Eq. 10", "NGD, decays"),
}
DATA = "Some data (a data model's description)."
NOTE = "Hypotheses on the data (worst seed): Ass. 1 holds (rho = 0.1, ours: <= 0.5)."
TOKENS = {
    "X": np.array([[[0.5, 0.5], [1.0, -1.0]], [[0.0, 0.5], [1.0, -0.5]]]),
    "opt": np.array([1, 0]),
    "y": np.array([1.0, -1.0]),
    "W0": np.array([[0.3, -1.0], [1.0, 0.2]]),
    "W_mm": np.array([[1.0, 0.0], [0.0, 1.0]]),
}


def _table(kind: str) -> pd.DataFrame:
    """Curves of each panel's metric: power laws, the NGD one far steeper (so that a log
    panel's axis stops above it), NGD and joint NGD equal (curves that coincide)."""
    t = np.unique(np.geomspace(1, 1e4, 40).astype(int))
    if kind == "bad_init_2d":
        t = np.concatenate([[0], t])
    rate = {"gd": 0.5, "ngd": 2.0, "ps": 1.0, "joint-ngd": 2.0, "eq10": 0.8}
    metrics = [p.metric for p in panels.PANELS[kind]]
    rows = []
    for (name, k), seed, metric in zip(
        *zip(*[(r, s, m) for r in rate.items() for s in (0, 1) for m in metrics], strict=True),
        strict=True,
    ):
        steep = 100.0 if name == "ngd" and metric == "log_excess_loss" else 1.0
        for it in t:
            decay = (it + 1.0) ** (-k) * (1 + 0.05 * seed)
            value = {
                "log_excess_loss": -steep * k * math.log(it + 1),
                "log1m_opt_softmax": math.log(decay),
                "log_step_W": k * math.log(it + 1),
                "log_loss": math.log(decay),
            }.get(metric, decay if metric.startswith(("gap", "log")) else 1 - 0.5 * decay)
            rows.append((name, seed, it, metric, value))
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])


def _legend(kind):
    return {k: v for k, v in LEGEND.items() if kind == "joint" or k in ("gd", "ngd", "ps")}


def _algorithms(kind):
    """The fixture's optimizers are named by their algorithms (as the table keys them)."""
    return {k: k for k in _legend(kind)}


def _curves(kind):
    """The caption's curves: {legend label: algorithm}."""
    return {_legend(kind)[k][0]: a for k, a in _algorithms(kind).items()}


MARKERS = {look.marker for look in algorithm_style.STYLES.values()}


def _curve_styles(fig) -> list[list[tuple]]:
    """Per panel: (colour, marker) of each line that carries an optimizer's marker."""
    return [
        [
            (tuple(np.round(plt.matplotlib.colors.to_rgb(line.get_color()), 3)), line.get_marker())
            for line in ax.get_lines()
            if line.get_marker() in MARKERS and len(line.get_xdata()) > 1
        ]
        for ax in fig.axes
    ]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Each kind drawn to PDF and caption; the (colour, marker) pairs of its panels."""
    out, styles = tmp_path_factory.mktemp("figures"), {}
    save = drawing.save_figure
    for kind in panels.PANELS:

        def recording(fig, outputs, provenance=None, caption=None, kind=kind):
            styles[kind] = _curve_styles(fig)
            save(fig, outputs, provenance, caption)

        drawing.save_figure = recording
        try:
            drawing.draw(
                kind, _table(kind), title=f"A {kind} figure", legend=_legend(kind),
                algorithms=_algorithms(kind), note=NOTE,
                outputs=[out / f"{kind}.pdf", out / f"{kind}.caption.md"],
                tokens=TOKENS, description=panels.describe(kind, DATA, _curves(kind)),
            )  # fmt: skip
        finally:
            drawing.save_figure = save
    return out, styles


@requires("poppler-utils")
@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_figure_fits_a_page_in_legible_type_with_few_words(drawn, kind):
    pdf = drawn[0] / f"{kind}.pdf"
    width, height = page_inches(pdf)
    assert width <= style.FULL_WIDTH + 1e-6 and height <= style.MAX_HEIGHT, (width, height)
    assert min(body_sizes(font_sizes(pdf))) >= style.MIN_FONT_PT
    assert len(words(pdf)) < MAX_WORDS


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_the_notes_are_in_the_caption_not_in_the_image(drawn, kind):
    caption = (drawn[0] / f"{kind}.caption.md").read_text()
    assert caption.startswith(f"**{markdown.text(f'A {kind} figure')}**")  # the Markdown of
    assert (
        markdown.text(NOTE) in caption
        and markdown.text(panels.describe(kind, DATA, _curves(kind))) in caption
    )
    assert "Optimizers: GD: GD lr=1; NGD: NGD lr=0.1" in caption
    image = " ".join(words(drawn[0] / f"{kind}.pdf")) if _poppler() else ""
    assert "Hypotheses" not in image and "Optimizers" not in image


def _poppler() -> bool:
    from system_packages import missing

    return missing("poppler-utils") is None


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_no_two_curves_of_a_panel_share_colour_and_marker(drawn, kind):
    for panel in drawn[1][kind]:
        assert len(set(panel)) == len(panel), panel
    drawn_curves = max(len(p) for p in drawn[1][kind])
    assert drawn_curves == len(_legend(kind))  # the check saw every optimizer


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_each_curve_is_drawn_in_its_algorithms_colour_and_marker(drawn, kind):
    """The drawn curves carry the table's (colour, marker) of their algorithms, whatever
    their place in the legend or the figure's focus."""
    table = {
        (tuple(np.round(plt.matplotlib.colors.to_rgb(lk.colour), 3)), lk.marker)
        for key, lk in algorithm_style.STYLES.items()
        if key in _algorithms(kind).values()
    }
    for panel in drawn[1][kind]:
        assert set(panel) <= table, panel
    assert set().union(*map(set, drawn[1][kind])) == table


def test_style_check_catches_a_shared_colour_and_marker():
    """Negative control of the palette check: two lines in one colour and marker."""
    fig, ax = plt.subplots()
    for shift in (0, 1):
        ax.plot([1, 2], [shift, shift + 1], color="C0", marker="o")
    (panel,) = _curve_styles(fig)
    plt.close(fig)
    assert len(set(panel)) < len(panel)


@requires("poppler-utils")
def test_font_check_catches_small_type(tmp_path):
    """Negative control of the type-size check: a 6 pt label, and a 12 x 8 in page."""
    fig, ax = plt.subplots(figsize=(12, 8))
    ax.set_xlabel("iteration $t$", fontsize=6)
    ax.set_ylabel("loss", fontsize=8)
    fig.savefig(tmp_path / "small.pdf")
    plt.close(fig)
    assert min(body_sizes(font_sizes(tmp_path / "small.pdf"))) == 6
    assert page_inches(tmp_path / "small.pdf") == (12, 8)


def test_built_captions_carry_the_hypotheses_the_jobs_stored(built_project):
    """The tiny build's captions: each beside its PDF, with the hypotheses its data and svm
    jobs stored (not measured again), the backend, and its title."""
    import yaml

    results = built_project / "results-tiny"
    config = yaml.safe_load((built_project / "config/tiny.yaml").read_text())["experiments"]
    for name, e in config.items():
        stored = npz.hypotheses_by_seed(results / f"data/{name}.npz", results / f"svm/{name}.npz")
        assert len(stored) == e["seeds"]
        caption = (results / f"{name}.caption.md").read_text()
        assert markdown.text(hypotheses.describe(hypotheses.summarize(stored))) in caption, name
        assert "Trained on " in caption, name
        assert markdown.text(e["title"].split("\n")[0]) in caption, name


def test_a_verdict_grid_of_ticks_only_becomes_a_sentence():
    from attnbias.studies.sweep_figure import holds_everywhere

    verdicts = pd.DataFrame({"claim": ["a", "b"], "text": ["A", "B"]})
    points = pd.DataFrame(
        {"a": [True, True], "a_seeds": [5, 5], "b": [True, True], "b_seeds": [5, 5]}
    )
    assert holds_everywhere(points, verdicts, seeds=5)
    assert not holds_everywhere(points.assign(b_seeds=[5, 4]), verdicts, seeds=5)  # one seed
    assert not holds_everywhere(points.assign(a=[True, False]), verdicts, seeds=5)
    assert not holds_everywhere(points, verdicts.iloc[:0], seeds=5)  # no claims: no sentence


@requires("poppler-utils")
def test_real_data_figure_fits_a_page_and_names_coinciding_lines(tmp_path, monkeypatch):
    """draw_training on a table like fig7's: two optimizers with the same flat accuracy
    are named in their panel; page, type and caption as for the synthetic figures."""
    from attnbias.realdata import plots

    steps = np.arange(0, 30, 5)
    rows = [
        (name, 0, int(s), metric, value)
        for name, slope in (("sgd", 0.01), ("sps", 0.03), ("adam", 0.02))
        for s in steps
        for metric, value in (
            ("train_loss", 2.0 - slope * s),
            ("test_accuracy", 0.2 if name != "sps" else 0.2 + 0.01 * s),
            ("norm/00 head", 1.0 + slope * s),
        )
    ]
    table = pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])
    legend = {"sgd": ("SGD", "SGD lr=0.1"), "sps": ("SPS", "SPS c=0.5"), "adam": ("Adam", "x")}
    named = []
    real_say = plots.say_coinciding
    monkeypatch.setattr(
        plots,
        "say_coinciding",
        lambda ax, groups, labels: named.append(groups) or real_say(ax, groups, labels),
    )
    plots.draw_training(
        table, title="tiny ViT", legend=legend, algorithms={k: k for k in legend},
        caption="Settings.", fixture=True, outputs=[tmp_path / "f.pdf", tmp_path / "f.caption.md"],
    )  # fmt: skip
    assert named[1] == [("adam", "sgd")]  # (b): the accuracy of Adam and SGD
    width, height = page_inches(tmp_path / "f.pdf")
    assert width <= style.FULL_WIDTH + 1e-6 and height <= style.MAX_HEIGHT
    assert min(body_sizes(font_sizes(tmp_path / "f.pdf"))) >= style.MIN_FONT_PT
    assert "FIXTURE RUN" in " ".join(words(tmp_path / "f.pdf"))
    caption = (tmp_path / "f.caption.md").read_text()
    assert "tiny ViT" in caption and "Settings." in caption
    assert "dotted: the mini-batch version of a full-batch algorithm" in caption


def test_a_renamed_optimizer_keeps_its_reference_line_and_focus(tmp_path):
    """The rate and the thick line go to the optimizer that is NGD (panels.curve_of on its
    algorithm), whatever its config name; a figure without NGD draws neither and its
    caption states no rate."""
    kind = "fixed_decoder"
    table = _table(kind).replace({"optimizer": {"ngd": "fast"}})
    legend = {("fast" if k == "ngd" else k): v for k, v in _legend(kind).items()}
    keys = {"gd": "gd", "fast": "ngd-capped", "ps": "ps"}
    curves = {legend[name][0]: key for name, key in keys.items()}
    caption = drawing.draw(
        kind, table, title="t", legend=legend, algorithms=keys,
        outputs=[tmp_path / "a.caption.md"], description=panels.describe(kind, DATA, curves),
    )  # fmt: skip
    assert "Thick line: NGD," in caption and "Black dashed lines" in caption
    assert "t^-3/4 (Thm. 1), starting on NGD's curve" in caption
    without = {name: key for name, key in keys.items() if name != "fast"}
    caption = drawing.draw(
        kind, table[table["optimizer"] != "fast"], title="t",
        legend={name: legend[name] for name in without}, algorithms=without,
        outputs=[tmp_path / "b.caption.md"],
        description=panels.describe(kind, DATA, {legend[n][0]: k for n, k in without.items()}),
    )  # fmt: skip
    assert "Thick line" not in caption and "Black" not in caption and "Rates" not in caption
