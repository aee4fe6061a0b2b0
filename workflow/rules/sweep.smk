# The fig3 sweep: a separate target, `results/fig3_sweep.pdf` (not in rule all). Where Fig. 3's
# order of the optimizers holds over a grid of DM data points (separation, d) and NGD step
# sizes: one training job per data point, one job that judges and draws them all.


include: "sweep_common.smk"


rule fig3_sweep_runs:
    input:
        code=code("fig3_sweep_runs.py"),
    output:
        results("fig3_sweep/runs/{sweep_point}.parquet"),
    log:
        results("logs/fig3_sweep/{sweep_point}.log"),
    benchmark:
        results("benchmarks/fig3_sweep_runs/{sweep_point}.tsv")
    wildcard_constraints:
        sweep_point=_alternatives(SWEEP_POINTS),
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        point=sweep_point,
        optimizers=sweep_optimizers,
        lrs=config_value("fig3_sweep/lr"),
        seeds=config_value("fig3_sweep/seeds"),
        iterations=config_value("fig3_sweep/iterations"),
        log_points=config_value("fig3_sweep/log_points"),
        loss=config_value("fig3_sweep/loss"),
        device=config["device"],
        dtype=config["dtype"],
    script:
        "../scripts/fig3_sweep_runs.py"


rule fig3_sweep:
    input:
        runs=expand(rules.fig3_sweep_runs.output[0], sweep_point=SWEEP_POINTS),
        benchmarks=benchmarks("fig3_sweep_runs", jobs=sweep_jobs),
        code=code("fig3_sweep.py"),
    output:
        csv=results("fig3_sweep.csv"),
        verdicts=results("fig3_sweep_verdicts.csv"),
        pdf=report(
            results("fig3_sweep.pdf"),
            caption="../report/fig3_sweep.rst",
            category="Figures",
            subcategory="fig3_sweep",
        ),
        png=report(
            results("fig3_sweep.png"),
            caption="../report/fig3_sweep.rst",
            category="Figures",
            subcategory="fig3_sweep",
        ),
        provenance=results("fig3_sweep.provenance.json"),
    log:
        results("logs/fig3_sweep/summary.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        legend=sweep_legend,
        tolerance=config_value("fig3_sweep/loss_tolerance"),
        config=sweep_figure_config,
    script:
        "../scripts/fig3_sweep.py"
