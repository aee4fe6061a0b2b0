"""The error for data or weights that users supply and that are not where the config says.

Neutral ground: the synthetic data stage (fig9 on MNIST files, `attnbias.data.models`) and the
real-data code (`attnbias.realdata`) both raise it.
"""

from __future__ import annotations

from pathlib import Path


class MissingDataError(FileNotFoundError):
    """Data or weights are missing: the message names the dataset, the config key and how
    to get them."""

    def __init__(self, dataset: str, path: str | Path, key: str, how: str):
        self.dataset, self.path, self.key, self.how = dataset, Path(path), key, how
        super().__init__(f"{dataset}: not found at {path} (config key `{key}`). {how}")


class WrongFileError(MissingDataError):
    """A file is there but is not the one pinned (its SHA-256 differs): as good as missing,
    so it is listed with the missing items; the message names both digests."""

    def __init__(
        self, dataset: str, path: str | Path, key: str, how: str, *, expected: str, found: str
    ):
        self.expected, self.found = expected, found
        super().__init__(dataset, path, key, how)
        FileNotFoundError.__init__(
            self,
            f"{dataset}: {path} is not the pinned file (sha256 {found}, expected {expected}; "
            f"config key `{key}`). {how}",
        )


class ExtraFilesError(MissingDataError):
    """A pinned folder holds more than its pinned files: a loader reads the folder, not a
    list of files (transformers reads an added_tokens.json), so it is as good as missing;
    the message names each extra entry and the folder."""

    def __init__(self, dataset: str, path: str | Path, key: str, how: str, *, extra: list[str]):
        self.extra = list(extra)
        super().__init__(dataset, path, key, how)
        which = "which is" if len(self.extra) == 1 else "which are"
        FileNotFoundError.__init__(
            self,
            f"{dataset}: {path} holds {', '.join(self.extra)}, {which} not among its pinned "
            f"files (config key `{key}`). {how}",
        )
