"""The .npz codec of the file contract (data, svm and final-parameter files): arrays
written with their file's identity, the hypotheses report its job measured and one sha256
per entry, read back checked (never unpickling anything). See docs/file-contract.md."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np

from attnbias.svm.check import w_mm_defect
from attnbias.workflow.store import (
    FileContractError,
    canonical_json,
    check_identity,
    edited,
    rebuild_hint,
    unchecked,
    unreadable,
    write_with,
)

IDENTITY_KEY = "attnbias_identity"  # .npz entry: the file's identity as JSON
HYPOTHESES_KEY = "attnbias_hypotheses"  # .npz entry: the hypotheses its job measured
CHECKSUM_KEY = "attnbias_sha256"  # .npz entry: {entry: sha256 of its dtype, shape, bytes}
DATA_KEYS = ("X", "y", "opt", "W0")


def _report_array(report: dict) -> np.ndarray:
    """A report {name: float or bool} as one 0-d structured array: its names, their order
    and every value kept exactly (inf and NaN too, which strict JSON refuses)."""
    fields = [(name, np.asarray(value).dtype) for name, value in report.items()]
    return np.array(tuple(report.values()), dtype=fields)


def save_npz(
    path, arrays: dict[str, np.ndarray], ident: dict | None = None, hypotheses: dict | None = None
) -> None:
    """Write `arrays` (and the file's identity and the hypotheses report its job measured,
    where given) as an uncompressed .npz."""
    if ident is not None:
        arrays = {**arrays, IDENTITY_KEY: np.array(canonical_json(ident))}
    if hypotheses is not None:
        arrays = {**arrays, HYPOTHESES_KEY: _report_array(hypotheses)}
    arrays = {key: np.asarray(value) for key, value in arrays.items()}
    digests = {key: array_sha256(value) for key, value in arrays.items()}
    arrays[CHECKSUM_KEY] = np.array(canonical_json(digests))

    def write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    write_with(path, write)


def array_sha256(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes (C order): equal arrays, equal digests."""
    digest = hashlib.sha256(f"{np.lib.format.dtype_to_descr(array.dtype)}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).data if array.size else b"")
    return digest.hexdigest()


def _check_npz_checksums(path, entries: dict[str, np.ndarray], whole: bool) -> None:
    """Take the recorded digests out of `entries` and check every entry read against them
    (`whole`: every entry was read, so none may be missing)."""
    if CHECKSUM_KEY not in entries:
        raise unchecked(path)
    try:
        recorded = json.loads(str(entries.pop(CHECKSUM_KEY)))
    except ValueError:
        raise edited(path, f"its entry {CHECKSUM_KEY} is not the JSON its job wrote") from None
    for key, value in entries.items():
        if key not in recorded:
            raise edited(path, f"it holds the entry {key!r}, which its job did not write")
        if array_sha256(value) != recorded[key]:
            raise edited(path, f"the entry {key!r} differs from what its job wrote")
    missing = sorted(set(recorded) - set(entries)) if whole else []
    if missing:
        raise edited(path, f"it lacks the entries {missing}, which its job wrote")


def _read_npz(path, only: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The entries of an .npz file (those named in `only`, where given: the others are not
    read), never unpickling anything, each checked against the sha256 its writer recorded.
    An unreadable or edited file raises FileContractError naming it."""
    if Path(path).exists() and not zipfile.is_zipfile(path):  # np.load would try unpickling
        raise unreadable(path, "not a zip archive, which every .npz file is, or truncated")
    wanted = None if only is None else (*only, CHECKSUM_KEY)
    try:
        with np.load(path, allow_pickle=False) as f:
            entries = {key: f[key] for key in f.files if wanted is None or key in wanted}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, AttributeError) as err:
        raise unreadable(path, err) from None
    _check_npz_checksums(path, entries, whole=only is None)
    return entries


def _check_npz_identity(path, entries: dict[str, np.ndarray], expect: dict | None) -> None:
    """Take the identity out of `entries` and check it against `expect`."""
    found = entries.pop(IDENTITY_KEY, None)
    check_identity(path, None if found is None else json.loads(str(found)), expect)


def load_npz(
    path, required: tuple[str, ...] = (), expect: dict | None = None
) -> dict[str, np.ndarray]:
    """The arrays of an .npz file (never unpickling anything), its identity checked against
    `expect` where given. An unreadable file raises FileContractError naming it."""
    arrays = _read_npz(path)
    _check_npz_identity(path, arrays, expect)
    arrays.pop(HYPOTHESES_KEY, None)  # a report, not an array: load_hypotheses reads it
    missing = [key for key in required if key not in arrays]
    if missing:
        raise FileContractError(
            f"{path} lacks {missing}; it holds {sorted(arrays)}; {rebuild_hint(path)}"
        )
    return arrays


def load_data(path, expect: dict | None = None) -> dict[str, np.ndarray]:
    return load_npz(path, DATA_KEYS, expect)


def load_hypotheses(path, expect: dict | None = None) -> dict:
    """The hypotheses report that the job of a data or svm file stored in it (save_npz's
    `hypotheses`), as {name: float or bool}, without reading the file's arrays."""
    entries = _read_npz(path, (IDENTITY_KEY, HYPOTHESES_KEY))
    _check_npz_identity(path, entries, expect)
    if HYPOTHESES_KEY not in entries:
        raise FileContractError(
            f"{path} holds no hypotheses report (written by an older attnbias, before the "
            f"data and svm jobs stored theirs); {rebuild_hint(path)}"
        )
    stored = entries[HYPOTHESES_KEY]
    return {name: stored[name].item() for name in stored.dtype.names}


def seed_hypotheses(data_path, svm_path, expect: dict | None = None) -> dict:
    """One seed's hypotheses, as attnbias.data.hypotheses.report(data, svm) measures them: the
    data job's part, then the svm job's. `expect`: file -> identity, where checked."""
    expect = expect or {}
    return {
        **load_hypotheses(data_path, expect.get(data_path)),
        **load_hypotheses(svm_path, expect.get(svm_path)),
    }


def load_svm(path, data: dict[str, np.ndarray], expect: dict | None = None) -> dict:
    """An svm file, checked against its identity and against its data (attnbias.svm.check:
    W_mm is the max-margin solution of `data`)."""
    arrays = load_npz(path, ("W_mm",), expect)
    kkt = float(arrays.get("W_mm_kkt_residual", np.nan))
    defect = w_mm_defect(arrays["W_mm"], data, kkt)
    if defect:
        raise FileContractError(f"{path}: {defect}; {rebuild_hint(path)}")
    return arrays
