# Sweeps (`sweeps:`; docs/studies.md), each a target `results/sweeps/<name>.pdf`: a job per
# point of the grid (`d~100_lr~0.1`) trains every optimizer x seed; one judges and draws.


wildcard_constraints:
    sweep=_alternatives(SWEEPS.entries),
    point=r"[^/]+",


rule sweep_point:
    input:
        code=code("sweep_point.py"),
        # what the job loads by name: its data model's own module, the metric plugins
        loaded_code=JOB.sweep_code,
    output:
        runs=results("sweeps/{sweep}/points/{point}.parquet"),
        curves=results("sweeps/{sweep}/curves/{point}.parquet"),
    log:
        results("logs/sweeps/{sweep}/{point}.log"),
    benchmark:
        results("benchmarks/sweep_point/{sweep}/{point}.tsv")
    group:
        "sweep_points"
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        experiment=JOB.sweep_experiment,
        identity=JOB.sweep_identity,
        metrics=JOB.sweep_metrics,
        device=config["device"],
        dtype=config["dtype"],
    script:
        "../scripts/sweep_point.py"


rule sweep_summary:
    input:
        runs=JOB.sweep_files(rules.sweep_point.output.runs),
        curves=JOB.sweep_files(rules.sweep_point.output.curves),
        benchmarks=benchmarks("sweep_point", jobs=JOB.sweep_points),
        code=code("sweep_summary.py"),
    output:
        csv=results("sweeps/{sweep}.csv"),
        points=results("sweeps/{sweep}_points.csv"),
        verdicts=results("sweeps/{sweep}_verdicts.csv"),
        pdf=in_report(results("sweeps/{sweep}.pdf"), "sweep.rst", "Sweeps", "{sweep}"),
        png=in_report(results("sweeps/{sweep}.png"), "sweep.rst", "Sweeps", "{sweep}"),
        caption=results("sweeps/{sweep}.caption.md"),
        provenance=results("sweeps/{sweep}.provenance.json"),
    log:
        results("logs/sweeps/{sweep}/summary.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        sweep=JOB.sweep_summary,
        metrics=lookup(dpath="sweeps/{sweep}/metrics", within=config),
        needed=JOB.sweep_metrics,
        config=JOB.sweep_config,
    script:
        "../scripts/sweep_summary.py"


# fig3's sweep under its earlier name (README, docs/studies.md)
rule fig3_sweep:
    input:
        results("sweeps/fig3.pdf"),
    output:
        results("fig3_sweep.pdf"),
    log:
        results("logs/sweeps/fig3/fig3_sweep.log"),
    conda:
        "../../envs/plot.yaml"
    shell:
        "cp -v {input:q} {output:q} > {log:q} 2>&1"
