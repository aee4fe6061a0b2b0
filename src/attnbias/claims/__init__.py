"""The paper's results, measured: the claims table, computed from the aggregate tables.

Every number comes from `results/{experiment}/metrics.parquet` (with ||W_mm|| from the SVM
files, the learned u's margin from the final parameters, and the hypotheses from the data
files); nothing is typed in. A row that does not hold on our runs says so: the table is a
measurement, not a certificate. docs/claims.md describes each row's columns.

Where each result's rows are built (add a claim to the module of its result, and call it
from `layouts` for the layouts it concerns):
  direction           Thm. 1 (NGD) and Thm. 7 (PS): W's alignment rate and how closely
                      Thm. 1 predicts it; Lem. 3: the optimal softmax never decreases;
                      Sec. 3.3's two-token example: GD's and NGD's rates, GD's log norm
  comparisons         Sec. 3.3: NGD and PS reach W_mm's direction before GD; Fig. 2: PS
                      first; Fig. 3: every other algorithm ahead of GD in W
  joint               Sec. 4 (joint W and u): Thm. 2 (loss), Thm. 3 (W's rate), Thm. 4
                      (u's direction and margin), Lem. 11
  global_convergence  Thm. 1, Lem. 2, App. C.1: from a bad direction (fig8) and the study
  consistency         near-tautologies of NGD (norm growth, Lem. 1), outside the count
  coverage            the algorithms each result is proved for, the hypotheses it needs
  layouts             which results each layout gets; `claims`, the whole table
  rows                a row (Claim), one experiment's rows (Rows), shared row helpers
  measure             reading the tables: windows, fits, crossings, races; thresholds
  write               Markdown, HTML and LaTeX of the table, and its summary line
"""

from attnbias.claims.global_convergence import study_claims
from attnbias.claims.joint import u_margin_ratio
from attnbias.claims.layouts import claims
from attnbias.claims.write import summary_line, to_html, to_latex, to_markdown

__all__ = [
    "claims",
    "study_claims",
    "summary_line",
    "to_html",
    "to_latex",
    "to_markdown",
    "u_margin_ratio",
]
