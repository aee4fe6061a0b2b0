"""The paper's results, measured: the claims table, computed from the aggregate tables.

Every number comes from `results/{experiment}/metrics.parquet` (with ||W_mm|| from the SVM
files, the learned u's margin from the final parameters, the hypotheses from the data files
and the W-SVM's feasibility from both); nothing is typed in. A row that does not hold on our
runs says so: the table is a measurement, not a certificate. docs/claims.md describes each
row's columns.

Where the table is built (add a statement: its Statement in `statements` and its measuring
function in the module of its result):
  statements          the registry: every checkable sentence of the paper, with its quote,
                      place, algorithms, data, test kind and measuring function
  direction           Thm. 1 and Thm. 7 (rate bounds), Fig. 2's closeness remark, Lem. 3,
                      Sec. 3.3's two-token rates and GD's log norm
  comparisons         races: Sec. 3.3 (NGD, PS before GD), Fig. 2's, Fig. 3's and Fig. 9's
                      remarks, in every metric a figure draws
  remarks             Fig. 2's and Fig. 9's remarks read off the curves and data: the loss's
                      positive floor, PS slowing down, Fig. 9's direction and scores (Ass. 2)
  joint               Sec. 4: Thm. 2, Thm. 3, Thm. 4 (direction, rate, margin), Lem. 10,
                      Lem. 11 (one hypothesis set)
  global_convergence  Thm. 1, App. C.1: from a bad direction (fig8; the loss minimized) and
                      the study; Thm. 6 (GD converges globally)
  data_statements     the data's statements: footnote 4 (the W-SVM feasible), Lem. 6
                      (Example 1 meets Ass. 1, 2), Lem. 9 (DM's tokens nearly orthogonal)
  real                Sec. 5, App. C: the real-data statements, on the real-data run tables;
                      paired_race: their races, a paired test over seeds; real_tuning:
                      their verdicts against the sweep's record (undecided where untuned)
  consistency         near-tautologies of NGD (norm growth, Lem. 1), outside the count (as is
                      every row that cannot fail: Statement.check, a bound's lost constant)
  coverage            a run's algorithm (from the optimizer registry), each section's hypotheses
  layouts             `claims`: the registry measured on every experiment, duplicates once
  claim               a statement of the paper (Statement) and a row (Claim): its kinds of
                      test and their verdict words; rows as a table
  rows                one experiment's rows (Rows): each added as what it says (Said), what
                      was measured on which run (Measured) and its verdict (Verdict)
  races, thresholds, monotone   the rows of the tests that several statements share: a race,
                      a threshold (ours: how far it sits from flipping), a no-decrease check
  measure             reading the tables: windows, fits, crossings, races, bounds; thresholds
                      (the sweeps judge with the same functions)
  write               Markdown, HTML, CSV and LaTeX of the table and its registry
  summary             the summary lines: counts by category, the rows of each kind (counted
                      by test, consistency checks by why they cannot fail), beyond the paper
  beyond              the rows beyond the paper: which max-margin each optimizer finds (the
                      geometry experiments); beyond_seeds: their tuning seed and reported seeds
  inputs              what the table reads of one experiment's files (the claims job's and
                      the robustness points')
"""
