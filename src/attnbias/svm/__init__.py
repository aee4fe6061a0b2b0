"""The max-margin problems the paper's results name: the W-SVM and the u-SVM, our
Gram-space solver with its KKT report and the cvxpy reference (max_margin)."""
