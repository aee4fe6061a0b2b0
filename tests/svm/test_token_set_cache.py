"""A token set's SVMs solved once and shared through the results folder
(attnbias.svm.token_set_cache): a second job reuses the first's entry without solving, a
changed token set, norm or solver misses, and a corrupt, foreign or forged entry is refused
and solved again."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from attnbias.svm import geometry, token_set_cache
from attnbias.svm.token_set_cache import TokenSetCache

pytest.importorskip("cvxpy")

# two samples of two 2-D tokens, token 0 optimal in both (a set a trained decoder may pick)
DATA = {
    "X": np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 2.0]]]),
    "y": np.array([1.0, 1.0]),
    "opt": np.array([0, 0]),
}
OTHER_SET = dict(DATA, opt=np.array([0, 1]))


@pytest.fixture
def solves(monkeypatch):
    """Every W-SVM and face probe the cache solves, as (kind, norm, opt)."""
    calls = []
    solve_w, face_cosine = token_set_cache.solve_w, token_set_cache.face_cosine

    def counted_w(data, norm, name):
        calls.append(("W", norm, tuple(data["opt"])))
        return solve_w(data, norm, name)

    def counted_face(X, opt, norm, W_star, queries=None, name="dataset", dual=None):
        calls.append(("face", norm, tuple(opt)))
        return face_cosine(X, opt, norm, W_star, queries, name=name, dual=dual)

    monkeypatch.setattr(token_set_cache, "solve_w", counted_w)
    monkeypatch.setattr(token_set_cache, "face_cosine", counted_face)
    return calls


def _entries(folder):
    return sorted(folder.glob("*.npz"))


def test_a_second_job_reuses_the_first_s_solution_bit_for_bit(tmp_path, solves):
    first = TokenSetCache(tmp_path)
    W = first.w_star(DATA, "max", "run 0")
    face = first.face_cosine(DATA, "max", W, "run 0")
    assert solves == [("W", "max", (0, 0)), ("face", "max", (0, 0))]
    assert first.counts["solved"] == 2 and len(_entries(tmp_path)) == 2
    second = TokenSetCache(tmp_path)  # another job: nothing in its memory
    again = second.w_star(DATA, "max", "run 0")
    assert second.face_cosine(DATA, "max", again, "run 0") == face
    assert len(solves) == 2  # nothing solved again
    assert second.counts == {"solved": 0, "reused": 2, "refused": 0, "remembered": 0}
    assert again.tobytes() == W.tobytes()
    # the solve it stands for: the same canonical point
    assert W.tobytes() == geometry.solve_w(DATA, "max", "run 0").solution.tobytes()
    assert not list(tmp_path.glob("*.tmp"))
    mode = _entries(tmp_path)[0].stat().st_mode & 0o777
    assert mode == 0o666 & ~token_set_cache._umask()  # not mkstemp's 0o600


def test_the_duals_stored_with_w_star_reach_the_face_probe(tmp_path, monkeypatch):
    """w_svm gives W* with the SVM's duals, as solved and as read back (re-certified) by
    another job, and face_cosine hands them to the probe (svm.uniqueness), keyed with them."""
    W, dual = TokenSetCache(tmp_path).w_svm(DATA, "spectral", "run 0")
    assert dual.tobytes() == geometry.solve_w(DATA, "spectral", "run 0").dual.tobytes()
    second = TokenSetCache(tmp_path)
    again, read = second.w_svm(DATA, "spectral", "run 0")
    assert second.counts["reused"] == 1 and (again.tobytes(), read.tobytes()) == (
        W.tobytes(),
        dual.tobytes(),
    )
    passed = []
    face_cosine = token_set_cache.face_cosine

    def recorded(X, opt, norm, W_star, queries=None, name="dataset", dual=None):
        passed.append(dual)
        return face_cosine(X, opt, norm, W_star, queries, name=name, dual=dual)

    monkeypatch.setattr(token_set_cache, "face_cosine", recorded)
    second.face_cosine(DATA, "spectral", again, "run 0", dual=read)
    second.face_cosine(DATA, "spectral", again, "run 0")  # the control: none passed
    assert passed[0] is read and passed[1] is None
    assert len(_entries(tmp_path)) == 3  # one W entry, a face entry with and one without


def test_within_a_job_a_set_is_read_once(tmp_path, solves):
    cache = TokenSetCache(tmp_path)
    cache.w_star(DATA, "fro", "run 0")
    cache.w_star(DATA, "fro", "run 0")
    assert cache.counts["solved"] == 1 and cache.counts["remembered"] == 1


def test_a_changed_token_set_norm_dataset_or_solver_misses(tmp_path, solves, monkeypatch):
    cache = TokenSetCache(tmp_path)
    cache.w_star(DATA, "max", "run 0")
    TokenSetCache(tmp_path).w_star(OTHER_SET, "max", "run 0")
    TokenSetCache(tmp_path).w_star(DATA, "fro", "run 0")
    shifted = dict(DATA, X=DATA["X"] + 1e-3)
    TokenSetCache(tmp_path).w_star(shifted, "max", "run 0")
    monkeypatch.setattr(token_set_cache, "solver_version", lambda: "another solver")
    TokenSetCache(tmp_path).w_star(DATA, "max", "run 0")
    assert [c[:3] for c in solves] == [
        ("W", "max", (0, 0)), ("W", "max", (0, 1)), ("W", "fro", (0, 0)),
        ("W", "max", (0, 0)), ("W", "max", (0, 0)),
    ]  # fmt: skip
    assert len(_entries(tmp_path)) == 5


def test_the_solver_version_follows_the_svm_package_s_source(tmp_path, monkeypatch):
    svm = tmp_path / "svm"
    svm.mkdir()
    (svm / "norms.py").write_text("TOLERANCE = 1e-6\n")
    queries = tmp_path / "model" / "queries.py"
    monkeypatch.setattr(token_set_cache, "SVM_PACKAGE", svm)
    monkeypatch.setattr(token_set_cache, "OUTSIDE_SVM", ("model/queries.py",))
    queries.parent.mkdir()
    queries.write_text("FIRST_TOKEN = 0\n")
    version = token_set_cache.solver_version.__wrapped__  # not the process's cached value
    before = version()
    assert version() == before
    (svm / "norms.py").write_text("TOLERANCE = 1e-7\n")
    assert version() != before
    changed = version()
    queries.write_text("FIRST_TOKEN = 1\n")  # a module outside svm/ that a solve runs
    assert version() != changed


def test_a_solve_runs_no_package_module_outside_the_svm_package():
    """What the solver version hashes is all the solves run of the package (svm.geometry
    and what it imports: the svm package, and the few modules of attnbias.model and .optim
    it reads, token_set_cache.OUTSIDE_SVM)."""
    from pathlib import Path

    from attnbias.workflow.codedeps import package_module_files

    run = {Path(p) for p in package_module_files("attnbias.svm.geometry")}
    hashed = set(token_set_cache.solver_sources())
    package_face = token_set_cache.SVM_PACKAGE.parent / "__init__.py"
    assert not (run - hashed - {package_face})
    assert Path(token_set_cache.__file__).resolve() not in run


def test_the_solver_version_misses_a_module_outside_svm_it_does_not_list(monkeypatch):
    """The control: with the queries' module left off the list, the check above fails."""
    from pathlib import Path

    from attnbias.workflow.codedeps import package_module_files

    listed = tuple(p for p in token_set_cache.OUTSIDE_SVM if p != "model/queries.py")
    monkeypatch.setattr(token_set_cache, "OUTSIDE_SVM", listed)
    run = {Path(p) for p in package_module_files("attnbias.svm.geometry")}
    package_face = token_set_cache.SVM_PACKAGE.parent / "__init__.py"
    assert run - set(token_set_cache.solver_sources()) - {package_face}


def _solved_entry(folder):
    TokenSetCache(folder).w_star(DATA, "max", "run 0")
    (entry,) = _entries(folder)
    return entry


def test_a_corrupt_entry_is_refused_solved_again_and_replaced(tmp_path, solves, caplog):
    entry = _solved_entry(tmp_path)
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 2])  # a write cut short (not ours: ours rename)
    cache = TokenSetCache(tmp_path)
    W = cache.w_star(DATA, "max", "run 0")
    assert cache.counts["refused"] == 1 and cache.counts["solved"] == 1 and len(solves) == 2
    assert "refused (unreadable" in caplog.text
    assert entry.read_bytes() == good  # replaced by the solve's (deterministic) entry
    assert W.tobytes() == TokenSetCache(tmp_path).w_star(DATA, "max", "run 0").tobytes()


def test_a_foreign_entry_is_refused(tmp_path, solves, caplog):
    entry = _solved_entry(tmp_path)
    TokenSetCache(tmp_path).w_star(OTHER_SET, "max", "run 0")
    other = next(p for p in _entries(tmp_path) if p != entry)
    shutil.copy(other, entry)  # another key's entry under this key's name
    cache = TokenSetCache(tmp_path)
    W = cache.w_star(DATA, "max", "run 0")
    assert cache.counts["refused"] == 1 and "written for key" in caplog.text
    assert W.tobytes() == geometry.solve_w(DATA, "max", "run 0").solution.tobytes()


def _rewrite(entry, change, keep_digest):
    """`entry` with its payload changed by `change`, its digest recomputed or not."""
    with np.load(entry) as stored:
        arrays = {k: stored[k] for k in stored.files}
    payload = {k: v for k, v in arrays.items() if k not in ("format", "key", "digest")}
    payload = change(payload)
    digest = arrays["digest"] if keep_digest else token_set_cache._payload_digest(payload)
    np.savez(entry, format=arrays["format"], key=arrays["key"], digest=digest, **payload)


def test_an_entry_changed_after_it_was_written_is_refused_by_its_digest(tmp_path, caplog):
    entry = _solved_entry(tmp_path)
    _rewrite(entry, lambda p: dict(p, solution=p["solution"] * 2), keep_digest=True)
    cache = TokenSetCache(tmp_path)
    cache.w_star(DATA, "max", "run 0")
    assert cache.counts["refused"] == 1 and "does not match its digest" in caplog.text


@pytest.mark.parametrize(
    "change",
    [
        lambda p: dict(p, solution=p["solution"] * 2),  # feasible, not the optimum
        lambda p: dict(p, solution=p["solution"] * 0.5),  # infeasible
        lambda p: dict(p, dual=p["dual"][::-1] * 3),
        lambda p: {"solution": p["solution"]},  # no duals: nothing certifies it
    ],
)
def test_a_forged_entry_with_a_valid_digest_fails_its_kkt_check(tmp_path, change, caplog):
    """The digest only says the file is as written; the solution is certified again
    (svm.norms.optimality_defect) before any use."""
    entry = _solved_entry(tmp_path)
    _rewrite(entry, change, keep_digest=False)
    cache = TokenSetCache(tmp_path)
    W = cache.w_star(DATA, "max", "run 0")
    assert cache.counts["refused"] == 1 and cache.counts["reused"] == 0
    assert W.tobytes() == geometry.solve_w(DATA, "max", "run 0").solution.tobytes()


def test_the_control_an_untouched_entry_passes_every_check(tmp_path):
    entry = _solved_entry(tmp_path)
    _rewrite(entry, lambda p: p, keep_digest=False)
    cache = TokenSetCache(tmp_path)
    cache.w_star(DATA, "max", "run 0")
    assert cache.counts["reused"] == 1 and cache.counts["refused"] == 0


def test_a_face_probe_outside_minus_one_to_one_is_refused(tmp_path, solves):
    cache = TokenSetCache(tmp_path)
    W = cache.w_star(DATA, "max", "run 0")
    face = cache.face_cosine(DATA, "max", W, "run 0")
    (entry,) = [p for p in _entries(tmp_path) if "cosine" in np.load(p).files]
    _rewrite(entry, lambda p: {"cosine": np.array(1.5)}, keep_digest=False)
    again = TokenSetCache(tmp_path)
    assert again.face_cosine(DATA, "max", W, "run 0") == face
    assert again.counts["refused"] == 1
    # a strictly convex norm's optimum is unique: 1, nothing solved or stored
    assert TokenSetCache(tmp_path).face_cosine(DATA, "fro", W, "run 0") == 1.0
    assert len(_entries(tmp_path)) == 2


def test_a_failed_write_leaves_no_entry_and_the_job_goes_on(tmp_path, monkeypatch, caplog):
    def cut_short(out, **arrays):
        out.write(b"PK\x03\x04 half an entry")
        raise OSError("disk full")

    monkeypatch.setattr(token_set_cache.np, "savez", cut_short)
    W = TokenSetCache(tmp_path).w_star(DATA, "fro", "run 0")
    assert np.all(np.isfinite(W)) and not list(tmp_path.iterdir())
    assert "could not write" in caplog.text


def test_a_folder_that_cannot_be_made_costs_only_the_solves(tmp_path, caplog):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    cache = TokenSetCache(blocker / "token_sets")
    cache.w_star(DATA, "fro", "run 0")
    assert cache.counts["solved"] == 1 and "could not write" in caplog.text
