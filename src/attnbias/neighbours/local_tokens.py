"""The tokens a run ends on, and Tarzanagh et al.'s check that they are locally optimal.

Selected tokens: alpha_i = argmax_t x_{i,t}^T W z_i, the token the softmax selects at the
run's last iterate (the neighbours' "locally optimal tokens", whose W-SVM they compare
against; their code reads the softmax of the forward before the last step, one step
earlier than ours).

The check (Tarzanagh et al.'s definition of locally optimal token indices, in "Max-Margin
Token Selection in Attention Mechanism", arXiv 2306.13596, and "Transformers as Support
Vector Machines", arXiv 2308.16898, stated there for the SVM in any norm, as Julistiono et
al. state it for the l_p SVM): solve the W-SVM of alpha in the norm the run's bias is
toward (its own: Frobenius for W by GD, nuclear for K Q^T, l_p for l_p mirror descent; the
support differs between norms, so a run read against another norm's support can fail a
check its own passes); its support tokens T_i
are the t != alpha_i whose constraint is active, (x_{i,alpha_i} - x_{i,t})^T W^mm z_i = 1;
alpha is locally optimal when, in every sample, the selected token scores above each of its
support tokens: gamma_{i,alpha_i} > gamma_{i,t} for all t in T_i, with the token scores
gamma_{i,t} = y_i v^T x_{i,t} of the (fixed) decoder v. It is globally optimal when every
alpha_i is a best-scoring token of its sample (opt of the data contract).
"""

from __future__ import annotations

import numpy as np

from attnbias.neighbours import svms
from attnbias.svm import local_optimality
from attnbias.svm.local_optimality import TokenCheck, attention_scores


def selected_tokens(data: dict, W: np.ndarray) -> np.ndarray:
    """alpha_i = argmax_t of the softmax at W (n,)."""
    return np.argmax(attention_scores(data, W), axis=1)


def check(
    data: dict,
    tokens,
    *,
    decoder: np.ndarray | None = None,
    norm: str = "fro",
    name: str = "dataset",
    solution=None,
) -> TokenCheck:
    """Tarzanagh et al.'s check of `tokens` (one per sample) on `data` (module doc), with
    the support of the W-SVM in `norm` (theirs: the Frobenius one for W) and the scores of
    `decoder` (default the data's u; a joint run passes its final u); `solution`: that
    W-SVM where already solved (svm.local_optimality.check)."""
    if solution is None:
        solution = svms.w_svm(data, tokens, norm, name=name)
    return local_optimality.check(data, tokens, solution, decoder=decoder, norm=norm)


def run_svms(data: dict, W: np.ndarray, norm_names, *, name: str = "dataset") -> dict:
    """{norm: the W-SVM of the tokens `W` selects} for each norm: the SVMs a run's final W
    is compared with (svm.norms' names: fro, nuclear, max, spectral, l<p>)."""
    tokens = selected_tokens(data, W)
    return {norm: svms.w_svm(data, tokens, norm, name=name) for norm in norm_names}


def run_report(
    data: dict, W: np.ndarray, norm_names, *, own: str, decoder=None, name: str = "dataset"
) -> tuple[TokenCheck, dict]:
    """One run's end, as the neighbours read it: the check of the tokens its final W
    selects, on the W-SVM of the run's `own` norm (the one its bias is toward: module doc),
    and {norm: the W-SVM of those tokens} for each norm."""
    solutions = run_svms(data, W, sorted({own, *norm_names}), name=name)
    tokens = selected_tokens(data, W)
    found = check(data, tokens, decoder=decoder, norm=own, name=name, solution=solutions[own])
    return found, {norm: solutions[norm] for norm in norm_names}
