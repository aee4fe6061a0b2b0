"""The store under every result file: atomic writes, file identities and the errors that
name a refused file with the command that rebuilds it. The codecs (attnbias.workflow.npz,
.parquet, and io's JSON and text) write through it; docs/file-contract.md is the contract."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from attnbias.workflow import file_kind


class FileContractError(ValueError):
    """A file that is not what its path says, or that cannot be read; names the file and
    how to rebuild it."""


def rebuild_hint(path) -> str:
    return (
        f"rebuild it with `snakemake --forcerun {path}` (add the --configfile and -c options "
        "of your build), which also reruns everything built from it"
    )


def canonical_json(value) -> str:
    """Strict JSON (NaN and inf refused), sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def config_sha256(config) -> str:
    """sha256 (hex) of the canonical JSON of `config`."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


def identity(
    kind: str, experiment: str, config, *, seed: int | None = None, optimizer: str | None = None
) -> dict:
    """What a file is: its kind (data, svm, run, final, metrics), experiment, seed and
    optimizer where it has them, and the sha256 of the config values that produced it."""
    out = {"kind": kind, "experiment": experiment}
    if seed is not None:
        out["seed"] = int(seed)
    if optimizer is not None:
        out["optimizer"] = optimizer
    out["config_sha256"] = config_sha256(config)
    return out


def _describe(ident: dict) -> str:
    return ", ".join(
        f"{k} {ident[k]}"
        for k in ("kind", "experiment", "setting", "optimizer", "seed")
        if k in ident
    )


def check_identity(path, found: dict | None, expect: dict | None) -> None:
    """Raise FileContractError unless the identity `found` in `path` is `expect`."""
    if expect is None:
        return
    if found is None:
        raise FileContractError(
            f"{path} records no identity (written by an older attnbias or another program), "
            f"so it cannot be checked against its path and the config; {rebuild_hint(path)}"
        )
    if found == expect:
        return
    what = _describe(found)
    if {k: v for k, v in found.items() if k != "config_sha256"} == {
        k: v for k, v in expect.items() if k != "config_sha256"
    }:
        reason = f"holds {what} but from another config than the current one"
    else:
        reason = f"holds {what}, but its path and the config call for {_describe(expect)}"
    raise FileContractError(f"{path} {reason}; {rebuild_hint(path)}")


def check_seed_identities(path, found: dict[int, dict | None], expect: list | None) -> None:
    """Raise FileContractError unless `path` holds exactly the seeds of `expect` (their
    identities, in seed order) and `found` (seed -> the identity stored for it) holds each
    seed's own: a changed seed count or an edited seed is refused by name."""
    if expect is None:
        return
    wanted = [ident["seed"] for ident in expect]
    if sorted(found) != wanted:
        raise FileContractError(
            f"{path} holds seeds {sorted(found)}, but its path and the config call for seeds "
            f"{wanted}; {rebuild_hint(path)}"
        )
    for ident in expect:
        check_identity(path, found[ident["seed"]], ident)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# tempfile.mkstemp's random part of a name: 8 of these characters (tempfile's
# _RandomNameSequence); atomic_path's temporary files are `.<name>.<random>.tmp`
_RANDOM = "[a-z0-9_]{8}"


def remove_leftovers(path: Path) -> list[Path]:
    """Remove the temporary files of `path` that atomic_path's writers left when killed
    (`.<name>.<8 random characters>.tmp`, regular files only: no link, no folder, no other
    name); return them. Only for a file with one writer at a time (see atomic_path)."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.{_RANDOM}\.tmp")
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            try:
                os.remove(entry.path)
            except FileNotFoundError:
                continue
            removed.append(Path(entry.path))
    return removed


@contextmanager
def atomic_path(path: str | os.PathLike, *, shared: bool = False):
    """Yield a temporary path beside `path`; rename it onto `path` only on success.

    A writer killed before its rename leaves its temporary file; the next write of `path`
    removes those (remove_leftovers), since a result file has one writer at a time
    (Snakemake runs one job per output, and its lock keeps another instance off it).
    `shared`: several processes may write `path` at once (a file of the data root that
    concurrent jobs extract), so a temporary file beside it may be in flight: kept."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not shared:
        remove_leftovers(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are for sharing
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_with(path, writer: Callable[[str], None]) -> None:
    with atomic_path(path) as tmp:
        writer(tmp)


def edited(path, what: str) -> FileContractError:
    return FileContractError(
        f"{path} was changed after its job wrote it ({what}), so it is not the result its "
        f"job computed and is not used; {rebuild_hint(path)}"
    )


def unreadable(path, err: Exception | str) -> FileContractError:
    why = err if isinstance(err, str) else f"{type(err).__name__}: {str(err).strip() or '?'}"
    return FileContractError(
        f"{path} cannot be read as a .{Path(path).suffix[1:]} file ({why}); it is damaged "
        f"or not what its name says; {rebuild_hint(path)}"
    )


def unchecked(path) -> FileContractError:
    return FileContractError(
        f"{path} records no checksum (written by an older attnbias or another program), "
        f"so an edit could not be told apart; {rebuild_hint(path)}"
    )


def _refusal(path):
    def refuse(kind: str) -> FileContractError:
        first = ", remove it first" if kind == "a directory" else ""  # a rename cannot replace it
        return unreadable(path, f"{kind}, not a regular file: not opened{first}")

    return refuse


def open_regular(path):
    """`path` opened for reading in binary, if it resolves to a regular file; anything else
    (a FIFO, device, directory or socket, or a link to one) raises FileContractError naming
    it, unopened: opening a FIFO waits for a writer, and /dev/zero never ends (file_kind)."""
    return file_kind.open_regular(path, _refusal(path))


def check_regular(path) -> Path:
    """open_regular's check alone, for a reader that opens the resolved path itself."""
    return file_kind.check_regular(path, _refusal(path))
