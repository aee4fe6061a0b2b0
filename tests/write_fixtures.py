"""Write every real-data fixture where config/tiny.yaml expects it.

    python tests/write_fixtures.py [DIR]     # default: the current directory

DIR/fixtures/data holds MNLI (jsonl), CivilComments (the WILDS folder), MNIST (IDX) and
CIFAR-10 (pickle batches); DIR/fixtures/tiny-bert a tiny BERT saved with save_pretrained.
All are tiny, synthetic and marked as fixtures: figures drawn from them say so.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures_text import fixture_vocab, write_civilcomments, write_mnli, write_tiny_bert  # noqa: E402
from fixtures_vision import write_cifar10, write_mnist  # noqa: E402


def write_all(workdir: Path) -> None:
    data = Path(workdir) / "fixtures" / "data"
    write_mnli(data, n_train=48, n_test=24, seed=0)
    write_civilcomments(data, n_train=48, n_test=32, seed=1)
    write_mnist(data, n_train=64, n_test=32, seed=2)
    write_cifar10(data, n_train=64, n_test=32, seed=3)
    write_tiny_bert(Path(workdir) / "fixtures" / "tiny-bert", fixture_vocab())


if __name__ == "__main__":
    write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
