"""Beyond the paper: which max-margin an optimizer finds (the geometry experiments).

measures   the logged measures of a geometry run: the alignment of W_t with each norm's
           attention-SVM solution, and W_t's normalized margin in each norm (an
           extra_metrics function of the training backends)
findings   docs/findings.md's section, generated from a build's claims table
expected   which norm each optimizer is expected to find (its rule's implicit_norm)
"""
