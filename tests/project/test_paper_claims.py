"""The paper's claims, checked on the aggregate tables of the DEFAULT config.

Builds the default config's metric tables (not the figures) in a temporary copy: about
two and a half minutes on two cores. Thresholds are stated with each test; they are checked on
every seed, not only on the mean.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from project import REPO, copy_project, snakemake

from attnbias.quotes import marks

pytestmark = pytest.mark.slow
EXPERIMENTS = ("fig2", "fig2_uncapped", "fig3", "fig3_cond1", "fig8", "gd_vs_ngd", "fig9")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The default config's metric tables and claims table (no figures)."""
    workdir = copy_project(tmp_path_factory.mktemp("default"))
    targets = [f"results/{e}/metrics.parquet" for e in EXPERIMENTS]
    snakemake(workdir, *targets, "results/claims.md", "-c2", "-q", config="config/config.yaml")
    return workdir


@pytest.fixture(scope="module")
def tables(built) -> dict[str, pd.DataFrame]:
    return {e: pd.read_parquet(built / f"results/{e}/metrics.parquet") for e in EXPERIMENTS}


def test_the_readme_states_the_claims_tables_summary(built):
    """The README's headline counts are the default build's, word for word."""
    summary = (built / "results/claims.md").read_text().splitlines()[2].strip("*")
    readme = " ".join(marks.rendered((REPO / "README.md").read_text()).split())
    assert f"**{summary}**" in readme, summary


def series(table, optimizer, metric) -> pd.DataFrame:
    """iteration x seed values of one metric."""
    rows = table[(table["optimizer"] == optimizer) & (table["metric"] == metric)]
    return rows.pivot(index="iteration", columns="seed", values="value")


def final(table, optimizer, metric) -> np.ndarray:
    values = series(table, optimizer, metric)
    return values.loc[values.index.max()].to_numpy()


def window(values: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    return values[(values.index >= lo) & (values.index <= hi)]


def loglog_slope(values: pd.Series) -> float:
    return float(np.polyfit(np.log(values.index.to_numpy()), np.log(values.to_numpy()), 1)[0])


def test_ngd_and_ps_align_with_w_mm_while_gd_lags(tables):
    table = tables["fig2_uncapped"]  # the algorithms of Thm. 1 and Thm. 7
    gd = final(table, "gd", "gap_W")
    assert np.all(gd > 1e-3)
    for optimizer in ("ngd", "ps", "ngd-mom"):
        ours = final(table, optimizer, "gap_W")
        assert np.all(ours < 1e-3), optimizer
        assert np.max(ours) < np.min(gd) / 10, optimizer


def test_fig2_caps_bind_within_the_run_and_ps_leads_early(tables):
    """App. C's two caps, ours by one rule (docs/regime.md): PS's (1e308) binds, after which
    PS takes the cap as its step (GD with a large step: the step curve is flat); NGD's
    (1e148) never binds NGD within the run (it tracks Thm. 1) over every step, and binds
    NGD-mom late."""
    table = tables["fig2"]
    for optimizer, cap, binds_by in (("ps", 1e308, 1000), ("ngd-mom", 1e148, 2000)):
        step = series(table, optimizer, "log_step_W")
        log_cap = np.log(cap)
        assert np.all(step.iloc[0] < log_cap - 1), optimizer
        assert np.allclose(step.iloc[-1], log_cap, rtol=0, atol=1e-9), optimizer
        bound = step.index[(step >= log_cap - 1e-9).all(axis=1)]
        assert 1 < bound.min() < binds_by, (optimizer, bound.min())
    largest = series(table, "ngd", "max_log_step_W").iloc[-1]  # over every step
    assert np.all(largest < np.log(1e148)) and np.any(largest > np.log(1e147))
    first = {
        o: series(table, o, "first_gap_W_below_0.01").iloc[-1] for o in ("ps", "ngd", "ngd-mom")
    }
    assert np.all(first["ps"] < np.minimum(first["ngd"], first["ngd-mom"]))


def test_ngd_norm_grows_linearly_and_gd_norm_logarithmically(tables):
    table = tables["fig2_uncapped"]
    ngd = window(series(table, "ngd", "W_norm"), 1e3, 1e4)
    for seed in ngd:
        assert loglog_slope(ngd[seed]) == pytest.approx(1.0, abs=0.01)
    gd = window(series(table, "gd", "W_norm"), 1e2, 1e4)
    for seed in gd:
        # linear in log t: a straight-line fit against log t explains the curve
        x, y = np.log(gd.index.to_numpy()), gd[seed].to_numpy()
        fit = np.polyval(np.polyfit(x, y, 1), x)
        r2 = 1 - np.sum((y - fit) ** 2) / np.sum((y - y.mean()) ** 2)
        # far below NGD's log-log slope of 1 (the claims table compares a + b ln t with a
        # power law by AIC; a log-log slope threshold of 0.3 failed on one seed, 0.305)
        assert r2 > 0.99 and loglog_slope(gd[seed]) < 0.5


def test_optimal_token_softmax_goes_to_one_under_ngd(tables):
    for experiment, optimizers in (
        ("fig2_uncapped", ("ngd", "ps", "ngd-mom")),
        ("fig3", ("ngd",)),  # joint NGD's attention is still spread at 1e4 (log near -13)
    ):
        for optimizer in optimizers:
            log1m = series(tables[experiment], optimizer, "log1m_opt_softmax")
            assert np.all(log1m.iloc[-1] < -100), (experiment, optimizer)
            # exponentially fast: log(1 - s) falls linearly in t over the second half
            late = window(log1m, log1m.index.max() / 2, log1m.index.max())
            t = late.index.to_numpy()
            for seed in late:
                slope, _ = np.polyfit(t, late[seed].to_numpy(), 1)
                assert slope < 0
                fit = np.polyval(np.polyfit(t, late[seed].to_numpy(), 1), t)
                assert np.max(np.abs(fit - late[seed].to_numpy())) < 0.05 * abs(late[seed].min())


def test_gd_converges_to_w_mm_from_a_bad_direction(tables):
    """fig8, App. C.1's 2-D instance: sample 1's optimal softmax starts below 1/T = 1/2 and
    first falls while sample 2's rises; both end near 1 and W_t turns to W_mm's direction."""
    table = tables["fig8"]
    bad, good = series(table, "gd", "opt_softmax_0")[0], series(table, "gd", "opt_softmax_1")[0]
    assert bad.iloc[0] < 0.5 < good.iloc[0]
    assert bad.iloc[1] < bad.iloc[0] and good.iloc[1] > good.iloc[0]
    assert bad.min() < bad.iloc[0] - 0.1  # a clear dip (0.37 to 0.18 on the default config)
    assert bad.iloc[-1] > 0.99 and good.iloc[-1] > 0.99
    gap = series(table, "gd", "gap_W")
    assert np.all(gap.iloc[0] > 1.0)  # the start points away from W_mm (negative cosine)
    assert np.all(gap.iloc[-1] < 2e-3)
    late = window(gap, 1e2, 1e4)
    assert np.all(np.diff(late.to_numpy(), axis=0) <= 0)  # and keeps closing in


def test_two_token_rates(tables):
    table = tables["gd_vs_ngd"]
    gd = window(series(table, "gd", "gap_W"), 1e3, 3e4)[0]
    scaled = gd * np.log(gd.index.to_numpy()) ** 2  # GD: gap ~ C / log^2 t
    assert scaled.max() / scaled.min() < 1.2
    assert loglog_slope(gd) > -0.5  # far slower than any power of t that NGD shows
    ngd = window(series(table, "ngd", "gap_W"), 1e3, 3e4)[0]
    assert loglog_slope(ngd) == pytest.approx(-2.0, abs=0.05)  # NGD: gap ~ C t^-2


def test_joint_training_loss_goes_to_zero_and_u_aligns_with_u_mm(tables):
    table = tables["fig3"]
    for optimizer in ("ngd", "ps", "joint-ngd"):
        assert np.all(final(table, optimizer, "log_loss") < -500), optimizer
        assert np.all(final(table, optimizer, "gap_u") < 1e-4), optimizer
    # the paper's NGD (W and u each normalised) aligns W ahead of joint NGD and, by more
    # than a decade, of GD, on every seed
    ngd = final(table, "ngd", "gap_W")
    assert np.all(final(table, "gd", "gap_W") > 1e-2)
    assert np.max(ngd) < np.min(final(table, "gd", "gap_W")) / 10
    assert np.all(ngd < final(table, "joint-ngd", "gap_W"))


def test_fig9_ngd_aligns_ahead_of_gd_on_the_bundled_digits(tables):
    """fig9 on the default config (scikit-learn's 8x8 digits): NGD's
    direction is ahead of GD's, on every seed, by an order of magnitude at t = 10^4."""
    table = tables["fig9"]
    ngd, gd = final(table, "ngd", "gap_W"), final(table, "gd", "gap_W")
    assert np.all(ngd < 1e-3), ngd
    assert np.max(ngd) < np.min(gd) / 10, (ngd, gd)
    # and already from t = 10^3 on: the first logged iteration at or after t
    for t in (1000, 3000):
        ngd_t, gd_t = (window(series(table, o, "gap_W"), t, 1e9).iloc[0] for o in ("ngd", "gd"))
        assert ngd_t.max() < gd_t.min(), t


def test_lemma_11_loss_ratio_bounded_only_where_every_sample_is_a_support_vector(tables):
    """Eq. 10 (with its step factors): on fig3's data (40% to 75% of the samples u-SVM
    support vectors) ln(max_i l_i / min_i l_i) grows by more than 10 after t = 10^3; on
    fig3_cond1 (every sample one) it grows by less than 0.1 (measured: 11 to 37, and -0.17
    to 0.03)."""
    for experiment, low, high in (("fig3", 10, np.inf), ("fig3_cond1", -np.inf, 0.1)):
        ratio = series(tables[experiment], "eq10", "log_loss_ratio")
        growth = window(ratio, 1e3, 1e4).max() - window(ratio, 0, 1e3).max()
        assert np.all((growth > low) & (growth < high)), (experiment, growth.to_numpy())


def test_the_docs_numbers_are_the_default_builds(built):
    """Every number that README.md's headlines, docs/findings.md and docs/regime.md quote
    from the default build (attnbias.quotes) is this build's, at its quoted precision;
    only the optional targets' numbers (sweeps, real data) read "not built here", and every
    other one was compared. Fix a failure with `python -m attnbias.quotes write` on a
    default build."""
    from attnbias.quotes.build import Build
    from attnbias.quotes.pages import PAGES
    from attnbias.quotes.quote import check

    outcome, _ = check(PAGES, Build(built / "results"), REPO)
    assert not outcome.faults, "\n".join(map(str, outcome.faults))
    # each marker and section was compared, or is an optional target's that this build does
    # not make (the days the numbers were measured aside: they say when, never stale alone)
    expected = 0
    for page in PAGES:
        found, _ = marks.find((REPO / page.path).read_text())
        expected += len(page.sections)
        expected += sum(not (m.name in page.numbers and page.numbers[m.name].day) for m in found)
    assert outcome.compared + len(outcome.unbuilt) == expected
