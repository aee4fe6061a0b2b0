"""The neighbours' questions as functions ("Transformers as Support Vector Machines",
umich-sota/TF-as-SVM; "Optimizing Attention with Mirror Descent", aaronk2002/AttentionMD):
the W-SVM of any tokens, self- or cross-attention (svms), the locally optimal tokens a run
ends on and Tarzanagh et al.'s check of them (local_tokens), AttentionMD's directional
Bregman divergence and TF-as-SVM's correlations (measures), and the SVMs' ranks at a
relative threshold with infeasible instances counted apart (ranks)."""
