"""Every advice the config checks print can be followed as written (issue 61, point 4).

Each case breaks a shipped tiny config so that one check refuses it; the test reads the
advice out of the printed message (ADVICE: the advice's words, as the checks print them),
applies it to the key path the message names, and checks the config again: it must then be
accepted. So an advice that names a value the next check refuses (before: mirror descent
with p = 1.0000001 was told to add 'l1' to the norms, which was unknown; 'l1.0000001' was to
be written 'l1') fails here. Every form of advice in ADVICE is followed by a case.
"""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from config_fuzz import verdict
from project import REPO

from attnbias.workflow import configkeys, results_folder


def _config(name="tiny.yaml") -> dict:
    return yaml.safe_load((REPO / "config" / name).read_text())


def _at(config, path):
    for key in path:
        config = config[key]
    return config


def _path(message: str) -> tuple:
    """The key path a refusal names, as keys (list items [i] as ints)."""
    text = re.match(r"config key (\S+): ", message)[1]
    parts = []
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", text):
        parts.append(int(part[1:-1]) if part.startswith("[") else part)
    return tuple(parts)


def _set_dotted(config, path, dotted: str, value) -> None:
    """`set a.b: v` relative to the nearest section on `path` that holds `a`."""
    keys = dotted.split(".")
    for end in range(len(path), -1, -1):
        try:
            section = _at(config, path[:end])
        except KeyError:  # a key the config leaves to its default
            continue
        if isinstance(section, dict) and keys[0] in section:
            for key in keys[:-1]:
                section = section[key]
            section[keys[-1]] = value
            return
    raise AssertionError(f"no section on {path} holds {dotted}")


def _quote_key(config, path, m):
    parent = _at(config, path)
    key = next(k for k in parent if not isinstance(k, str) and yaml.safe_dump(k).startswith(
        m["text"]))  # fmt: skip
    parent[m["text"]] = parent.pop(key)


def _rename(config, path, m):
    section = _at(config, path[:-1])
    section[m["new"]] = yaml.safe_load(m["value"])
    del section[m["old"]]


def _choose_another(config, path, m):
    parent = _at(config, path[:-1])
    parent[f"{path[-1]}_2"] = parent.pop(path[-1])


def _set_value(config, path, m):
    _set_dotted(config, path, m["key"], yaml.safe_load(m["value"]))


def _replace(config, path, value):
    _at(config, path[:-1])[path[-1]] = value


ADVICE = {
    # configcheck.check_keys
    r"write it in quotes, '(?P<text>[^']*)'$": _quote_key,
    # configcheck.check_renamed
    r"write `(?P<new>\w+): (?P<value>[^`]*)` instead of `(?P<old>\w+): [^`]*`$": _rename,
    # configcheck.check_names
    r"choose another$": _choose_another,
    # configcheck.check_signals: the value below the one it must stay below
    r"(?P<value>\S+) must be below (?P<key>\w+) \((?P<bound>[^)]*)\)": lambda c, p, m: _replace(
        c, p, float(m["bound"]) / 2
    ),
    # configcheck.check_digits
    r"give two different digits$": lambda c, p, m: _replace(c, p, [0, 1]),
    # configcheck_texts
    r"which the HTML report would read as markup; leave them out$": lambda c, p, m: _replace(
        c, p, re.sub("[<>]", "", _at(c, p))
    ),
    r"holds the control character (?P<char>'.*'); remove it$": lambda c, p, m: _replace(
        c,
        p,
        _at(c, p).replace(eval(m["char"]), ""),  # the character as Python's repr writes it
    ),
    r"escape a dollar sign as \\\$$|escape each \$ as \\\$ for a dollar sign$": lambda c, p, m: (
        _replace(c, p, re.sub(r"(?<!\\)\$", r"\\$", _at(c, p)))
    ),
    r"starts or ends with white space; remove it \((?P<value>'.*')\)$": lambda c, p, m: _replace(
        c, p, eval(m["value"])
    ),
    # configcheck_optimizers
    r"choose one of (?P<first>[\w-]+), ": lambda c, p, m: _replace(c, p, m["first"]),
    r"ignores \w+; remove it \(or change the rule\)$|u is not trained here; remove it$": (
        lambda c, p, m: _at(c, p[:-1]).pop(p[-1])
    ),
    r"[;:] set (?P<key>[\w.]+): (?P<value>\S+)$": _set_value,
    # configcheck_geometry
    r"so first_seed \((?P<first>\d+)\) must be above it$": lambda c, p, m: _at(c, p[:-1]).update(
        first_seed=_at(c, p) + 1
    ),
    r"add '(?P<norm>[^']+)' to the norms": lambda c, p, m: _at(c, p).append(m["norm"]),
    r"norms belong to layout geometry only": lambda c, p, m: _at(c, p[:-1]).pop(p[-1]),
    r"write it as '(?P<norm>[^']+)'": lambda c, p, m: _replace(c, p, m["norm"]),
    # lp_norm, through a rule's check: a p of the range it names
    r"needs p from [\d.]+ to [\d.]+ with at most two decimals.*\(e\.g\. (?P<p>[\d.]+)": (
        lambda c, p, m: _at(c, p).update(p=float(m["p"]))
    ),
    # figures.config_check
    r"choose a data model with one \([^)]*\), e\.g\. (?P<model>\w+)$": lambda c, p, m: _replace(
        c, p, m["model"]
    ),
    r"choose a layout that draws what they log \((?P<first>\w+)": lambda c, p, m: _replace(
        c, p, m["first"]
    ),
}

DM = {"model": "dm", "params": {"n": 6, "T": 3, "d": 12}}
G1 = ("experiments", "geometry_example1")


def _fig2_optimizer(c, key):
    c["experiments"]["fig2"]["optimizers"][key] = c["experiments"]["fig2"]["optimizers"].pop("gd")


# name -> (config file, the change that breaks it)
CASES = {
    "optimizer named 1": ("tiny.yaml", lambda c: _fig2_optimizer(c, 1)),
    "optimizer named null": ("tiny.yaml", lambda c: _fig2_optimizer(c, None)),
    "layout written figure": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(
        figure=c["experiments"]["fig2"].pop("layout"))),
    "reserved name": ("tiny.yaml", lambda c: c["experiments"].update(
        claims=c["experiments"].pop("fig8"))),
    "query signal": ("tiny.yaml", lambda c: c["experiments"]["fig2"]["data"]["params"].update(
        query_signal=2.0)),
    "score spread": ("tiny.yaml", lambda c: c["global_convergence"]["settings"]["spread05"].update(
        score_spread=1.5)),
    "one digit": ("tiny.yaml", lambda c: c["experiments"]["fig9"]["data"]["params"].update(
        digits=[1, 1])),
    "markup": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(title="a <b> title")),
    "control character": ("tiny.yaml", lambda c: c["experiments"]["fig2"]["optimizers"]["gd"]
                          .update(label="G\x07D")),
    "odd dollar": ("tiny.yaml", lambda c: c["experiments"]["fig2"]["optimizers"]["gd"].update(
        label="GD $5")),
    "bad math": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(title=r"$\frac{1}$ x")),
    "trailing space": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(title="tiny ")),
    "unknown rule": ("tiny.yaml", lambda c: c["experiments"]["fig2"]["optimizers"]["gd"].update(
        rule="gradient")),
    "ignored setting": ("tiny.yaml", lambda c: c["experiments"]["fig2"]["optimizers"]["gd"].update(
        beta=0.5)),
    "lr_u, u fixed": ("tiny.yaml", lambda c: c["experiments"]["fig2"]["optimizers"]["gd"].update(
        lr_u=0.5)),
    "f_star opt, u trained": ("tiny_geometry.yaml", lambda c: _at(
        c, ("experiments", "geometry_dm", "optimizers")).update(
        ps={"rule": "polyak", "f_star": "opt"})),
    "tuning seed": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(tuning_seed=3)),
    "norm missing": ("tiny_geometry.yaml", lambda c: _at(c, G1)["norms"].remove("l3")),
    "mirror's norm missing": ("tiny_geometry.yaml", lambda c: _at(
        c, (*G1, "optimizers", "mirror")).update(p=2.5)),
    "norms, no geometry": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(norms=["fro"])),
    "norm spelling": ("tiny_geometry.yaml", lambda c: _at(c, G1)["norms"].append("l1.50")),
    "mirror p near 1": ("tiny_geometry.yaml", lambda c: _at(
        c, (*G1, "optimizers", "mirror")).update(p=1.0000001)),
    "mirror p huge": ("tiny_geometry.yaml", lambda c: _at(
        c, (*G1, "optimizers", "mirror")).update(p=1e6)),
    "DM, layout bad_init": ("tiny.yaml", lambda c: c["experiments"]["fig8"].update(
        data=copy.deepcopy(DM))),
    "DM, layout fixed_decoder": ("tiny.yaml", lambda c: c["experiments"]["fig2"].update(
        data=copy.deepcopy(DM))),
    "train_u, layout fixed_decoder": ("tiny.yaml", lambda c: c["experiments"]["fig9"]["train"]
                                      .update(train_u=True)),
    "DM trained, layout fixed_decoder": ("tiny.yaml", lambda c: c["experiments"]["fig3"].update(
        layout="fixed_decoder")),
    "DM, u fixed": ("tiny.yaml", lambda c: c["experiments"]["fig3"]["train"].update(
        train_u=False)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_advice_of_a_refusal_followed_as_written_clears_it(name):
    file, change = CASES[name]
    config = _config(file)
    assert verdict(copy.deepcopy(config)) == "accepted"  # the control
    change(config)
    message = verdict(copy.deepcopy(config))
    assert message.startswith("config key "), message
    found = [(p, re.search(p, message)) for p in ADVICE if re.search(p, message)]
    assert len(found) == 1, f"{message}: advice forms {[p for p, _ in found]}"
    pattern, match = found[0]
    ADVICE[pattern](config, _path(message), match)
    assert verdict(config) == "accepted", f"{message}\nfollowed, then: {verdict(config)}"


def test_every_form_of_advice_is_followed_by_a_case():
    messages = []
    for file, change in CASES.values():
        config = _config(file)
        change(config)
        messages.append(verdict(config))
    unused = [p for p in ADVICE if not any(re.search(p, m) for m in messages)]
    assert not unused, unused


def test_a_refusal_of_another_folder_names_one_whose_advice_clears_it(tmp_path, monkeypatch):
    """results_folder's advice (e.g. results: results-mine), followed as written."""
    monkeypatch.chdir(tmp_path)
    results_folder.claim({"results": "results"}, ["config/a.yaml"], "config/config.yaml")
    config = {"results": "results"}
    with pytest.raises(configkeys.ConfigError) as refused:
        results_folder.check(config, ["config/mine.yaml"], "config/config.yaml")
    advice = re.search(r"\(e\.g\. results: (\S+)\)\.$", str(refused.value))
    config["results"] = advice[1]
    results_folder.check(config, ["config/mine.yaml"], "config/config.yaml")
