"""Binary digits (App. C.2, Fig. 9): sequences whose one signal patch is a real digit image
(scikit-learn's 8x8 digits or MNIST), the others Gaussian noise, scored by a fixed linear
classifier fitted on other images of the same two digits. The one data model drawn from
real images; registered in attnbias.data.models by this module's name.
"""

from __future__ import annotations

import numpy as np

from attnbias.data.models import DataError, check_sizes, token_scores


def _binary_digit_images(source: str, root: str | None, digits: tuple[int, int]):
    """Images of two digit classes as flat rows in [0, 1], labels -1 (first) / +1 (second)."""
    if source == "sklearn":
        from sklearn.datasets import load_digits  # 8x8 digits shipped with scikit-learn

        bunch = load_digits()
        images, classes = bunch.data / 16.0, bunch.target
    elif source == "mnist":
        from attnbias.data.idx import read_mnist  # numpy only: no torch here

        images, classes = read_mnist(root)["train"]
        images = images.reshape(len(images), -1) / 255.0
    else:
        raise DataError(f"unknown digits source {source!r}; choose 'sklearn' or 'mnist'")
    keep = np.isin(classes, digits)
    labels = np.where(classes[keep] == digits[1], 1.0, -1.0)
    return images[keep].astype(np.float64), labels


def binary_digits(
    rng: np.random.Generator,
    *,
    n: int,
    T: int,
    noise: float,
    source: str = "sklearn",
    root: str | None = None,
    digits: tuple[int, int] = (0, 1),
) -> dict[str, np.ndarray]:
    """Binary digits (App. C.2, Fig. 9): one patch of each sequence is a real digit image,
    the other T-1 patches are Gaussian noise; the decoder u is a fixed linear classifier
    pre-trained on the two digits.

    The images of the two classes are split in half: one half fits the classifier
    (logistic regression without intercept, as the model has no bias), the other half
    supplies the signal patches, so the classifier never saw the digits it scores. u is
    scaled so that the median margin on its own training half is 1, which puts the signal
    scores on the same scale as Example 1's. The signal patch sits at a uniformly random
    position (the query included); noise patches are N(0, noise^2) per pixel. opt is the
    argmax of the scores, which is the signal patch unless noise outscores it (recorded in
    `signal` so the data report can count it).
    """
    from sklearn.linear_model import LogisticRegression

    check_sizes(n, T, 1)
    images, labels = _binary_digit_images(source, root, tuple(digits))
    order = rng.permutation(len(images))
    fit, pool = order[: len(order) // 2], order[len(order) // 2 :]
    if n > len(pool):
        raise DataError(
            f"binary digits ({source}, {digits}): n={n} sequences asked for, but only "
            f"{len(pool)} held-out images of digits {digits} exist"
        )
    classifier = LogisticRegression(fit_intercept=False, max_iter=5000)
    w = classifier.fit(images[fit], labels[fit]).coef_[0]
    u = w / np.median(labels[fit] * (images[fit] @ w))
    chosen = rng.choice(pool, size=n, replace=False)
    y = labels[chosen]
    d = images.shape[1]
    X = noise * rng.standard_normal((n, T, d))
    signal = rng.integers(0, T, size=n)
    X[np.arange(n), signal] = images[chosen]
    opt = np.argmax(token_scores(X, y, u), axis=1)
    return {"X": X, "y": y, "opt": opt, "u": u, "W0": np.zeros((d, d)), "signal": signal}
