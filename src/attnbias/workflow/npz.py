"""The .npz codec of the file contract (data, svm and final-parameter files): arrays
written with their file's identity, the hypotheses report its job measured and one sha256
per entry, read back checked (never unpickling anything). See docs/file-contract.md."""

from __future__ import annotations

import hashlib
import json
import math
import os
import zipfile
from collections.abc import Callable

import numpy as np

from attnbias.workflow.store import (
    FileContractError,
    canonical_json,
    check_identity,
    check_seed_identities,
    edited,
    open_regular,
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


def _entries(arrays: dict, ident: dict | None, hypotheses: dict | None) -> dict:
    """`arrays`, with the identity and hypotheses report where given, and the sha256 of
    each of them in the entry CHECKSUM_KEY."""
    if ident is not None:
        arrays = {**arrays, IDENTITY_KEY: np.array(canonical_json(ident))}
    if hypotheses is not None:
        arrays = {**arrays, HYPOTHESES_KEY: _report_array(hypotheses)}
    arrays = {key: np.asarray(value) for key, value in arrays.items()}
    digests = {key: array_sha256(value) for key, value in arrays.items()}
    return {**arrays, CHECKSUM_KEY: np.array(canonical_json(digests))}


def _write_npz(path, entries: dict[str, np.ndarray]) -> None:
    def write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(fh, **entries)

    write_with(path, write)


def save_npz(
    path, arrays: dict[str, np.ndarray], ident: dict | None = None, hypotheses: dict | None = None
) -> None:
    """Write `arrays` (and the file's identity and the hypotheses report its job measured,
    where given) as an uncompressed .npz."""
    _write_npz(path, _entries(arrays, ident, hypotheses))


def array_sha256(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes (C order): equal arrays, equal digests."""
    digest = hashlib.sha256(f"{np.lib.format.dtype_to_descr(array.dtype)}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).data if array.size else b"")
    return digest.hexdigest()


def _check_npz_checksums(
    path, entries: dict[str, np.ndarray], whole: bool, where: str = ""
) -> None:
    """Take the recorded digests out of `entries` and check every entry read against them
    (`whole`: every entry was read, so none may be missing). `where`: "seed 3", naming the
    seed whose entries these are."""
    at = f"{where}: " if where else ""
    if CHECKSUM_KEY not in entries:
        raise unchecked(f"{path} ({where})" if where else path)
    try:
        recorded = json.loads(str(entries.pop(CHECKSUM_KEY)))
    except ValueError:
        raise edited(path, f"{at}its entry {CHECKSUM_KEY} is not the JSON its job wrote") from None
    for key, value in entries.items():
        if key not in recorded:
            raise edited(path, f"{at}it holds the entry {key!r}, which its job did not write")
        if array_sha256(value) != recorded[key]:
            raise edited(path, f"{at}the entry {key!r} differs from what its job wrote")
    missing = sorted(set(recorded) - set(entries)) if whole else []
    if missing:
        raise edited(path, f"{at}it lacks the entries {missing}, which its job wrote")


def _load_entries(path, keep: Callable[[str], object]) -> dict[str, np.ndarray]:
    """The entries of an .npz file whose names `keep` accepts (the others are not read),
    never unpickling anything; an unreadable file raises FileContractError naming it."""
    try:
        with open_regular(path) as fh:
            if not zipfile.is_zipfile(fh):  # np.load would try unpickling
                raise unreadable(path, "not a zip archive, which every .npz file is, or truncated")
            _check_member_sizes(path, fh, keep)
            fh.seek(0)
            with np.load(fh, allow_pickle=False) as f:
                return {key: f[key] for key in f.files if keep(key)}
    except (FileNotFoundError, FileContractError):
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, AttributeError) as err:
        raise unreadable(path, err) from None


# the .npy header readers by format version; 3.0 differs from 2.0 only in its header's
# encoding (utf-8 field names), which leaves the shape and item size as 2.0 reads them
_HEADERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
    (3, 0): np.lib.format.read_array_header_2_0,
}


# What a member may expand to, read from what the file holds (the zip directory's sizes are
# the writer's word, and a hostile writer's lie): our writers store every member (ratio 1);
# numbers stored as floats seldom deflate past 10x, while a deflated run of zeros reaches
# ~1000x (1.2 GB from a 1.17 MB file). Stored or not, every member of an archive together
# is bounded by the file's size times MAX_RATIO, and by MAX_INFLATED for deflated bytes.
MAX_RATIO = 100  # a compressed member's size over its compressed size
MAX_INFLATED = 4 << 30  # bytes all compressed members of one archive may expand to


def _check_member_sizes(path, fh, keep: Callable[[str], object]) -> None:
    """Refuse, before numpy allocates anything, an archive whose members claim more than the
    file holds: compressed sizes past the file's size (in all, so that no two members share
    bytes), a member expanding past MAX_RATIO times its compressed size or the deflated ones
    past MAX_INFLATED in all, or a kept member whose .npy header claims more bytes than the
    member holds (numpy allocates what a header claims before reading any of it: a header
    claiming 10**12 floats ends in MemoryError)."""
    size = os.fstat(fh.fileno()).st_size
    with zipfile.ZipFile(fh) as archive:
        infos = archive.infolist()
        _check_archive_sizes(path, size, infos)
        for info in infos:
            key = info.filename.removesuffix(".npy")
            if info.filename.endswith(".npy") and keep(key):
                _check_npy_header(path, archive, info, key)


def _check_archive_sizes(path, size: int, infos: list[zipfile.ZipInfo]) -> None:
    """The sizes the zip directory claims, against the bytes the file holds."""
    compressed = sum(info.compress_size for info in infos)
    if compressed > size:
        raise unreadable(
            path,
            f"its zip directory claims {compressed} bytes of members in a file of {size} "
            "(members sharing bytes, or a directory that lies)",
        )
    inflated = 0
    for info in infos:
        key = info.filename.removesuffix(".npy")
        if info.compress_type == zipfile.ZIP_STORED:
            cap, how = info.compress_size, "stored"
        else:
            cap, how = info.compress_size * MAX_RATIO, f"at most {MAX_RATIO}x its compressed"
            inflated += info.file_size
        if info.file_size > cap:
            raise unreadable(
                path,
                f"its entry {key!r} claims {info.file_size} bytes from {info.compress_size} "
                f"compressed ({how} size: a zip bomb, or a directory that lies about its size)",
            )
    if inflated > MAX_INFLATED:
        raise unreadable(
            path,
            f"its compressed entries claim {inflated} bytes in all, past the {MAX_INFLATED} "
            "an .npz of this project may expand to",
        )


def _check_npy_header(path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, key: str) -> None:
    """A member's .npy header must claim no more data than the member holds."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version not in _HEADERS:
            raise unreadable(path, f"its entry {key!r} has .npy format {version}")
        shape, _, dtype = _HEADERS[version](member)
        held = info.file_size - member.tell()
    if dtype.hasobject:  # refused unread by np.load's allow_pickle=False
        return
    claimed = math.prod(shape) * dtype.itemsize
    if claimed > held:
        raise unreadable(path, f"its entry {key!r} claims {claimed} bytes of data but holds {held}")


def _read_npz(path, only: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The entries of an .npz file (those named in `only`, where given), each checked
    against the sha256 its writer recorded. An edited file raises FileContractError."""
    wanted = None if only is None else (*only, CHECKSUM_KEY)
    entries = _load_entries(path, lambda key: wanted is None or key in wanted)
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


# ---- files with a seed axis: one group of entries per seed, each checked on its own -----
# A data, svm or final-parameter file holds every seed of its job: seed s's entries are
# those above, named `seed{s}/<entry>` (its own identity, hypotheses and checksum entry),
# so an edited or foreign seed is refused by its number.


def _seed_prefix(seed: int) -> str:
    return f"seed{int(seed)}/"


def save_seeds(
    path,
    arrays: dict[int, dict[str, np.ndarray]],
    identities: dict[int, dict],
    hypotheses: dict[int, dict] | None = None,
) -> None:
    """Write each seed's `arrays` with its identity (and hypotheses report) as one .npz."""
    entries = {}
    for seed, seed_arrays in arrays.items():
        report = None if hypotheses is None else hypotheses[seed]
        for key, value in _entries(seed_arrays, identities[seed], report).items():
            entries[_seed_prefix(seed) + key] = value
    _write_npz(path, entries)


def _read_seeds(path, only: tuple[str, ...] | None = None) -> dict[int, dict[str, np.ndarray]]:
    """Each seed's entries (those named in `only`, where given), checked against the
    sha256s its writer recorded for that seed."""
    wanted = None if only is None else (*only, CHECKSUM_KEY)
    groups: dict[int, dict[str, np.ndarray]] = {}
    for name, value in _load_entries(path, lambda name: _seed_entry(name, wanted)).items():
        seed, key = _seed_entry(name, None)
        groups.setdefault(seed, {})[key] = value
    for seed, entries in groups.items():
        _check_npz_checksums(path, entries, whole=only is None, where=f"seed {seed}")
    return dict(sorted(groups.items()))


def _seed_entry(name: str, wanted) -> tuple[int, str] | None:
    """(seed, entry) of an entry named `seed{s}/<entry>`; None for any other name, or an
    entry not `wanted`."""
    head, _, key = name.partition("/")
    if not (head.startswith("seed") and head[4:].isdigit() and key):
        return None
    return (int(head[4:]), key) if wanted is None or key in wanted else None


def load_seeds(
    path, required: tuple[str, ...] = (), expect: list[dict] | None = None
) -> dict[int, dict[str, np.ndarray]]:
    """{seed: its arrays} of a file with a seed axis; with `expect` (the identity of each
    seed, in seed order), the file must hold exactly those seeds, each its own identity."""
    groups = _read_seeds(path)
    for seed, arrays in groups.items():
        _check_seed(path, seed, arrays, required)
    _check_seed_identities(path, groups, expect)
    return groups


def _check_seed(path, seed: int, arrays: dict, required: tuple[str, ...]) -> None:
    arrays.pop(HYPOTHESES_KEY, None)  # a report, not an array: load_hypotheses reads it
    missing = [key for key in required if key not in arrays]
    if missing:
        raise FileContractError(
            f"{path}: seed {seed} lacks {missing}; it holds {sorted(arrays)}; {rebuild_hint(path)}"
        )


def _check_seed_identities(path, groups: dict[int, dict], expect: list[dict] | None) -> None:
    """Take each seed's identity out of `groups` and check it against `expect`."""
    found = {
        seed: None if IDENTITY_KEY not in entries else json.loads(str(entries.pop(IDENTITY_KEY)))
        for seed, entries in groups.items()
    }
    check_seed_identities(path, found, expect)


def load_data(path, expect: list[dict] | None = None) -> dict[int, dict[str, np.ndarray]]:
    """{seed: X, y, opt, W0[, u]} of a data file."""
    return load_seeds(path, DATA_KEYS, expect)


def load_hypotheses(path, expect: list[dict] | None = None) -> dict[int, dict]:
    """{seed: the hypotheses report its job stored (save_seeds' `hypotheses`)} of a data or
    svm file, as {name: float or bool}, without reading the file's arrays."""
    groups = _read_seeds(path, (IDENTITY_KEY, HYPOTHESES_KEY))
    _check_seed_identities(path, groups, expect)
    reports = {}
    for seed, entries in groups.items():
        if HYPOTHESES_KEY not in entries:
            raise FileContractError(
                f"{path}: seed {seed} holds no hypotheses report (written by an older "
                f"attnbias, before the data and svm jobs stored theirs); {rebuild_hint(path)}"
            )
        stored = entries[HYPOTHESES_KEY]
        reports[seed] = {name: stored[name].item() for name in stored.dtype.names}
    return reports


def hypotheses_by_seed(data_path, svm_path, expect: dict | None = None) -> list[dict]:
    """Each seed's hypotheses, as attnbias.data.hypotheses.report(data, svm) measures them:
    the data job's part, then the svm job's. `expect`: file -> its seeds' identities."""
    expect = expect or {}
    data = load_hypotheses(data_path, expect.get(data_path))
    svm = load_hypotheses(svm_path, expect.get(svm_path))
    return [{**data[seed], **svm[seed]} for seed in data]
