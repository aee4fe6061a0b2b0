"""The record of each module's imports kept between Snakemake runs
(attnbias.workflow.codedeps.remember_imports): a text is parsed once, an edited one again,
and a record that does not load is ignored."""

from __future__ import annotations

import json

import pytest

from attnbias.workflow import codedeps


@pytest.fixture
def known(monkeypatch):
    """A fresh record in this test alone, and every text parsed, by name."""
    parsed = []
    parse = codedeps._parsed_imports
    monkeypatch.setattr(codedeps, "_KNOWN", codedeps._KnownImports())
    monkeypatch.setattr(
        codedeps,
        "_parsed_imports",
        lambda text, source: parsed.append(source.name) or parse(text, source),
    )
    return parsed


def _imports(path):
    return codedeps._imported_modules.__wrapped__(path)  # not this process's cached answer


def test_a_text_is_parsed_once_and_again_when_edited(tmp_path, known, monkeypatch):
    module = tmp_path / "job.py"
    module.write_text("def f():\n    from attnbias.svm import norms\n")
    record = tmp_path / "imports.json"
    codedeps.remember_imports(record)
    first = _imports(module)
    codedeps.save_imports()
    assert "attnbias.svm.norms" in first and known == ["job.py"]
    monkeypatch.setattr(codedeps, "_KNOWN", codedeps._KnownImports())  # another run
    codedeps.remember_imports(record)
    assert _imports(module) == first and known == ["job.py"]  # from the record
    module.write_text("import attnbias.svm.geometry\n")
    assert "attnbias.svm.geometry" in _imports(module) and known == ["job.py", "job.py"]


@pytest.mark.parametrize(
    "text",
    ["{not json", '{"format": "another", "imports": {}}', '{"format": null}', "[]"],
)
def test_a_record_that_does_not_load_is_ignored(tmp_path, known, text):
    module = tmp_path / "job.py"
    module.write_text("import attnbias.workflow.store\n")
    record = tmp_path / "imports.json"
    record.write_text(text)
    codedeps.remember_imports(record)
    assert "attnbias.workflow.store" in _imports(module) and known == ["job.py"]
    codedeps.save_imports()
    stored = json.loads(record.read_text())
    assert stored["format"] == codedeps.IMPORTS_FORMAT and len(stored["imports"]) == 1


def test_a_record_entry_that_is_not_a_list_of_names_is_ignored(tmp_path, known):
    module = tmp_path / "job.py"
    module.write_text("import attnbias.workflow.store\n")
    record = tmp_path / "imports.json"
    codedeps.remember_imports(record)
    _imports(module)
    codedeps.save_imports()
    stored = json.loads(record.read_text())
    stored["imports"] = {k: "attnbias.other" for k in stored["imports"]}
    record.write_text(json.dumps(stored))
    codedeps._KNOWN.__init__()
    codedeps.remember_imports(record)
    assert "attnbias.workflow.store" in _imports(module) and known == ["job.py", "job.py"]
