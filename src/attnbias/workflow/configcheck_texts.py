"""The config checks of free text: markup anywhere, and the titles and labels that
matplotlib or the report would misread (configcheck runs them)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from attnbias.workflow.configkeys import ConfigError, walk

MARKUP = "<>"  # what would open or close an HTML element in the report's <script> JSON


def check_markup(config: dict) -> None:
    """No `<` or `>` in any key or string of the config: every config value may reach a
    job's params, which `snakemake --report` writes unescaped into a <script> element."""
    for path, value in walk(config):
        texts = [(path, value)] if isinstance(value, str) else []
        if isinstance(value, dict):
            texts += [((*path, key), key) for key in value if isinstance(key, str)]
        for where, text in texts:
            found = sorted({c for c in text if c in MARKUP})
            if found:
                raise ConfigError(
                    where,
                    f"{text!r} holds {' and '.join(map(repr, found))}, which the HTML report "
                    "would read as markup; leave them out",
                )


def _texts(config: dict) -> Iterator[tuple[tuple, str]]:
    """(path, text) of every string that reaches a figure or a caption as free text."""
    for name, e in config["experiments"].items():
        yield ("experiments", name, "title"), e.get("title", "")
        for opt_name, opt in e["optimizers"].items():
            if "label" in opt:
                yield ("experiments", name, "optimizers", opt_name, "label"), opt["label"]
    for opt_name, opt in config.get("global_convergence", {}).get("optimizers", {}).items():
        if "label" in opt:
            yield ("global_convergence", "optimizers", opt_name, "label"), opt["label"]
    real = config.get("real_data", {})
    for name, e in real.get("experiments", {}).items():
        yield ("real_data", "experiments", name, "title"), e.get("title", "")
        for opt_name, opt in e["optimizers"].items():
            if "label" in opt:
                path = ("real_data", "experiments", name, "optimizers", opt_name, "label")
                yield path, opt["label"]
    for name, s in real.get("similarity", {}).items():
        yield ("real_data", "similarity", name, "title"), s.get("title", "")


def check_texts(config: dict) -> None:
    """Titles and labels: printable, no math that matplotlib cannot parse, labels shown.

    matplotlib reads text between two unescaped `$` as math and fails on bad math only when
    it draws, after all training; a label starting with `_` is left out of the legend.
    """
    for path, text in _texts(config):
        if not isinstance(text, str):
            continue
        bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf") and c != "\n"]
        if bad:
            raise ConfigError(path, f"holds the control character {bad[0]!r}; remove it")
        if path[-1] == "title" and text != text.strip():
            # the report sets a title in bold (**title**), which a space inside the stars
            # turns into a docutils warning box
            raise ConfigError(
                path, f"{text!r} starts or ends with white space; remove it ({text.strip()!r})"
            )
        if path[-1] == "label" and text.startswith("_"):
            raise ConfigError(path, "a label starting with '_' is hidden from the legend")
        if path[-1] == "label" and not text.strip():
            raise ConfigError(path, "an empty label would show nothing in the legend")
        if path[-1] == "label" and len(re.findall(r"(?<!\\)\$", text)) % 2:
            # the labels are joined into the figure's settings line, where a lone $ would
            # pair with another label's as math
            raise ConfigError(path, "holds an odd number of $; escape a dollar sign as \\$")
        _check_math(path, text)


def _check_math(path, text: str) -> None:
    if "$" not in text:
        return
    from matplotlib.mathtext import MathTextParser
    from matplotlib.text import Text

    for line in text.split("\n"):  # matplotlib parses each line of a title on its own
        body, is_math = Text()._preprocess_math(line)
        if not is_math:
            continue
        try:
            MathTextParser("path").parse(body, dpi=72)
        except ValueError as err:
            lines = [part.strip() for part in str(err).splitlines() if part.strip()]
            raise ConfigError(
                path,
                f"matplotlib cannot parse the math in {line!r} ({lines[-1] if lines else err}); "
                "escape each $ as \\$ for a dollar sign",
            ) from None
