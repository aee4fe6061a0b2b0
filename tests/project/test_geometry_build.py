"""End-to-end: results/geometry.pdf and the claims beyond the paper, built by the real
workflow on config/tiny_geometry.yaml in a temporary copy of the project."""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from pdf_text import body_sizes, font_sizes, page_inches
from project import copy_project, planned_jobs, snakemake

from attnbias.figures import style

CONFIG = "config/tiny_geometry.yaml"
RESULTS = "results-tiny-geometry"


@pytest.fixture(scope="module")
def geometry_build(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("geometry"))
    snakemake(workdir, f"{RESULTS}/geometry.pdf", "-c2", "-q", config=CONFIG)
    return workdir


def test_geometry_figure_and_caption(geometry_build):
    out = geometry_build / RESULTS
    assert (out / "geometry.pdf").read_bytes().startswith(b"%PDF")
    assert (out / "geometry.png").read_bytes().startswith(b"\x89PNG")
    caption = (out / "geometry.caption.md").read_text()
    config = yaml.safe_load((geometry_build / CONFIG).read_text())["experiments"]
    for experiment in config.values():
        assert f"Data model {experiment['data']['model']}" in caption
        for label in {o["label"] for o in experiment["optimizers"].values()}:
            assert label in caption
    assert "Ass. 1" in caption  # the hypotheses the data jobs measured
    # print size: 7 in wide at most, no type under 7 pt
    width, height = page_inches(out / "geometry.pdf")
    assert width <= style.FULL_WIDTH + 0.01 and height <= style.MAX_HEIGHT
    assert min(body_sizes(font_sizes(out / "geometry.pdf"))) >= style.MIN_FONT_PT


def test_every_run_logs_each_norms_measures(geometry_build):
    config = yaml.safe_load((geometry_build / CONFIG).read_text())["experiments"]
    for name, experiment in config.items():
        table = pq.read_table(geometry_build / RESULTS / name / "metrics.parquet").to_pandas()
        wanted = {
            f"{p}_{n}" for p in ("align", "margin", "margin_ratio") for n in experiment["norms"]
        }
        for opt in experiment["optimizers"]:
            mine = table[table["optimizer"] == opt]
            assert wanted <= set(mine["metric"]), (name, opt)
            last = mine[mine["iteration"] == mine["iteration"].max()]
            values = last[last["metric"].isin(wanted)]["value"]
            assert values.notna().all() and (values.abs() <= 1 + 1e-9).sum() > 0


def test_claims_read_the_geometry_tables_where_built(geometry_build):
    snakemake(geometry_build, f"{RESULTS}/claims.md", "-c2", "-q", config=CONFIG)
    table = pd.read_csv(geometry_build / RESULTS / "claims.csv")
    beyond = table[table["statement"].str.startswith("geo-")]
    measured = beyond[beyond["kind"] != "not measured"]
    assert set(measured["statement"]) == {
        "geo-fro", "geo-max", "geo-lp-nsd", "geo-spectral", "geo-mirror", "geo-kq",
        "geo-opt-tokens",
    }  # fmt: skip
    assert set(measured["experiment"]) == {"geometry_example1", "geometry_dm"}
    # the optimal tokens can move only where u trains: one row per optimizer there
    kept = measured[measured["statement"] == "geo-opt-tokens"]
    assert set(kept["experiment"]) == {"geometry_dm"} and len(kept) == 4
    assert "# Beyond the paper" in (geometry_build / RESULTS / "claims.md").read_text()


def test_nothing_to_do_after_the_build(geometry_build):
    assert not planned_jobs(geometry_build, CONFIG, f"{RESULTS}/geometry.pdf")


# config/tiny_geometry.yaml names no robustness constant: sign descent's step, in both
# experiments (the optional target, built where the geometry tables are)
ROBUSTNESS = {
    "constants": {
        "sign_lr": {
            "label": "sign descent's lr",
            "set": {e: "optimizers.sign.lr" for e in ("geometry_example1", "geometry_dm")},
            "values": [0.025, 0.05],
            "plausible": [0.025, 0.05],
            "why": "the end-to-end test",
        }
    }
}


def test_a_geometry_constant_gives_the_beyond_rows_their_range(geometry_build):
    out = geometry_build / RESULTS
    path = geometry_build / CONFIG
    original = path.read_text()
    path.write_text(original + yaml.safe_dump({"claims_robustness": ROBUSTNESS}))
    try:
        snakemake(geometry_build, f"{RESULTS}/claims_robustness.md", "-c2", "-q", config=CONFIG)
        snakemake(geometry_build, f"{RESULTS}/claims.md", "-c2", "-q", config=CONFIG)
        robust = pd.read_csv(out / "claims_robustness.csv")
        table = pd.read_csv(out / "claims.csv", keep_default_na=False).set_index("key")
        points = pd.read_parquet(out / "claims_robustness/sign_lr.parquet")
    finally:
        path.write_text(original)
    # measured on both experiments' beyond rows; only sign descent's depend on its step
    assert set(points["experiment"]) == {"geometry_example1", "geometry_dm"}
    assert len(robust) and robust["key"].str.contains(" sign ").all()
    assert set(robust["experiment"]) <= {"geometry_example1", "geometry_dm"}
    for key, row in robust.set_index("key").iterrows():
        assert table.loc[key, "robustness"].startswith(
            f"sign descent's lr = 0.05 (ours): {row['range']}"
        )
    beyond = table[table["statement"].str.startswith("geo-")]
    others = beyond[~beyond.index.str.contains(" sign ") & (beyond["kind"] != "not measured")]
    assert len(others) and not others["robustness"].any()
    assert "## sign descent's lr (sign_lr)" in (out / "claims_robustness.md").read_text()
    beyond_md = (out / "claims.md").read_text().split("# Beyond the paper", 1)[1]
    assert f"{len(robust)} verdicts depend on constants we chose" in beyond_md
    assert "| robustness |" in beyond_md
