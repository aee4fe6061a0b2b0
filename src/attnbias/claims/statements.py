"""The registry of the paper's checkable statements: one entry per sentence, with its quoted
text, where it stands, the algorithms and data it is made for, the kind of its test, and the
function that measures it on a run (adding rows to rows.Rows).

`claims` (layouts.py) measures every entry on every experiment of the entry's layouts; an
entry that yields no row says "not measured: <what is missing>", outside the counts. Which
runs an entry reads is decided by their algorithm (coverage.algorithm), never by their
config names. Adding a statement: one Statement here and its measuring function in the
module of its result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnbias.claims import comparisons, consistency, direction, global_convergence, joint, real

FIXED = ("fixed_decoder",)
JOINT = ("joint",)
REAL = ("real",)
SYNTHETIC_MISSING = "no experiment of this layout in the configured build"


@dataclass(frozen=True)
class Statement:
    key: str
    result: str  # the heading its rows are grouped under
    quote: str  # the paper's words (or the result's statement, math lost in extraction)
    where: str  # section, theorem, figure
    section: str  # whose proofs' hypotheses apply (coverage.SECTION_HYPOTHESES)
    layouts: tuple[str, ...]  # the experiment layouts that can measure it
    covers: tuple[str, ...] | None  # the algorithms it is made for (coverage.ALGORITHMS)
    data: str  # the data it is made for, in words
    kind: str  # the test's kind (rows.KINDS)
    measure: Callable  # measure(rows) adds the rows of one experiment
    missing: str = SYNTHETIC_MISSING  # what a build without its runs lacks
    datasets: tuple[str, ...] = ()  # real data: the datasets it is stated for


SEC3_DATA = "Example 1 (and the bundled digits) under Ass. 1 and Ass. 2"
SEC4_DATA = "data model DM under Cond. 1"

STATEMENTS: tuple[Statement, ...] = (
    # ---- Sec. 3: fixed decoder ------------------------------------------------------
    Statement(
        key="thm1-rate",
        result="Thm. 1",
        quote="NGD ... converges globally in direction to W_mm, at a "
        "rate (our reading: t^-3/4) - 'a lower bound on the rate'",
        where="Thm. 1, Sec. 3.2",
        section="Sec. 3",
        layouts=FIXED,
        covers=("ngd",),
        data=SEC3_DATA,
        kind="bound",
        measure=direction.rate_bound_rows,
    ),
    Statement(
        key="thm1-close",
        result="Thm. 1",
        quote="Observe that the directional alignment for NGD is closely predicted by Thm. 1.",
        where="Sec. 3.2, Fig. 2",
        section="experiment",
        layouts=FIXED,
        covers=("ngd-capped",),
        data="Fig. 2's run: Example 1, NGD with App. C's cap",
        kind="remark",
        measure=direction.closeness_rows,
        missing="no experiment citing Fig. 2 with an NGD run",
    ),
    Statement(
        key="thm7-rate",
        result="Thm. 7",
        quote="Polyak step converges in direction to W_mm at a rate (lost in extraction)",
        where="Thm. 7, Sec. 3.2",
        section="Sec. 3",
        layouts=FIXED,
        covers=("ps",),
        data=SEC3_DATA,
        kind="bound",
        measure=direction.rate_bound_rows,
    ),
    Statement(
        key="lem1",
        result="Lem. 1",
        quote="the softmax-score saturation rate in Lem. 1 closely aligns "
        "with the empirical rate in Fig. 2",
        where="Lem. 1, Sec. 3.2",
        section="Sec. 3",
        layouts=FIXED,
        covers=("ngd",),
        data=SEC3_DATA,
        kind="consistency",
        measure=consistency.softmax_rate_rows,
    ),
    Statement(
        key="thm1-norm",
        result="Thm. 1: norm growth",
        quote="||W_t|| grows linearly (the proof of Thm. 1)",
        where="Sec. 3.2",
        section="Sec. 3",
        layouts=FIXED,
        covers=("ngd",),
        data=SEC3_DATA,
        kind="consistency",
        measure=consistency.norm_growth_rows,
    ),
    Statement(
        key="lem3",
        result="Lem. 3",
        quote="the softmax score of the optimal token is non-decreasing",
        where="Lem. 3 (NGD); Thm. 6's proof (GD); App. A, Thm. 7's proof (PS)",
        section="Sec. 3",
        layouts=FIXED,
        covers=("gd", "ngd", "ps"),
        data=SEC3_DATA,
        kind="measurement",
        measure=direction.softmax_monotone_rows,
    ),
    Statement(
        key="sec33-races",
        result="Sec. 3.3: NGD (and PS) faster than GD",
        quote="NGD is faster than GD ... highlighting a significant gap between the two",
        where="Sec. 3.3, Eq. 3 (proved on its two-token example)",
        section="Sec. 3",
        layouts=("two_token",) + FIXED,
        covers=None,
        data="Sec. 3.3's two-token example; elsewhere a comparison",
        kind="race",
        measure=comparisons.crossing_race_rows,
    ),
    Statement(
        key="sec33-rates",
        result="Sec. 3.3: GD against NGD",
        quote="the correlation of vanilla GD ... "
        "is upper bounded by (1/log^2 t); according to Thm. 1, the rate for NGD is "
        "(t^-2 here)",
        where="Sec. 3.3, Eq. 3",
        section="Sec. 3",
        layouts=("two_token",),
        covers=("gd", "ngd"),
        data="Sec. 3.3's two-token example",
        kind="measurement",
        measure=direction.two_token_rate_rows,
    ),
    Statement(
        key="sec33-norm",
        result="Sec. 3.3: GD's norm",
        quote="||W_t|| of GD grows like log t",
        where="Sec. 3.3 (the two-token example)",
        section="Sec. 3",
        layouts=("two_token",) + FIXED,
        covers=("gd",),
        data="Sec. 3.3's two-token example; elsewhere a comparison",
        kind="measurement",
        measure=direction.log_norm_rows,
    ),
    Statement(
        key="fig2-ngd-vs-gd",
        result="Fig. 2: NGD faster than GD",
        quote="Moreover, note that NGD is significantly faster than standard GD",
        where="Sec. 3.2, Fig. 2",
        section="experiment",
        layouts=FIXED,
        covers=("ngd-capped",),
        data="Fig. 2's run: Example 1, NGD with App. C's cap",
        kind="race",
        measure=comparisons.fig2_ngd_vs_gd_rows,
        missing="no experiment citing Fig. 2 with NGD and GD",
    ),
    Statement(
        key="fig2-ps-first",
        result="Fig. 2: PS fastest early",
        quote="Polyak step-size, which empirically outperforms NGD (see Fig. 2)",
        where="Sec. 3.2 (Extension to Polyak step), Fig. 2",
        section="experiment",
        layouts=FIXED,
        covers=("ps-capped",),
        data="Fig. 2's run: Example 1, PS with App. C's cap",
        kind="race",
        measure=comparisons.fig2_ps_fastest_rows,
        missing="no experiment citing Fig. 2 with PS and NGD",
    ),
    Statement(
        key="fig2-momentum",
        result="Fig. 2: momentum boosts NGD",
        quote="We also present results for "
        "NGD with momentum in Fig. 2, which results in a performance boost.",
        where="Sec. 3.2, Fig. 2",
        section="experiment",
        layouts=FIXED,
        covers=("ngd-mom-capped",),
        data="Fig. 2's run: Example 1, NGD-mom with App. C's cap",
        kind="race",
        measure=comparisons.fig2_momentum_rows,
        missing="no experiment citing Fig. 2 with NGD-mom",
    ),
    Statement(
        key="global-2d",
        result="Global convergence (Thm. 1, App. C.1)",
        quote="initialised in a bad stationary direction, GD and NGD still converge to W_mm",
        where="Thm. 1, App. C.1, Fig. 8",
        section="Sec. 3",
        layouts=("bad_init_2d", "bad_init"),
        covers=("gd", "ngd"),
        data="App. C.1's 2-D instance (and its random variant)",
        kind="measurement",
        measure=lambda rows: (
            global_convergence.bad_init_2d_rows(rows)
            if rows.run.layout == "bad_init_2d"
            else global_convergence.bad_init_rows(rows)
        ),
    ),  # fmt: skip
    # ---- Sec. 4: joint training (one proof: Lem. 11's induction) --------------------
    Statement(
        key="thm2",
        result="Thm. 2: loss rate",
        quote="the train loss converges (rate lost; "
        "'analogous to the loss rate for linear predictors on separable data')",
        where="Thm. 2, Sec. 4",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="threshold",
        measure=joint.loss_rate_rows,
    ),
    Statement(
        key="thm3",
        result="Thm. 3",
        quote="W_t converges in direction to W_mm at a 1/log t rate",
        where="Thm. 3 (Eq. 10 with its step factors)",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="bound",
        measure=joint.w_rate_rows,
    ),
    Statement(
        key="thm4-direction",
        result="Thm. 4: u's direction",
        quote="u_t converges in direction to u_mm",
        where="Thm. 4 (u-SVM)",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="threshold",
        measure=joint.u_direction_rows,
    ),
    Statement(
        key="thm4-margin",
        result="Thm. 4: u's margin",
        quote="u_t attains a constant factor of u_mm's margin",
        where="Thm. 4",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="threshold",
        measure=joint.u_margin_rows,
    ),
    Statement(
        key="lem11-iii",
        result="Lem. 11",
        quote="the loss ratio across samples stays bounded "
        "('crucial in obtaining a PL-like inequality')",
        where="Lem. 11 (iii), Sec. 4.3",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="threshold",
        measure=joint.loss_ratio_rows,
    ),
    Statement(
        key="lem11-i",
        result="Lem. 11",
        quote="the score gap between optimal and non-optimal tokens grows",
        where="Lem. 11 (i), Sec. 4.3",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="measurement",
        measure=joint.score_gap_rows,
    ),
    Statement(
        key="lem11-ii",
        result="Lem. 11",
        quote="the optimal tokens' softmax is non-decreasing",
        where="Lem. 11 (ii), Sec. 4.3",
        section="Sec. 4",
        layouts=JOINT,
        covers=("eq10",),
        data=SEC4_DATA,
        kind="measurement",
        measure=joint.softmax_monotone_rows,
    ),
    Statement(
        key="fig3-vs-gd",
        result="Fig. 3: faster than GD",
        quote="We observe that all other algorithms are faster than GD",
        where="Sec. 5, Fig. 3",
        section="experiment",
        layouts=JOINT,
        covers=("per-block-ngd", "ps", "joint-ngd"),
        data="Fig. 3's run: DM",
        kind="race",
        measure=comparisons.fig3_faster_than_gd_rows,
        missing="no experiment citing Fig. 3",
    ),
    Statement(
        key="fig3-ps-fastest",
        result="Fig. 3: PS the fastest",
        quote="... with PS being the fastest",
        where="Sec. 5, Fig. 3",
        section="experiment",
        layouts=JOINT,
        covers=("ps",),
        data="Fig. 3's run: DM",
        kind="race",
        measure=comparisons.fig3_ps_fastest_rows,
        missing="no experiment citing Fig. 3 with PS",
    ),
    Statement(
        key="fig3-ngd-vs-joint",
        result="Fig. 3: NGD slightly ahead of joint NGD",
        quote="for the other metrics, NGD is slightly faster than joint-NGD",
        where="Sec. 5, Fig. 3",
        section="experiment",
        layouts=JOINT,
        covers=("per-block-ngd",),
        data="Fig. 3's run: DM",
        kind="race",
        measure=comparisons.fig3_ngd_vs_joint_rows,
        missing="no experiment citing Fig. 3 with both NGDs",
    ),
    Statement(
        key="fig3-loss-similar",
        result="Fig. 3: NGD's loss like joint NGD's",
        quote="the train loss converges at a similar rate for NGD and joint-NGD",
        where="Sec. 5, Fig. 3",
        section="experiment",
        layouts=JOINT,
        covers=("per-block-ngd",),
        data="Fig. 3's run: DM",
        kind="remark",
        measure=comparisons.fig3_similar_loss_rows,
        missing="no experiment citing Fig. 3 with both NGDs",
    ),
    # ---- Sec. 5 and App. C: real data -----------------------------------------------
    Statement(
        key="real-mnli",
        result="Real data: text",
        quote="both gradient normalized step-sizes SNGD and SPS train significantly "
        "faster than SGD",
        where="Sec. 5, Fig. 1",
        section="experiment",
        layouts=REAL,
        covers=("sngd", "sps"),
        data="MNLI, BERT fine-tuned",
        kind="race",
        measure=real.faster_than_sgd_rows,
        missing="the MNLI data and bert-base-uncased (results/fig1/metrics.parquet not built)",
        datasets=("mnli",),
    ),
    Statement(
        key="real-civil",
        result="Real data: text",
        quote="Fig. 4 in the App. shows similar results for the CivilComments dataset",
        where="Sec. 5, Fig. 4",
        section="experiment",
        layouts=REAL,
        covers=("sngd", "sps"),
        data="CivilComments, BERT fine-tuned",
        kind="race",
        measure=real.faster_than_sgd_rows,
        missing="the CivilComments data and bert-base-uncased "
        "(results/fig4/metrics.parquet not built)",
        datasets=("civilcomments",),
    ),
    Statement(
        key="real-vision-sps",
        result="Real data: vision",
        quote="while SPS still outperforms SGD",
        where="Sec. 5; App. C, Figs. 6-7",
        section="experiment",
        layouts=REAL,
        covers=("sps",),
        data="MNIST and CIFAR-10, ViT-small from scratch",
        kind="race",
        measure=real.faster_than_sgd_rows,
        missing="MNIST or CIFAR-10 (no vision run table built)",
        datasets=("mnist", "cifar10"),
    ),
    Statement(
        key="real-vision-sngd",
        result="Real data: vision",
        quote="SNGD trains slower",
        where="Sec. 5; App. C, Figs. 6-7",
        section="experiment",
        layouts=REAL,
        covers=("sgd",),
        data="MNIST and CIFAR-10, ViT-small from scratch",
        kind="race",
        measure=real.sngd_slower_rows,
        missing="MNIST or CIFAR-10 (no vision run table built)",
        datasets=("mnist", "cifar10"),
    ),
    Statement(
        key="real-adam",
        result="Real data: vision",
        quote="in this setting we see no significant gap between Adam and SGD",
        where="Sec. 5; App. C (MNIST)",
        section="experiment",
        layouts=REAL,
        covers=("adam",),
        data="MNIST and CIFAR-10, ViT-small from scratch",
        kind="threshold",
        measure=real.adam_no_gap_rows,
        missing="MNIST or CIFAR-10 (no vision run table built)",
        datasets=("mnist", "cifar10"),
    ),
    Statement(
        key="real-layer-norms",
        result="Real data: vision",
        quote="we plot the norm growth for various layers of the ViT and see growth in parameters",
        where="App. C, Fig. 7",
        section="experiment",
        layouts=REAL,
        covers=None,
        data="CIFAR-10, ViT-small with layer norms logged",
        kind="measurement",
        measure=real.layer_norms_grow_rows,
        missing="CIFAR-10 (results/fig7/metrics.parquet with its layer norms not built)",
        datasets=("cifar10",),
    ),
    Statement(
        key="real-orthogonal",
        result="Real data: text",
        quote="a significant fraction of all the cosine "
        "similarities fall within a small range around 0, suggesting a nearly "
        "orthogonal behavior",
        where="App. C, Fig. 10",
        section="experiment",
        layouts=(),
        covers=None,
        data="BERT token embeddings of CivilComments and MNLI texts",
        kind="measurement",
        measure=lambda rows: None,
        missing="bert-base-uncased and the MNLI and CivilComments texts "
        "(Fig. 10's similarity table is not read by the claims yet)",
    ),
)

# the global-convergence study (results/global_convergence.*), judged by study_claims
STUDY = Statement(
            key="study",
            result="Global convergence (Thm. 1, Lem. 2; the study)",
            quote="from any "
                  "initial direction with a small norm, it reaches W_mm's direction",
            where="Thm. 1, Thm. 7, Lem. 2, Sec. 3",
            section="Sec. 3",
            layouts=("study",),
            covers=None,
            data="random Example 1-like data with correlated tokens and unequal scores",
            kind="measurement",
            measure=lambda rows: None,
        )  # fmt: skip


def by_key(key: str) -> Statement:
    (found,) = [s for s in STATEMENTS if s.key == key]
    return found
