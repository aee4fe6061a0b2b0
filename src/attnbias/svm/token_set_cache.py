"""A token set's SVMs solved once, shared by every job that meets it.

Where u trains, a geometry run's measures are taken against the SVMs of the tokens optimal
under its own decoder (training.geometry_measures), and every optimizer of the experiment,
and every value of a robustness constant that retrains it, tends to meet the same few token
sets. Each such (dataset, token set, norm) is solved once per results folder and kept in a
content-addressed entry beside the svm-geometry files (results/svm_geometry/token_sets/):

  key    sha256 of everything the answer depends on: the entry's kind (a W-SVM's canonical
         point and its duals, or a face probe of a given W*, with the duals it read where
         given), the norm, the dataset's tokens X, its queries
         (x_{i,1}, or Z for cross-attention) and the token set opt (the solver's whole
         input: the constraint arrays are a function of them), and the solver's version
         (solver_version: the svm package's source, where every solve runs, and the
         numerical libraries' versions). A changed token set, norm, dataset, solver code or
         library misses.
  write  a temporary file in the same folder, then os.replace: atomic on POSIX, so a
         parallel job reads the whole entry or none; two jobs that solve the same set at
         once write the same bytes (the solve is deterministic), the last rename wins.
  read   an entry is used only if it loads, names its own key (a foreign file copied or
         renamed into place is refused), its payload matches the digest stored with it,
         and, for a W-SVM, its solution and duals pass the KKT check again
         (svm.norms.optimality_defect, as every reader of an svm-geometry file). Anything
         else is refused with a line in the job's log, solved again and overwritten.

An entry is a pure function of its key, so a build reads the same numbers whether a set was
solved in this job or another (the tests compare them bit for bit). Without a shared file
system between jobs (a cluster without one) each job keeps its own entries and solves as
before. The folder can be deleted at any time; it is rebuilt as the jobs need it. A folder
that cannot be written (a read-only results folder) only costs the solves: the job logs it
and goes on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from attnbias.model.queries import queries_of
from attnbias.source_digest import source_digest
from attnbias.svm import norms as svm_norms
from attnbias.svm.geometry import solve_w
from attnbias.svm.norm_values import parse_norm
from attnbias.svm.uniqueness import face_cosine, needs_probe

FORMAT = "attnbias-token-set-svm/1"
# the libraries whose rounding the solutions carry
LIBRARIES = ("numpy", "scipy", "cvxpy", "clarabel")
# the folder's name beside the svm-geometry files
FOLDER = "token_sets"
SVM_PACKAGE = Path(__file__).resolve().parent
# the package modules outside svm/ that a solve runs (the queries of cross-attention, the
# l_p norms' spellings, the C simplex's build): hashed with it (tests/svm/test_token_set_cache.py
# checks the list)
OUTSIDE_SVM = ("c_library.py", "model/__init__.py", "model/queries.py", "optim/__init__.py",
               "optim/lp_norm.py")  # fmt: skip


def solver_sources() -> list[Path]:
    """The source files a solve runs: the svm package (its C source too) and OUTSIDE_SVM."""
    package = SVM_PACKAGE.parent
    own = [*SVM_PACKAGE.glob("*.py"), *SVM_PACKAGE.glob("*.c")]
    return sorted(own) + [package / p for p in OUTSIDE_SVM]


@cache
def solver_version() -> str:
    """sha256 of the sources a solve runs (solver_sources: tests/svm/test_token_set_cache.py
    checks they are all) and of the numerical libraries' versions."""
    return source_digest(solver_sources(), SVM_PACKAGE.parent, LIBRARIES)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _array_bytes(array: np.ndarray, dtype) -> bytes:
    array = np.ascontiguousarray(array, dtype=dtype)
    return f"{array.dtype.str}{array.shape}".encode() + array.tobytes()


def entry_key(kind: str, norm: str, X, opt, *extra: np.ndarray) -> str:
    """The content address of one entry (module doc); `extra`: more float arrays it depends
    on (the queries, x_{i,1} or the data's Z; a face probe's W*)."""
    digest = hashlib.sha256()
    for part in (FORMAT, kind, parse_norm(norm).name, solver_version()):
        digest.update(part.encode() + b"\0")
    digest.update(_array_bytes(X, np.float64) + _array_bytes(opt, np.int64))
    for array in extra:
        digest.update(_array_bytes(array, np.float64))
    return digest.hexdigest()


def _payload_digest(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        digest.update(name.encode() + b"\0" + _array_bytes(arrays[name], np.float64))
    return digest.hexdigest()


@dataclass
class TokenSetCache:
    """Token sets' W-SVMs (their canonical points) and face probes, kept in this
    process's memory and read from `folder` where an earlier job solved them, else solved
    and written there (module doc); `folder` None: memory only. `counts`: how many entries
    were solved, read from the folder, refused there, and found in memory (what the tests
    and the job's log read)."""

    folder: Path | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("solved", "reused", "refused", "remembered"), 0)
    )
    _memory: dict[str, dict] = field(default_factory=dict, repr=False)

    def w_star(self, data: dict, norm: str, name: str) -> np.ndarray:
        """The canonical W-SVM solution in `norm` of `data`'s tokens X and token set opt
        (svm.geometry.solve_w), its KKT conditions certified wherever it was read."""
        return self.w_svm(data, norm, name)[0]

    def w_svm(self, data: dict, norm: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(W*, its duals): w_star's solution and the SVM's duals stored with it, the pair
        certified by the KKT check wherever it was read (what face_cosine's probe reads)."""
        X, opt, Z = data["X"], data["opt"], queries_of(data)

        def solve():
            found = solve_w(data, norm, name)
            return {"solution": found.solution, "dual": found.dual}

        def certify(arrays):
            if set(arrays) != {"solution", "dual"}:
                return f"it holds {sorted(arrays)}, not a solution and its duals"
            found = svm_norms.NormSVMSolution(arrays["solution"], arrays["dual"], None, None, None)
            return svm_norms.optimality_defect(found, X, opt, norm, queries=Z)

        arrays = self._entry(entry_key("W", norm, X, opt, Z), solve, certify)
        return arrays["solution"], arrays["dual"]

    def face_cosine(
        self, data: dict, norm: str, W_star: np.ndarray, name: str, dual: np.ndarray | None = None
    ) -> float:
        """svm.uniqueness.face_cosine of W* in `norm` (NaN where not probed); `name`, the
        dataset and run, for its log lines; `dual`, W*'s SVM duals (w_svm), which the probe
        reads once certified instead of solving the SVM again (a key input where given)."""
        X, opt, Z = data["X"], data["opt"], queries_of(data)
        if not needs_probe(norm):  # 1: unique, nothing solved
            return face_cosine(X, opt, norm, W_star, Z, name=name)

        def solve():
            cosine = face_cosine(X, opt, norm, W_star, Z, name=name, dual=dual)
            return {"cosine": np.array(cosine)}

        def check(arrays):  # no certificate for a probe: its digest and range only
            cosine = arrays.get("cosine", np.array([]))
            if cosine.shape != () or not (np.isnan(cosine) or abs(cosine) <= 1 + 1e-9):
                return f"a cosine {cosine!r} outside [-1, 1]"
            return None

        given = () if dual is None else (dual,)
        arrays = self._entry(entry_key("face", norm, X, opt, Z, W_star, *given), solve, check)
        return float(arrays["cosine"])

    def summary(self) -> str:
        """One line for the job's log: where the entries live and what each source gave."""
        where = "this job's memory" if self.folder is None else str(self.folder)
        counts = ", ".join(f"{n} {k}" for k, n in self.counts.items())
        return f"token-set SVMs ({where}): {counts}"

    # ---- the folder ----------------------------------------------------------------------

    def _entry(self, key: str, solve, check) -> dict[str, np.ndarray]:
        if key in self._memory:
            self.counts["remembered"] += 1
            return self._memory[key]
        self._memory[key] = self._stored_or_solved(key, solve, check)
        return self._memory[key]

    def _stored_or_solved(self, key: str, solve, check) -> dict[str, np.ndarray]:
        path = None if self.folder is None else Path(self.folder) / f"{key}.npz"
        if path is not None and path.exists():
            arrays, why = self._read(path, key)
            why = why or check(arrays)
            if why is None:
                self.counts["reused"] += 1
                return arrays
            self.counts["refused"] += 1
            logging.warning("token-set SVM cache: %s refused (%s); solved again", path, why)
        arrays = solve()
        self.counts["solved"] += 1
        if path is not None:
            self._write(path, key, arrays)
        return arrays

    @staticmethod
    def _read(path: Path, key: str) -> tuple[dict[str, np.ndarray], str | None]:
        try:
            with np.load(path, allow_pickle=False) as stored:
                entry = {name: np.asarray(stored[name]) for name in stored.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
            return {}, f"unreadable: {type(err).__name__}: {err}"
        header = {name: str(entry.pop(name, "")) for name in ("format", "key", "digest")}
        if header["format"] != FORMAT or header["key"] != key:
            return {}, f"written for key {header['key'][:12] or '?'} in format {header['format']!r}"
        if header["digest"] != _payload_digest(entry):
            return {}, "its payload does not match its digest"
        return entry, None

    @staticmethod
    def _write(path: Path, key: str, arrays: dict[str, np.ndarray]) -> None:
        header = {"format": FORMAT, "key": key, "digest": _payload_digest(arrays)}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(
                dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp"
            )
            try:
                os.chmod(temporary, 0o666 & ~_umask())  # as any other file of the results
                with os.fdopen(handle, "wb") as out:
                    np.savez(out, **{n: np.array(v) for n, v in header.items()}, **arrays)
                os.replace(temporary, path)
            finally:
                if os.path.exists(temporary):
                    os.remove(temporary)
        except OSError as err:
            logging.warning("token-set SVM cache: could not write %s (%s)", path, err)
