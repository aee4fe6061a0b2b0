"""docs/real-data.md's registry: what the real-data figures on any machine measure
(fig1_minilm, fig4_minilm, fig6_mnist5k: optional targets, each named), by marker name
(attnbias.quotes.marks). Its tables are generated whole (attnbias.quotes.real_tables: each
sweep's settings, each figure's end points and cap counts, its races); the words quote the
CPU seconds of a build's training jobs (their benchmark files), and the facts say whether
a figure runs the settings its sweep's rule chose and how a race came out."""

from __future__ import annotations

import numpy as np

from attnbias.quotes.build import Build
from attnbias.quotes.quote import Page, Source
from attnbias.quotes.real_tables import sections
from attnbias.quotes.sources import computed, outcome
from attnbias.workflow import tuning_record

REAL_DATA = "docs/real-data.md"
FIGURES = {"fig1_minilm": "fig1_minilm_lr", "fig4_minilm": "fig4_minilm_lr",
           "fig6_mnist5k": "fig6_mnist5k_lr"}  # fmt: skip
# the builds whose cost the page quotes
COSTED = tuple(name for pair in FIGURES.items() for name in pair)
OUTCOMES = {"holds": ("holds",), "fails": ("does not hold",), "undecided": ("undecided",)}


def tuned(figure: str, sweep: str) -> Source:
    """True where the figure runs exactly the settings the tuning rule chose (the bold rows
    of <sweep>_final.csv; workflow.tuning_record.mismatches): the figure is what was tuned."""

    def read(b: Build) -> bool:
        runs = b.final_table(figure)[["optimizer", "rule", "settings"]].itertuples(index=False)
        return not tuning_record.mismatches(tuning_record.chosen(b.final_table(sweep)), runs)

    what = f"{figure} runs, for every rule, the setting {sweep}'s tuning rule chose"
    return Source(what, read, f"results/{sweep}_final.csv")


def cpu_seconds(figure: str, reduce, what: str) -> Source:
    """`reduce` of the CPU seconds of `figure`'s training jobs (their benchmark files,
    results/benchmarks/train_real/<figure>/<optimizer>/seed<seed>.tsv)."""
    return computed(
        f"{figure}: {what} of its training jobs' CPU seconds (benchmark files)",
        lambda b: reduce(b.benchmarks("train_real", f"{figure}/*/*")["cpu_time"].to_numpy()),
        target=f"results/{figure}.pdf",
    )


def _cpu_range(values) -> np.ndarray:
    return np.array([values.min(), values.max()])


def race(figure: str, race: str, short: str) -> Source:
    """True where the claims row `<figure> <race>` reads the outcome `short` names
    (OUTCOMES: holds, fails, undecided)."""
    return outcome(f"{figure} {race}", *OUTCOMES[short], target=f"results/{figure}.pdf")


# the numbers the page's words quote (its tables are generated whole: SECTIONS)
NUMBERS = {
    f"{name}.cpu.{short}": cpu_seconds(name, reduce, short)
    for name in COSTED
    for short, reduce in (("total", np.sum), ("run", _cpu_range), ("runs", np.size))
}

# fig10_minilm: Fig. 10's measurement on MiniLM's embeddings, per corpus (its histograms)
SIMILARITY = "fig10_minilm"
CORPORA = {"rt": "rotten_tomatoes", "sms": "sms_spam"}


def similarity(dataset: str, what: str, read) -> Source:
    return computed(
        f"{SIMILARITY}, {dataset}: {what}",
        lambda b: read(b.similarity(SIMILARITY, dataset)),
        target=f"results/{SIMILARITY}.pdf",
    )


def _above(table, cos: float):
    return table[table["lo"] >= cos - 1e-9]  # bin edges are rounded floats


def _first(column: str):
    return lambda table: table[column].iloc[0]


def _identical_share(table) -> float:
    return table["identical_pairs"].iloc[0] / table["pairs"].iloc[0]


def _last_bin(table) -> int:
    return _above(table, 0.999)["count"].sum()


SIMILARITY_NUMBERS = {
    "texts": ("texts", _first("texts")),
    "pairs": ("token pairs", _first("pairs")),
    "band": ("share of the pairs with |cos| below the band", _first("within_band")),
    "identical": ("share of identical-token pairs", _identical_share),
    "last-bin": ("pairs in the last bin (cos 0.999 to 1)", _last_bin),
}
NUMBERS |= {
    f"{SIMILARITY}.{short}.{name}": similarity(dataset, what, read)
    for short, dataset in CORPORA.items()
    for name, (what, read) in SIMILARITY_NUMBERS.items()
}
NUMBERS[f"{SIMILARITY}.cpu.job"] = computed(
    f"{SIMILARITY}: its histogram jobs' CPU seconds (benchmark files)",
    lambda b: _cpu_range(
        b.benchmarks("token_similarity", f"{SIMILARITY}/*")["cpu_time"].to_numpy()
    ),
    target=f"results/{SIMILARITY}.pdf",
)


def _only_identical_above(table, cos: float) -> bool:
    return bool(_above(table, cos)["count"].sum() == table["identical_pairs"].iloc[0])


FACTS = {f"{figure}.tuned": tuned(figure, sweep) for figure, sweep in FIGURES.items()}
# how fig6_mnist5k's races came out, as the page's words say it
FACTS |= {
    "fig6_mnist5k-sps.undecided": race("fig6_mnist5k", "sps faster than sgd", "undecided"),
    "fig6_mnist5k-sngd.undecided": race("fig6_mnist5k", "sgd faster than sngd", "undecided"),
    "fig6_mnist5k-adam.fails": race("fig6_mnist5k", "adam like sgd", "fails"),
}
# and the text figures' races
FACTS |= {
    f"{figure}-{rule}.{short}": race(figure, f"{rule} faster than sgd", short)
    for figure, rule, short in (
        ("fig1_minilm", "sngd", "holds"),
        ("fig1_minilm", "sps", "fails"),
        ("fig4_minilm", "sngd", "undecided"),
        ("fig4_minilm", "sps", "holds"),
    )
}
# "no other pair lies above 0.99": the last bin holds the identical pairs, the nine below it none
FACTS |= {
    f"{SIMILARITY}.{short}.only-identical-above-0.99": similarity(
        dataset,
        "the last bin holds exactly the identical-token pairs and the nine below it none",
        lambda t: _only_identical_above(t, 0.999) and _only_identical_above(t, 0.99),
    )
    for short, dataset in CORPORA.items()
}

SECTIONS = tuple(s for figure, sweep in FIGURES.items() for s in sections(figure, sweep))

PAGE = Page(REAL_DATA, NUMBERS, FACTS, SECTIONS)
