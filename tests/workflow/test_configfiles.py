"""A config file is code where it is a YTE template: Snakemake evaluates
the `?...` expressions of a file whose top level holds `__use_yte__: true`. The workflow
reads every config file of a run as text and refuses a template by name before any job:
the default config before Snakemake loads it (its code never runs), a `--configfile` after
Snakemake's command line has evaluated it (we cannot stop that; the run still stops
before any job, and docs/running.md says to run only configs you trust)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from project import REPO, copy_project, snakemake

from attnbias.workflow import configfiles, configkeys

MARK = "created-by-the-config"


def template(results: str) -> str:
    """A YTE config whose `results` value creates the file MARK when evaluated."""
    return (
        "__use_yte__: true\n"
        f'results: ?__import__("pathlib").Path("{MARK}").touch() or "{results}"\n'
    )


@pytest.mark.parametrize("flag", ["true", "false"])
def test_a_yte_template_is_refused_by_file_name(tmp_path, flag):
    path = tmp_path / "shared.yaml"
    path.write_text(f"__use_yte__: {flag}\nresults: results-x\n")
    with pytest.raises(configfiles.ConfigFileError) as err:
        configfiles.read_plain(path)
    assert str(err.value).startswith(f"config file {path} is a YTE template")
    assert "run only config files you trust" in str(err.value)


def test_plain_yaml_and_json_are_read_without_evaluating_anything(tmp_path):
    plain, json = tmp_path / "plain.yaml", tmp_path / "c.json"
    plain.write_text('results: ?__import__("os").getcwd()\n')  # a plain string here
    json.write_text('{"results": "results-json"}')
    assert configfiles.read_plain(plain) == {"results": '?__import__("os").getcwd()'}
    assert configfiles.read_plain(json) == {"results": "results-json"}
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(configfiles.ConfigFileError, match="list.yaml: holds no mapping"):
        configfiles.read_plain(tmp_path / "list.yaml")


def test_a_default_config_that_is_a_template_never_runs(tmp_path):
    """config/config.yaml replaced by a template: refused before Snakemake loads it, so its
    code does not run (the file MARK must not exist after the dry run)."""
    workdir = copy_project(tmp_path)
    (workdir / "config/config.yaml").write_text(template("results"))
    result = snakemake(workdir, "-n", config=None, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config/config.yaml is a YTE template (top-level key __use_yte__)" in out, out
    assert not (workdir / MARK).exists()


def test_a_configfile_that_is_a_template_stops_the_run_before_any_job(tmp_path):
    """A --configfile template: Snakemake's command line evaluates it before the Snakefile
    runs, so MARK exists (the code ran; docs/running.md says so); the run then stops with
    the reason, before any job: no results folder, rc != 0, even on a dry run with valid
    keys (which exited 0 before)."""
    workdir = copy_project(tmp_path)
    tiny = (workdir / "config/tiny.yaml").read_text()
    body = "\n".join(line for line in tiny.splitlines() if not line.startswith("results:"))
    (workdir / "config/shared.yaml").write_text(template("results-shared") + body + "\n")
    result = snakemake(workdir, "-n", config="config/shared.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config file config/shared.yaml is a YTE template" in out, out
    assert (workdir / MARK).exists()  # Snakemake ran it before us: the limit we document
    assert not (workdir / "results-shared").exists()


# Read bounded: each refusal names the file, before the file is read whole or
# anything walks what it holds.


def refused(path) -> str:
    with pytest.raises(configfiles.ConfigFileError) as err:
        configfiles.read_plain(path)
    return str(err.value)


def test_what_is_not_a_regular_file_is_refused_unread(tmp_path):
    # a device behind a symlink: /dev/null stands for /dev/zero, which a reader that did not
    # refuse it would read until memory ran out (the same kind: refused before opening)
    (tmp_path / "null.yaml").symlink_to("/dev/null")
    assert refused(tmp_path / "null.yaml") == (
        f"config file /dev/null ({tmp_path}/null.yaml resolves to it): a character device, "
        "not a regular file: not read"
    )
    (tmp_path / "folder.yaml").mkdir()
    assert refused(tmp_path / "folder.yaml").startswith(
        f"config file {tmp_path}/folder.yaml: a directory, not a regular file"
    )
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)

    def feed():  # a reader would get a valid config: the test fails rather than hangs
        fd = os.open(fifo, os.O_WRONLY)  # waits for a reader
        os.write(fd, b"results: results-fifo\n")
        os.close(fd)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert refused(fifo) == f"config file {fifo}: a FIFO, not a regular file: not read"
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer end
    writer.join(5)
    os.close(reader)


def test_a_file_over_the_size_limit_is_refused(tmp_path):
    line = b"results: results-x\n"
    path = tmp_path / "big.yaml"
    path.write_bytes(line + b"#" * (configfiles.MAX_BYTES - len(line) - 1) + b"\n")
    assert configfiles.read_plain(path) == {"results": "results-x"}  # at the limit: read
    path.write_bytes(path.read_bytes() + b"\n")
    assert refused(path) == (
        f"config file {path}: holds more than {configfiles.MAX_BYTES} bytes (MAX_BYTES): no "
        "config is, not read"
    )


def billion_laughs(levels: int = 9) -> str:
    """Each level an alias of the one before, nine times: 9^levels strings."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_aliases_that_expand_past_the_node_limit_are_refused(tmp_path):
    """PyYAML alone loads a billion laughs at once (its aliases share one object), so the
    check is that read_plain raises, naming the file; it stops after composing, in
    milliseconds (the expansion is counted, never made)."""
    path = tmp_path / "lol.yaml"
    path.write_text(billion_laughs())
    message = refused(path)
    assert message.startswith(f"config file {path}: composes more than 100000 YAML nodes")
    assert "(from line" in message and "not loaded" in message
    # the same with four levels (9^4 nodes and the aliases) stays under the limit, and so
    # do the repository's configs, aliases and all
    path.write_text(billion_laughs(4))
    assert len(configfiles.read_plain(path)["a3"]) == 9
    for config in sorted((Path(__file__).parents[2] / "config").glob("*.yaml")):
        assert "experiments" in configfiles.read_plain(config)
    path.write_text("a: &a [1, *a]\n")
    assert refused(path) == (
        f"config file {path}: an alias that contains itself (line 1): not loaded"
    )


def test_a_key_given_twice_is_refused_with_its_lines(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("results: results-x\nexperiments:\n  fig2:\n    seeds: 3\n    seeds: 5\n")
    assert refused(path) == (
        f"config file {path}: the key 'seeds' is given twice in one mapping (lines 4 and 5); "
        "YAML would keep the last silently: give it once"
    )
    path.write_text('{"results": "a", "results": "b"}')  # JSON too
    assert "the key 'results' is given twice in one mapping (lines 1 and 1)" in refused(path)
    path.write_text("x:\n  1: a\n  0x1: b\n")  # one key, spelled twice
    assert "the key 1 is given twice" in refused(path)
    # a merge's keys may be given again (that is what a merge is for); one key per mapping
    path.write_text("base: &b {lr: 1, seeds: 2}\nrun:\n  <<: *b\n  lr: 3\nother: {lr: 1}\n")
    assert configfiles.read_plain(path)["run"] == {"lr": 3, "seeds": 2}


def test_a_configfile_with_a_key_given_twice_is_refused_by_name(tmp_path):
    """Snakemake's own loader keeps the last of two equal keys silently; the workflow reads
    every --configfile again, strictly (configfiles.refuse_templates in the Snakefile), and
    stops before any job, naming the file, the key and its lines."""
    workdir = copy_project(tmp_path)
    tiny = (workdir / "config/tiny.yaml").read_text()
    twice = tiny.replace("threads: 1\n", "threads: 1\nthreads: 2\n", 1)
    assert twice != tiny
    (workdir / "config/twice.yaml").write_text(twice)
    result = snakemake(workdir, "-n", config="config/twice.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config file config/twice.yaml: the key 'threads' is given twice in one mapping" in out
    assert not (workdir / "results-tiny").exists()


# Snakemake's command line loads a --configfile before the Snakefile runs, so a file its
# loader cannot read stops the run there, with Snakemake's message, which names neither the
# file nor the line (docs/upstream/snakemake-configfile-errors.md, the report upstream). The
# test pins what a user sees, which docs/workflow.md describes; where it fails, Snakemake
# has changed: update both documents. The default config is read by the workflow first, and
# refused naming the file and what to do.
UNREADABLE = {
    "not-utf8": (b"results: caf\xe9\n", "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9"),
    "python-tag": (
        b"results: !!python/object/apply:os.getcwd []\n",
        "Config file is not valid JSON or YAML.",
    ),
    # a list nested 1,000 deep overflows Snakemake's recursive YAML loader (issue 61)
    "deep": (
        b"results: " + b"[" * 1000 + b"]" * 1000 + b"\n",
        "RecursionError: maximum recursion depth exceeded",
    ),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_configfile_snakemake_cannot_load_stops_the_run_in_its_command_line(tmp_path, case):
    content, seen = UNREADABLE[case]
    workdir = copy_project(tmp_path)
    (workdir / "config/bad.yaml").write_bytes(content)
    result = snakemake(workdir, "-n", config="config/bad.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert seen in out, out
    assert "bad.yaml" not in out  # the limit documented: Snakemake does not name the file
    assert not (workdir / "results").exists()
    upstream = (REPO / "docs/upstream/snakemake-configfile-errors.md").read_text()
    assert seen in upstream
    assert "snakemake-configfile-errors.md" in (REPO / "docs/workflow.md").read_text()


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_default_config_snakemake_could_not_load_is_refused_by_name(tmp_path, case):
    workdir = copy_project(tmp_path)
    (workdir / "config/config.yaml").write_bytes(UNREADABLE[case][0])
    result = snakemake(workdir, "-n", config=None, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    expected = {
        "not-utf8": "config file config/config.yaml: not UTF-8 text (byte 0xe9 on line 1): "
        "save it as UTF-8",
        "python-tag": "config file config/config.yaml: a Python object's tag "
        "(!!python/object/apply:os.getcwd, line 1): config files are plain YAML",
        "deep": "config file config/config.yaml: nested more than 32 levels deep (MAX_DEPTH) "
        "on line 1",
    }[case]
    assert expected in out, out


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_the_check_command_names_the_file_snakemake_could_not_load(tmp_path, case):
    """What docs/workflow.md tells a user who sees Snakemake's message to run."""
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("results: results-good\n")
    bad.write_bytes(UNREADABLE[case][0])
    result = subprocess.run(
        [sys.executable, "-m", "attnbias.workflow.configfiles", str(good), str(bad)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stdout == f"{good}: readable as plain YAML\n"
    assert result.stderr.startswith(f"error: config file {bad}: ")


def test_nesting_past_the_depth_limit_is_refused_with_its_line(tmp_path):
    """Refused while composing, before PyYAML's recursive composer could overflow; the
    limit's level passes (a control), and docs/workflow.md states the limit and the default
    config's depth."""
    limit = configkeys.MAX_DEPTH

    def nested(levels):  # the top-level mapping counts as one level
        return "a: 1\nb:\n  - " + "[" * (levels - 2) + "]" * (levels - 2) + "\n"

    at_limit, past = tmp_path / "at.yaml", tmp_path / "past.yaml"
    at_limit.write_text(nested(limit))
    past.write_text(nested(limit + 1))
    assert configfiles.read_plain(at_limit)["a"] == 1
    with pytest.raises(configfiles.ConfigFileError, match=f"past.yaml: nested more than {limit} "
                       r"levels deep \(MAX_DEPTH\) on line 3"):  # fmt: skip
        configfiles.read_plain(past)
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert _depth(default) == 7
    assert f"nesting deeper than {limit} levels, where the default config nests 7" in " ".join(
        (REPO / "docs/workflow.md").read_text().split()
    )


def _depth(value) -> int:
    children = value.values() if isinstance(value, dict) else value
    if isinstance(value, dict | list):
        return 1 + max((_depth(v) for v in children), default=0)
    return 0


# Each refusal of the pure-Python loader; libyaml's (configfiles._FastLoader) must refuse
# each too, so that reading with it first never lets one through.
REFUSED_TEXTS = {
    "key twice": "a: 1\nb:\n  c: 1\n  c: 2\n",
    "key twice in JSON": '{"a": 1, "a": 2}',
    "past the depth": "a:\n  - "
    + "[" * (configkeys.MAX_DEPTH - 1)
    + "]" * (configkeys.MAX_DEPTH - 1),
    "a Python tag": "a: !!python/object/apply:os.getcwd []\n",
    "billion laughs": billion_laughs(),
    "an alias in itself": "a: &a [1, *a]\n",
    "not YAML": "a: [1, 2\n",
}


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@pytest.mark.parametrize("case", sorted(REFUSED_TEXTS))
def test_libyaml_refuses_what_the_pure_loader_refuses(case):
    text = REFUSED_TEXTS[case]
    for loader in (configfiles._Loader, configfiles._FastLoader):
        with pytest.raises((configfiles._Refused, yaml.YAMLError)):
            configfiles._load_with(loader, text, deep_check=loader is configfiles._FastLoader)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_libyaml_reads_the_configs_as_the_pure_loader_does(tmp_path, monkeypatch):
    """The shipped configs, nesting at the limit, a merge and aliases: the same data from
    both loaders; read_plain takes libyaml's (the pure loader, broken here, is not called),
    and a refusal is still worded by the pure loader (its line, as before)."""
    limit = configkeys.MAX_DEPTH
    texts = [p.read_text() for p in sorted((REPO / "config").glob("*.yaml"))]
    texts += [
        "a:\n  - " + "[" * (limit - 2) + "]" * (limit - 2) + "\n",
        "base: &b {lr: 1, seeds: 2}\nrun:\n  <<: *b\n  lr: 3\nc: [*b, *b]\n",
        # an anchor nested deep, its alias shallow: the alias is not nesting (_Loader's count)
        "a:\n  - " + "[" * (limit - 3) + "&x [1]" + "]" * (limit - 3) + "\nb: *x\n",
    ]
    assert len(texts) > 3
    for text in texts:
        fast = configfiles._load_with(configfiles._FastLoader, text, deep_check=True)
        assert fast == configfiles._load_with(configfiles._Loader, text, deep_check=False)
    path = tmp_path / "c.yaml"
    path.write_text(texts[0])
    slow = configfiles._Loader
    monkeypatch.setattr(configfiles, "_Loader", None)  # calling it would raise TypeError
    assert configfiles.read_plain(path) == yaml.safe_load(texts[0])
    path.write_text("a: 1\na: 2\n")
    with pytest.raises(TypeError):
        configfiles.read_plain(path)  # refused by libyaml's pass, then worded by _Loader
    monkeypatch.setattr(configfiles, "_Loader", slow)
    assert "the key 'a' is given twice in one mapping (lines 1 and 2)" in refused(path)
