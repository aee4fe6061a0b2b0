"""One look per algorithm in every figure: colour by family, marker and line style by member
(figures.algorithm_style, from the rules' modules), and what each figure of the configs
draws, read through the same params and calls as the figure jobs
(workflow/scripts/figure*.py, geometry_figure.py, sweep_summary.py, study_summary.py)."""

from __future__ import annotations

import dataclasses

import pytest
import seaborn as sns
import yaml
from project import REPO

from attnbias.claims import coverage
from attnbias.figures import algorithm_style as style
from attnbias.optim import rules
from attnbias.optim.rule import Look
from attnbias.optim.spec import resolve, spec_of
from attnbias.studies.sweep_config import SweepConfig
from attnbias.workflow import configcheck
from attnbias.workflow.config import WorkflowConfig
from attnbias.workflow.geometry_config import GeometryConfig

CONFIGS = ("config/config.yaml", "config/tiny.yaml", "config/tiny_geometry.yaml")
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def _config(path: str) -> dict:
    """A config file, validated with its defaults filled in (as common.smk)."""
    from snakemake.utils import validate

    cfg = yaml.safe_load((REPO / path).read_text())
    schema = yaml.safe_load(SCHEMA.read_text())
    configcheck.check(cfg, schema)
    validate(cfg, str(SCHEMA), set_default=True)
    configcheck.check_workflow(cfg, schema)
    return cfg


def figures(path: str) -> dict[str, dict[str, str]]:
    """Every figure a config draws: {figure: {optimizer: algorithm key}}, from the params
    the figure jobs get (common.smk's WF, JOB.geometry, SWEEPS)."""
    cfg = _config(path)
    wf = WorkflowConfig(cfg)
    out = {}
    for name, e in wf.experiments.items():
        if e["layout"] != "geometry":
            section = wf.figure_config(name)["experiments"][name]
            specs = resolve(section["optimizers"], real=False)
            out[name] = style.algorithms_of(specs, e["layout"])
    geometry = GeometryConfig(wf).figure()
    if geometry:  # one figure of every geometry experiment (geometry_figure.py)
        out["geometry"] = {
            o: k
            for s in geometry.values()
            for o, k in style.algorithms_of(
                resolve(s["optimizers"], real=False), "geometry"
            ).items()
        }
    for name in wf.real_experiments:
        section = wf.figure_config(name)["real_data"]["experiments"][name]
        out[name] = style.algorithms_of(resolve(section["optimizers"], real=True), None)
    sweeps = SweepConfig(cfg)
    for name in sweeps.entries:
        base = sweeps.figure_config(name)["experiments"][sweeps.entries[name]["base"]]
        specs = resolve(base["optimizers"], real=False)
        out[f"sweeps/{name}"] = style.algorithms_of(specs, base["layout"])
    if wf.study.get("optimizers"):
        specs = resolve(wf.study["optimizers"], real=False)
        out["global_convergence"] = style.algorithms_of(specs, "fixed_decoder")
    return out


def clashes(keys: dict[str, str]) -> list[str]:
    """What is wrong with one figure's looks ({curve: algorithm key}): two curves drawn
    alike, two families in one colour, an algorithm not in its table look."""
    looks = style.figure_looks(keys)
    wrong = []
    if len(set(looks.values())) < len(looks):
        wrong.append("two curves drawn alike")
    by_colour = {}
    for name, key in keys.items():
        by_colour.setdefault(looks[name].colour, set()).add(style._member(key).family)
    wrong += [f"{sorted(f)} share {c}" for c, f in by_colour.items() if len(f) > 1]
    first = {}
    for name, key in keys.items():
        first.setdefault(key, name)
    wrong += [f"{n} is not drawn as {k}" for k, n in first.items() if looks[n] != style.look(k)]
    return wrong


ALL = {(path, fig): keys for path in CONFIGS for fig, keys in figures(path).items()}


def test_every_algorithm_has_one_look_of_its_own_in_colour_blind_safe_colours():
    keys = set(coverage.ALGORITHMS) - {"nsd"} | {"nsd-max", "nsd-lp", "nsd-spectral"}
    assert keys == set(style.STYLES)
    looks = list(style.STYLES.values())
    assert len(set(looks)) == len(looks)  # the (colour, marker, line style) triple
    palette = sns.color_palette("colorblind", 10).as_hex()
    assert set(style.COLOURS) == (set(palette) - {palette[8]}) | {style.BLACK}  # no yellow
    assert {lk.colour for lk in looks} <= set(style.COLOURS)
    families = style.FAMILY_COLOURS
    assert len(set(families.values())) == len(families)  # a colour says one family
    # every rule of optim/rules/ has a look, at each of its module's examples (full batch)
    # and as a real-data run (torch)
    for name, rule in rules.RULES.items():
        for example in rule.examples if rule.full_batch else ():
            style.look(spec_of({"rule": name, **example}, real=False).look_key("fixed_decoder"))
        if rule.torch is not None:
            style.look(spec_of({"rule": name}, real=True).look_key(None))


def test_an_unknown_algorithm_is_refused_naming_the_table():
    with pytest.raises(ValueError, match="give it a Look in its rule's module"):
        style.look("lion")


@pytest.mark.parametrize(("path", "figure"), sorted(ALL))
def test_each_configured_figure_draws_its_algorithms_apart_and_as_the_table_says(path, figure):
    assert clashes(ALL[path, figure]) == []


def test_one_algorithm_is_drawn_alike_in_every_figure_of_every_config():
    seen: dict[str, set] = {}
    for keys in ALL.values():
        looks = style.figure_looks(keys)
        for name, key in keys.items():
            if list(keys.values()).count(key) == 1:  # a sweep's shades aside
                seen.setdefault(key, set()).add(looks[name])
    assert {k: len(v) for k, v in seen.items()} == {k: 1 for k in seen}
    assert len(seen) >= 15  # the check saw most of the table


def test_fig2s_and_fig3s_ngd_are_one_colour_their_variants_two_line_styles():
    fig2, fig3 = ALL["config/config.yaml", "fig2"], ALL["config/config.yaml", "fig3"]
    assert (fig2["ngd"], fig3["ngd"]) == ("ngd-capped", "per-block-ngd")
    a, b = style.look(fig2["ngd"]), style.look(fig3["ngd"])
    assert a.colour == b.colour and a.marker == b.marker and a.dashes != b.dashes
    fig9 = ALL["config/config.yaml", "fig9"]
    assert style.look(fig9["gd"]) == style.look(fig2["gd"])
    # GD and NGD do not swap between figures (fig2 against fig8)
    fig8 = ALL["config/config.yaml", "fig8"]
    assert style.look(fig8["gd"]).colour == style.look(fig2["gd"]).colour
    assert style.look(fig8["ngd"]).colour == style.look(fig2["ngd"]).colour


def test_fig3s_caption_says_eq10_per_block_too_is_not_dash_dot():
    """fig3's caption said dash-dot marks W and u normalised separately, while Eq. 10,
    normalised separately too, is drawn solid (a family of its own): the note says so."""
    fig3 = ALL["config/config.yaml", "fig3"]
    looks = [style.look(key) for key in fig3.values()]
    assert style.look(fig3["eq10"]).dashes == style.PLAIN
    assert style.look(fig3["ngd"]).dashes == style.PER_BLOCK
    assert "without Eq. 10's step factors" in style.variants_note(looks)


def test_the_geometry_figure_draws_ten_algorithms_in_the_colours_of_six_families():
    keys = ALL["config/config.yaml", "geometry"]
    looks = style.figure_looks(keys)
    assert len(keys) == 10 and len(set(looks.values())) == 10
    assert {o: lk.colour for o, lk in looks.items() if lk.colour == style.PINK} == {
        "sign": style.PINK,
        "nsd-max": style.PINK,  # steepest descent in the max norm, both
    }
    assert len({lk.colour for lk in looks.values()}) == 6


def test_a_figure_draws_every_algorithm_apart_by_family_and_member():
    """All 22 looks in one figure (more than the palette's 10 colours): no two alike, one
    colour per family, and within a family each member its own marker and line style."""
    keys = {key: key for key in style.STYLES}
    looks = style.figure_looks(keys)
    assert len(looks) >= 12 and len(set(looks.values())) == len(looks)
    family = {key: style._member(key).family for key in keys}
    colours = {f: {looks[k].colour for k in keys if family[k] == f} for f in family.values()}
    assert all(len(c) == 1 for c in colours.values())
    assert len(set().union(*colours.values())) == len(colours)


def test_a_family_without_a_colour_takes_one_free_in_each_figure(monkeypatch):
    """A new rule's new family: in each figure, the first colour no family drawn there
    holds (GD's vermilion is taken where GD is drawn, free where it is not)."""
    new = Look("lion", "s", "long-dash")
    lion = dataclasses.replace(rules.RULES["gd"], name="lion", looks={"lion": new})
    monkeypatch.setitem(rules.RULES, "lion", lion)
    with pytest.raises(ValueError, match="family 'lion', which has no colour of its own"):
        style.look("lion")
    assert style.figure_looks({"ngd": "ngd", "lion": "lion"})["lion"].colour == style.ORANGE
    drawn = style.figure_looks({"ngd": "ngd", "ps": "ps", "lion": "lion", "gd": "gd"})
    assert drawn["lion"].colour == style.ORANGE and len(set(drawn.values())) == 4
    busy = {k: k for k in ("ngd", "joint-ngd", "gd")}
    assert style.figure_looks({**busy, "lion": "lion"})["lion"].colour == style.GREEN


def test_real_data_rules_share_their_full_batch_algorithms_colour_and_marker():
    for stochastic, full in (("sgd", "gd"), ("sngd", "ngd"), ("sps", "ps")):
        a, b = style.look(stochastic), style.look(full)
        assert (a.colour, a.marker) == (b.colour, b.marker)
        assert a.dashes == style.STOCHASTIC != b.dashes
    lr_sweep = ALL["config/config.yaml", "fig1_minilm_lr"]  # three to five settings each
    looks = style.figure_looks(lr_sweep)
    assert len(set(looks.values())) == len(looks) == len(lr_sweep) == 16
    assert len({lk.marker for lk in looks.values()}) == 4  # the marker: the algorithm


def test_the_check_catches_two_families_in_one_colour_and_a_stray_look(monkeypatch):
    """Negative controls of `clashes`: sign descent's family given PS's green; a figure
    whose drawing gave GD another look."""
    monkeypatch.setitem(style.FAMILY_COLOURS, "sign", style.GREEN)
    assert clashes({"ps": "ps", "sign": "sign"}) == ["['ps', 'sign'] share #029e73"]
    monkeypatch.undo()
    monkeypatch.setattr(style, "figure_looks", lambda keys: {n: style.STYLES["ngd"] for n in keys})
    assert clashes({"gd": "gd"}) == ["gd is not drawn as gd"]


def test_shades_of_one_algorithm_stay_apart_from_each_other():
    looks = style.figure_looks({f"gd{i}": "gd" for i in range(5)})
    assert len({lk.colour for lk in looks.values()}) == 5
    assert len({lk.dashes for lk in looks.values()}) == 5
    assert {lk.marker for lk in looks.values()} == {"s"}
