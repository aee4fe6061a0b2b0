"""Markup in config text refused naming its key (attnbias.workflow.configcheck_texts)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from tiny_configs import HOSTILE, tiny

from attnbias.workflow import configcheck_texts, configkeys

# ---------------------------------------------------------------- the report is safe


def _default_config() -> dict:
    return yaml.safe_load((Path(__file__).parents[2] / "config/config.yaml").read_text())


@pytest.mark.parametrize(
    "path",
    [
        ("experiments", "fig2", "title"),
        ("experiments", "fig2", "optimizers", "gd", "label"),
        ("global_convergence", "optimizers", "gd", "label"),
        ("real_data", "experiments", "fig1", "title"),
        ("real_data", "experiments", "fig1", "optimizers", "sgd", "label"),
        ("real_data", "similarity", "title"),
        ("sweeps", "fig3", "title"),
        ("sweeps", "fig3", "grid", "optimizers.gd.label"),
        ("results",),
    ],
    ids=lambda path: ".".join(path),
)
def test_markup_in_any_config_text_is_refused_naming_the_key(path):
    """Snakemake's report writes every job's params (the config among them) as JSON into a
    <script> element without escaping `</`: a label like HOSTILE would end the script and
    open a live element, so every free-text key refuses it, naming the key."""
    config = _default_config()
    target = config
    for key in path[:-1]:
        target = target.setdefault(key, {})
    if path[-1] == "optimizers.gd.label":
        target[path[-1]] = ["GD", HOSTILE]
        where = re.escape(".".join(path)) + r"\[1\]"
    else:
        target[path[-1]] = HOSTILE
        where = re.escape(".".join(path))
    with pytest.raises(configkeys.ConfigError, match=rf"config key {where}: .*'<' and '>'"):
        configcheck_texts.check_markup(config)


def test_markup_in_a_config_key_is_refused_naming_it():
    config = tiny()
    config["experiments"]["fig<b>"] = config["experiments"].pop("fig2")
    with pytest.raises(configkeys.ConfigError, match=r"config key experiments\.fig<b>"):
        configcheck_texts.check_markup(config)


@pytest.mark.parametrize("title", ["tiny fixed decoder ", " tiny fixed decoder", "tiny\n"])
def test_a_title_with_white_space_at_either_end_is_refused_with_its_stripped_spelling(title):
    """The report sets a title in bold, `**<title>**` (workflow/report/figure.rst): a space
    before the closing stars is a docutils warning box in the HTML report (issue 61)."""
    from io import StringIO

    from docutils.core import publish_parts

    def warns(text):
        quiet = {"warning_stream": StringIO()}
        return (
            "system-message" in publish_parts(text, writer="html", settings_overrides=quiet)["body"]
        )

    assert warns("**tiny fixed decoder **") and not warns("**tiny fixed decoder**")
    assert (
        "**{{ rst(snakemake.params.title or name) }}**"
        in (Path(__file__).parents[2] / "workflow/report/figure.rst").read_text()
    )
    config = tiny()
    config["experiments"]["fig2"]["title"] = title
    with pytest.raises(
        configkeys.ConfigError,
        match=re.escape(f"experiments.fig2.title: {title!r} starts or ends with white space; "
                        f"remove it ({title.strip()!r})"),
    ):  # fmt: skip
        configcheck_texts.check_texts(config)
    config["experiments"]["fig2"]["title"] = title.strip()  # the advice followed
    configcheck_texts.check_texts(config)
