"""Text data for the BERT figures (Figs. 1, 4 and 10): MNLI and CivilComments from where
users keep them, the BERT tokenizer and classifier, and the tokenized tensors a training
loop batches.

Layouts under the data root (config key `real_data.data_root`):
- MNLI, either the official MultiNLI 1.0 zip, unzipped:
  `multinli_1.0/multinli_1.0_{train,dev_matched}.jsonl`, or GLUE's copy:
  `MNLI/{train,dev_matched}.tsv` (the official one wins where both are present).
  Split "test" is the matched validation set, as usual for MNLI.
- CivilComments, as WILDS keeps it: `civilcomments_v1.0/RELEASE_v1.0.txt` and
  `civilcomments_v1.0/all_data_with_identities.csv`, read by the `wilds` package itself.

Nothing is downloaded unless asked (`download=True` for WILDS; a hub model name only where
the machine has a network and HF_HUB_OFFLINE is unset).
"""

from __future__ import annotations

import csv
import importlib.machinery
import importlib.util
import json
import os
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnbias.realdata.errors import MissingDataError, is_fixture

DATA_KEY = "real_data.data_root"
MODEL_KEY = "real_data.models.bert"

MNLI_LABELS = ("entailment", "neutral", "contradiction")  # -> 0, 1, 2
MNLI_SPLITS = ("train", "test")
# layout -> (folder under the data root, split -> file); the official layout is tried first
_MNLI_FILES = {
    "jsonl": (
        "multinli_1.0",
        {"train": "multinli_1.0_train.jsonl", "test": "multinli_1.0_dev_matched.jsonl"},
    ),
    "tsv": ("MNLI", {"train": "train.tsv", "test": "dev_matched.tsv"}),
}
_MNLI_HOW = (
    "Download the MultiNLI 1.0 zip, https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip, "
    "and unzip it into the data root (giving multinli_1.0/multinli_1.0_train.jsonl and "
    "multinli_1.0/multinli_1.0_dev_matched.jsonl), or GLUE's MNLI, "
    "https://dl.fbaipublicfiles.com/glue/data/MNLI.zip (giving MNLI/train.tsv and "
    "MNLI/dev_matched.tsv)."
)

CIVIL_DIR = "civilcomments_v1.0"
CIVIL_FILES = ("RELEASE_v1.0.txt", "all_data_with_identities.csv")
CIVIL_SPLITS = ("train", "val", "test")
_CIVIL_HOW = (
    "Download the WILDS archive (https://worksheets.codalab.org/rest/bundles/"
    "0x8cd3de0634154aeaad2ee6eb96723c6e/contents/blob/, see https://wilds.stanford.edu/downloads) "
    "and unpack it into <data root>/civilcomments_v1.0/ (RELEASE_v1.0.txt and "
    "all_data_with_identities.csv), or set `real_data.download: true` on a machine with a "
    "network to let WILDS fetch it (about 90 MB)."
)


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


# ---------------------------------------------------------------------------------------
# Where the data are


def _root(root: str | Path | None, dataset: str, how: str) -> Path:
    if root is None or str(root) == "":
        raise MissingDataError(dataset, "(unset)", DATA_KEY, how)
    return Path(root).expanduser()


def _mnli_layout(root: Path) -> tuple[str, Path] | None:
    """The first layout whose two files both exist, with its folder."""
    for layout, (folder, files) in _MNLI_FILES.items():
        if all((root / folder / f).is_file() for f in files.values()):
            return layout, root / folder
    return None


def text_source(name: str, root: str | Path | None) -> dict:
    """Where text dataset `name` ("mnli" or "civilcomments") is under `root`, checked cheaply
    (files exist; nothing is read). Returns a JSON-ready dict: path (the dataset folder),
    fixture (written by the test suite), files (the data files), layout ("jsonl", "tsv" or
    "wilds"). Raises MissingDataError naming the dataset, the config key and how to get it.
    """
    if name == "mnli":
        base = _root(root, "MNLI", _MNLI_HOW)
        found = _mnli_layout(base)
        if found is None:
            expected = [
                str(base / d / f) for d, files in _MNLI_FILES.values() for f in files.values()
            ]
            raise MissingDataError(
                "MNLI", base, DATA_KEY, f"{_MNLI_HOW} Looked for: {', '.join(expected)}."
            )
        layout, folder = found
        files = [str(folder / f) for f in _MNLI_FILES[layout][1].values()]
        return {
            "path": str(folder),
            "fixture": is_fixture(folder),
            "files": files,
            "layout": layout,
        }
    if name == "civilcomments":
        base = _root(root, "CivilComments", _CIVIL_HOW)
        folder = base / CIVIL_DIR
        missing = [f for f in CIVIL_FILES if not (folder / f).is_file()]
        if missing:
            raise MissingDataError(
                "CivilComments (WILDS)",
                folder,
                DATA_KEY,
                f"Missing {', '.join(missing)}. {_CIVIL_HOW}",
            )
        files = [str(folder / f) for f in CIVIL_FILES]
        return {
            "path": str(folder),
            "fixture": is_fixture(folder),
            "files": files,
            "layout": "wilds",
        }
    raise ValueError(f"unknown text dataset {name!r}; choose 'mnli' or 'civilcomments'")


# ---------------------------------------------------------------------------------------
# MNLI


def _mnli_jsonl(path: Path) -> Iterator[tuple[str, str, str]]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                yield row["sentence1"], row["sentence2"], row["gold_label"]


def _mnli_tsv(path: Path) -> Iterator[tuple[str, str, str]]:
    # GLUE's files are unquoted: sentences hold bare '"' characters, so csv must not
    # interpret quotes (pandas' default reader silently merges lines here).
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        try:
            i1, i2, il = (header.index(c) for c in ("sentence1", "sentence2", "gold_label"))
        except ValueError:
            raise ValueError(
                f"{path}: header lacks sentence1, sentence2 or gold_label: {header}"
            ) from None
        for lineno, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise ValueError(
                    f"{path}:{lineno}: {len(row)} fields where the header has {len(header)}"
                )
            yield row[i1], row[i2], row[il]


def load_mnli(root: str | Path | None, split: str) -> TextSplit:
    """MNLI's "train" or "test" (matched validation) split from either layout under `root`.

    Labels entailment/neutral/contradiction -> 0/1/2; rows without a gold label ('-', no
    annotator majority) are dropped and counted in `n_dropped`.
    """
    if split not in MNLI_SPLITS:
        raise ValueError(f"MNLI split {split!r}: choose one of {MNLI_SPLITS}")
    source = text_source("mnli", root)
    layout = source["layout"]
    path = Path(source["path"]) / _MNLI_FILES[layout][1][split]
    rows = _mnli_jsonl(path) if layout == "jsonl" else _mnli_tsv(path)
    index = {name: i for i, name in enumerate(MNLI_LABELS)}
    premise, hypothesis, labels, dropped = [], [], [], 0
    for s1, s2, gold in rows:
        if gold == "-":
            dropped += 1
            continue
        if gold not in index:
            raise ValueError(f"{path}: unknown gold label {gold!r}; expected {MNLI_LABELS} or '-'")
        premise.append(s1)
        hypothesis.append(s2)
        labels.append(index[gold])
    return TextSplit(
        texts=premise,
        pairs=hypothesis,
        labels=np.asarray(labels, dtype=np.int64),
        n_dropped=dropped,
        path=str(path),
        fixture=source["fixture"],
    )


# ---------------------------------------------------------------------------------------
# CivilComments through WILDS


def _stub_module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, loader=None, is_package=True)
    module.__path__ = []
    module.__dict__.update(attrs)
    return module


def _needs_torchvision(*_args, **_kwargs):
    raise RuntimeError(
        "attnbias loaded wilds without torchvision: its detection metrics (box_iou, nms, "
        "box_convert, Matcher) are not available. CivilComments does not use them."
    )


@contextmanager
def _torchvision_stub() -> Iterator[None]:
    """Satisfy the four torchvision names wilds 2.0's metrics module imports at module level
    (`wilds.common.metrics.all_metrics`), for as long as wilds loads, then remove them.

    Only CivilComments' accuracy is used, which needs none of them. The stub must not stay:
    transformers imports torchvision whenever `import torchvision` would succeed. Where a
    real torchvision is installed it is used instead.
    """
    if "torchvision" in sys.modules or importlib.util.find_spec("torchvision") is not None:
        yield
        return
    stubs = {
        "torchvision": {},
        "torchvision.ops": {"nms": _needs_torchvision, "box_convert": _needs_torchvision},
        "torchvision.ops.boxes": {"box_iou": _needs_torchvision},
        "torchvision.models": {},
        "torchvision.models.detection": {},
        "torchvision.models.detection._utils": {"Matcher": _needs_torchvision},
    }
    for name, attrs in stubs.items():
        sys.modules[name] = _stub_module(name, **attrs)
    try:
        yield
    finally:
        for name in stubs:
            sys.modules.pop(name, None)


@contextmanager
def _no_version_check() -> Iterator[None]:
    """wilds starts a thread that asks PyPI for its latest version when imported (through
    `outdated`, with no timeout): hide `outdated` while wilds loads so no request is made."""
    saved = sys.modules.get("outdated", False)
    sys.modules["outdated"] = None  # makes `from outdated import ...` raise ImportError
    try:
        yield
    finally:
        if saved is False:
            sys.modules.pop("outdated", None)
        else:
            sys.modules["outdated"] = saved


def _import_wilds():
    """Import wilds and its CivilComments module (once) without torchvision."""
    import pandas as pd

    if int(pd.__version__.split(".")[0]) >= 3:
        raise RuntimeError(
            f"wilds 2.0's CivilComments loader fails under pandas {pd.__version__} "
            "(\"Invalid value '0' for dtype 'str'\"); install pandas<3."
        )
    try:
        with _torchvision_stub(), _no_version_check():
            import wilds
            import wilds.common.metrics.all_metrics  # noqa: F401  (the torchvision import)
            import wilds.datasets.civilcomments_dataset  # noqa: F401
    except ImportError as err:
        raise ImportError(
            f"CivilComments needs the `wilds` package ({err}). Install it without its "
            "torchvision dependency: `pip install -c constraints.txt --no-deps wilds==2.0.0 "
            "ogb outdated littleutils`."
        ) from err
    return wilds


def scatter(src, index, dim=-1, out=None, dim_size=None, reduce="sum"):
    """`torch_scatter.scatter` for 1-D inputs and reduce "sum" or "mean", in plain torch:
    the only use wilds makes of torch_scatter (`avg_over_groups`). As in torch_scatter, an
    empty group's mean is 0."""
    if src.dim() != 1 or index.dim() != 1 or dim not in (0, -1) or out is not None:
        raise NotImplementedError("only 1-D scatter without `out` is implemented")
    if reduce not in ("sum", "mean"):
        raise NotImplementedError(f"reduce={reduce!r}: only 'sum' and 'mean' are implemented")
    size = int(index.max()) + 1 if dim_size is None else dim_size
    total = torch.zeros(size, dtype=src.dtype, device=src.device).index_add_(0, index, src)
    if reduce == "sum":
        return total
    count = torch.zeros(size, dtype=src.dtype, device=src.device)
    count.index_add_(0, index, torch.ones_like(src))
    return total / count.clamp(min=1)


@contextmanager
def _torch_scatter_stub() -> Iterator[None]:
    """Provide `torch_scatter.scatter` (above) while WILDS evaluates, unless the real package
    is installed; wilds imports it inside `avg_over_groups` at call time."""
    if "torch_scatter" in sys.modules or importlib.util.find_spec("torch_scatter") is not None:
        yield
        return
    sys.modules["torch_scatter"] = _stub_module("torch_scatter", scatter=scatter)
    try:
        yield
    finally:
        sys.modules.pop("torch_scatter", None)


class CivilComments:
    """WILDS' CivilComments: its splits as `TextSplit`s and its own evaluation (average and
    worst-group accuracy over the 16 groups (identity, label) with the identity present)."""

    def __init__(self, dataset, path: str, fixture: bool):
        self.dataset, self.path, self.fixture = dataset, path, fixture

    def split(self, name: str) -> TextSplit:
        """ "train", "val" or "test": texts, labels (toxicity >= 0.5) and WILDS' metadata."""
        if name not in CIVIL_SPLITS:
            raise ValueError(f"CivilComments split {name!r}: choose one of {CIVIL_SPLITS}")
        idx = self.dataset.get_subset(name).indices
        texts = [self.dataset.get_input(i) for i in idx]
        # An empty comment reads back from the csv as NaN.
        texts = [t if isinstance(t, str) else "" for t in texts]
        return TextSplit(
            texts=texts,
            pairs=None,
            labels=self.dataset.y_array[idx].numpy().astype(np.int64),
            metadata=self.dataset.metadata_array[idx].numpy().astype(np.int64),
            path=self.path,
            fixture=self.fixture,
        )

    def evaluate(self, y_pred, split: TextSplit) -> tuple[dict[str, float], str]:
        """WILDS' `dataset.eval` on predictions for every row of `split`, in order.

        y_pred: (n,) predicted labels, or (n, 2) logits (argmax taken).
        Returns (results, summary): results holds "acc_avg" (accuracy), "acc_wg" (worst-group
        accuracy) and each group's accuracy and count; summary is WILDS' printout.
        """
        y_pred = torch.as_tensor(np.asarray(y_pred))
        if y_pred.dim() == 2:
            y_pred = y_pred.argmax(dim=1)
        if len(y_pred) != len(split):
            raise ValueError(f"{len(y_pred)} predictions for a split of {len(split)} rows")
        with _torch_scatter_stub():
            results, summary = self.dataset.eval(
                y_pred.long(), torch.as_tensor(split.labels), torch.as_tensor(split.metadata)
            )
        return {k: float(v) for k, v in results.items()}, summary

    def evaluator(self, split: TextSplit) -> Callable[[torch.Tensor, torch.Tensor], dict]:
        """(predictions, labels) -> {"acc_avg", "acc_wg"} for `split`, checking that the labels
        are the split's own (the metadata rows must line up with the predictions)."""

        def evaluate(y_pred: torch.Tensor, y_true: torch.Tensor) -> dict[str, float]:
            if not np.array_equal(np.asarray(y_true.cpu()), split.labels):
                raise ValueError("labels differ from the split's: predictions out of order?")
            results, _ = self.evaluate(y_pred.cpu(), split)
            return {"acc_avg": results["acc_avg"], "acc_wg": results["acc_wg"]}

        return evaluate


def load_civilcomments(root: str | Path | None, *, download: bool = False) -> CivilComments:
    """CivilComments through `wilds.get_dataset(dataset="civilcomments", ...)` from
    `<root>/civilcomments_v1.0/`. With download=False a missing folder raises
    MissingDataError; with download=True WILDS fetches it (needs a network)."""
    if download:
        base = _root(root, "CivilComments (WILDS)", _CIVIL_HOW)
        path, fixture = str(base / CIVIL_DIR), is_fixture(base / CIVIL_DIR)
    else:
        source = text_source("civilcomments", root)
        base, path, fixture = Path(source["path"]).parent, source["path"], source["fixture"]
    wilds = _import_wilds()
    dataset = wilds.get_dataset(dataset="civilcomments", root_dir=str(base), download=download)
    return CivilComments(dataset, path, fixture)


# ---------------------------------------------------------------------------------------
# BERT


def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE asks for no network."""
    flags = (os.environ.get(k, "") for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return any(v.strip().lower() in ("1", "true", "yes", "on") for v in flags)


def _model_missing(name: str, why: str, *, local: bool) -> MissingDataError:
    """The error for a model that is not there; `local`: `name` is a folder, not a hub name."""
    hub = "bert-base-uncased" if local else name
    target = name if local else f"models/{hub.split('/')[-1]}"
    how = (
        f"{why} Fetch the weights once on a machine with a network: `hf download {hub} "
        f"--local-dir {target}` (older huggingface_hub: `huggingface-cli download {hub} "
        f"--local-dir {target}`), or in Python `AutoTokenizer.from_pretrained('{hub}')"
        f".save_pretrained('{target}')` and `AutoModel.from_pretrained('{hub}')"
        f".save_pretrained('{target}')`; then set `{MODEL_KEY}: {target}`. Offline, a hub "
        "name is found only in the Hugging Face cache (~/.cache/huggingface)."
    )
    return MissingDataError(f"BERT model {name!r}", name, MODEL_KEY, how)


def _looks_like_path(name: str) -> bool:
    return os.path.isabs(name) or name.startswith(("./", "../", "~", ".\\", "..\\"))


def load_text_model(name_or_path: str, num_labels: int, *, seed: int | None = None):
    """(tokenizer, AutoModelForSequenceClassification) from a local `save_pretrained` folder,
    or a hub name: from the local cache first, then (unless HF_HUB_OFFLINE) the hub.

    The classification head is new (random); `seed` makes it reproducible without touching
    the global random state. Raises MissingDataError naming the model, the config key
    `real_data.models.bert` and how to get the weights.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    def load(source: str, local_only: bool):
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
            model = AutoModelForSequenceClassification.from_pretrained(
                source, num_labels=num_labels, local_files_only=local_only
            )
        return tokenizer, model

    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise _model_missing(str(path), f"The folder {path} holds no config.json.", local=True)
        return load(str(path), local_only=True)
    if path.exists() or _looks_like_path(name_or_path):
        raise _model_missing(name_or_path, f"No model folder at {path}.", local=True)
    try:  # a hub name: the local cache first, so an offline machine never waits on retries
        return load(name_or_path, local_only=True)
    except OSError as err:
        if hub_offline():
            raise _model_missing(
                name_or_path,
                f"Not in the Hugging Face cache and HF_HUB_OFFLINE is set ({err}).",
                local=False,
            ) from None
    try:
        return load(name_or_path, local_only=False)
    except OSError as err:
        raise _model_missing(
            name_or_path, f"The hub could not be reached ({err}).", local=False
        ) from None


def tokenize_split(
    tokenizer, split: TextSplit, max_length: int, *, chunk: int = 8192
) -> dict[str, torch.Tensor]:
    """The split as equally long int64 tensors: input_ids, attention_mask, token_type_ids (each
    (n, max_length): truncated to max_length, pairs "longest first", and padded to it) and
    labels (n,). Tokenized in chunks, so peak memory stays near the tensors' own size."""
    n = len(split)
    ids = np.full((n, max_length), tokenizer.pad_token_id, dtype=np.int64)
    types = np.zeros((n, max_length), dtype=np.int64)
    mask = np.zeros((n, max_length), dtype=np.int64)
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        # unpadded lists, padded here: twice as fast as the tokenizer's own padding to numpy
        enc = tokenizer(
            split.texts[start:stop],
            split.pairs[start:stop] if split.pairs is not None else None,
            truncation=True,
            max_length=max_length,
            return_token_type_ids=True,
            return_attention_mask=False,
        )
        for row, (tok_ids, tok_types) in enumerate(
            zip(enc["input_ids"], enc["token_type_ids"], strict=True), start=start
        ):
            ids[row, : len(tok_ids)] = tok_ids
            types[row, : len(tok_ids)] = tok_types
            mask[row, : len(tok_ids)] = 1
    out = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    out = {k: torch.from_numpy(v) for k, v in out.items()}
    out["labels"] = torch.from_numpy(np.asarray(split.labels, dtype=np.int64).copy())
    return out
