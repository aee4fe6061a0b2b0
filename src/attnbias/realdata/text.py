"""What the text datasets of the BERT figures (Figs. 1, 4 and 10) share: one split as plain
Python and numpy objects, and where the data root is. The datasets themselves are in
`attnbias.realdata.mnli` and `attnbias.realdata.civilcomments`, BERT in
`attnbias.realdata.bert`.

Nothing is downloaded unless asked (`download=True` for CivilComments; a hub model name only
where the machine has a network and HF_HUB_OFFLINE is unset).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnbias.data.missing import MissingDataError

DATA_KEY = "real_data.data_root"


@dataclass
class TextSplit:
    """One split of a text dataset, as plain Python and numpy objects.

    texts: the first (or only) text of each example (MNLI: the premise).
    pairs: the second text (MNLI: the hypothesis), or None for single texts.
    labels: (n,) int64 class indices.
    metadata: (n, k) int64, WILDS' metadata rows (CivilComments only; what its eval needs).
    n_dropped: rows in the file that were left out (MNLI: no gold label, '-').
    """

    texts: list[str]
    pairs: list[str] | None
    labels: np.ndarray
    metadata: np.ndarray | None = None
    n_dropped: int = 0
    path: str = ""
    fixture: bool = False

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def premise(self) -> list[str]:
        return self.texts

    @property
    def hypothesis(self) -> list[str] | None:
        return self.pairs


def data_root(root: str | Path | None, dataset: str, how: str) -> Path:
    """The data root as a path; MissingDataError (saying `how` to get `dataset`) when unset."""
    if root is None or str(root) == "":
        raise MissingDataError(dataset, "(unset)", DATA_KEY, how)
    return Path(root).expanduser()
