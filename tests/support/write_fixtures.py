"""Write every real-data fixture where config/tiny.yaml expects it.

    python tests/support/write_fixtures.py [DIR]     # default: the current directory

DIR/fixtures/data holds MNLI (jsonl), CivilComments (the WILDS folder), MNIST (IDX) and
CIFAR-10 (pickle batches); DIR/fixtures/tiny-bert a tiny BERT saved with save_pretrained.
All are tiny, synthetic and marked as fixtures: figures drawn from them say so.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures_text import (  # noqa: E402
    fixture_vocab,
    mnli_expected,
    write_civilcomments,
    write_mnli,
    write_tiny_bert,
)
from fixtures_vision import write_cifar10, write_mnist  # noqa: E402

# (train, test) samples and seed of each fixture dataset
SIZES = {
    "mnli": (48, 24, 0),
    "civilcomments": (48, 32, 1),
    "mnist": (64, 32, 2),
    "cifar10": (64, 32, 3),
}


def train_samples(dataset: str) -> int:
    """Training samples the loaders read from the fixture (MNLI drops its '-' rows)."""
    n_train, n_test, seed = SIZES[dataset]
    if dataset == "mnli":
        return len(mnli_expected(n_train, n_test, seed)["train"]["rows"])
    return n_train


def write_all(workdir: Path) -> None:
    data = Path(workdir) / "fixtures" / "data"
    writers = {
        "mnli": write_mnli,
        "civilcomments": write_civilcomments,
        "mnist": write_mnist,
        "cifar10": write_cifar10,
    }
    for name, (n_train, n_test, seed) in SIZES.items():
        writers[name](data, n_train=n_train, n_test=n_test, seed=seed)
    write_tiny_bert(Path(workdir) / "fixtures" / "tiny-bert", fixture_vocab())


if __name__ == "__main__":
    write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
