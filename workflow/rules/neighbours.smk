# The neighbours' experiments (docs/neighbours.md): targets of their own, not part of
# `rule all`. Settings: config key neighbours (its comments cite their scripts). Each is a
# job that solves or trains (env train: torch, cvxpy) and one that draws (env plot).


rule tfsvm_rank_table:
    input:
        code=code("tfsvm_rank.py"),
    output:
        csv=results("tfsvm_rank.csv"),
    log:
        results("logs/neighbours/tfsvm_rank_table.log"),
    benchmark:
        results("benchmarks/neighbours/tfsvm_rank_table.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "tfsvm_rank"),
    script:
        "../scripts/tfsvm_rank.py"


rule tfsvm_rank:
    input:
        csv=rules.tfsvm_rank_table.output.csv,
        code=code("tfsvm_rank_figure.py"),
    output:
        pdf=in_report(
            results("tfsvm_rank.pdf"), "neighbours.rst", "Neighbours", "tfsvm_rank"
        ),
        png=in_report(
            results("tfsvm_rank.png"), "neighbours.rst", "Neighbours", "tfsvm_rank"
        ),
        caption=results("tfsvm_rank.caption.md"),
        provenance=results("tfsvm_rank.provenance.json"),
    log:
        results("logs/neighbours/tfsvm_rank.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "tfsvm_rank"),
        target="tfsvm_rank",  # the report caption's switch (neighbours.rst)
    script:
        "../scripts/tfsvm_rank_figure.py"


rule attentionmd_joint_run:
    input:
        code=code("attentionmd_joint.py"),
    output:
        csv=results("attentionmd_joint.csv"),
        summary=results("attentionmd_joint.json"),
    log:
        results("logs/neighbours/attentionmd_joint_run.log"),
    benchmark:
        results("benchmarks/neighbours/attentionmd_joint_run.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "attentionmd_joint"),
    script:
        "../scripts/attentionmd_joint.py"


rule attentionmd_joint:
    input:
        csv=rules.attentionmd_joint_run.output.csv,
        summary=rules.attentionmd_joint_run.output.summary,
        code=code("attentionmd_joint_figure.py"),
    output:
        pdf=in_report(
            results("attentionmd_joint.pdf"),
            "neighbours.rst",
            "Neighbours",
            "attentionmd_joint",
        ),
        png=in_report(
            results("attentionmd_joint.png"),
            "neighbours.rst",
            "Neighbours",
            "attentionmd_joint",
        ),
        caption=results("attentionmd_joint.caption.md"),
        provenance=results("attentionmd_joint.provenance.json"),
    log:
        results("logs/neighbours/attentionmd_joint.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "attentionmd_joint"),
        target="attentionmd_joint",  # the report caption's switch (neighbours.rst)
    script:
        "../scripts/attentionmd_joint_figure.py"


rule attentionmd_local_run:
    input:
        code=code("attentionmd_local.py"),
    output:
        csv=results("attentionmd_local.csv"),
        final=results("attentionmd_local_final.csv"),
        summary=results("attentionmd_local.json"),
    log:
        results("logs/neighbours/attentionmd_local_run.log"),
    benchmark:
        results("benchmarks/neighbours/attentionmd_local_run.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "attentionmd_local"),
    script:
        "../scripts/attentionmd_local.py"


rule attentionmd_local:
    input:
        csv=rules.attentionmd_local_run.output.csv,
        summary=rules.attentionmd_local_run.output.summary,
        code=code("attentionmd_local_figure.py"),
    output:
        pdf=in_report(
            results("attentionmd_local.pdf"),
            "neighbours.rst",
            "Neighbours",
            "attentionmd_local",
        ),
        png=in_report(
            results("attentionmd_local.png"),
            "neighbours.rst",
            "Neighbours",
            "attentionmd_local",
        ),
        caption=results("attentionmd_local.caption.md"),
        provenance=results("attentionmd_local.provenance.json"),
    log:
        results("logs/neighbours/attentionmd_local.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "attentionmd_local"),
        target="attentionmd_local",  # the report caption's switch (neighbours.rst)
    script:
        "../scripts/attentionmd_local_figure.py"


rule tfsvm_local_run:
    input:
        code=code("tfsvm_local.py"),
    output:
        csv=results("tfsvm_local.csv"),
        final=results("tfsvm_local_final.csv"),
        summary=results("tfsvm_local.json"),
    log:
        results("logs/neighbours/tfsvm_local_run.log"),
    benchmark:
        results("benchmarks/neighbours/tfsvm_local_run.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "tfsvm_local"),
    script:
        "../scripts/tfsvm_local.py"


rule tfsvm_local:
    input:
        csv=rules.tfsvm_local_run.output.csv,
        summary=rules.tfsvm_local_run.output.summary,
        code=code("tfsvm_local_figure.py"),
    output:
        pdf=in_report(
            results("tfsvm_local.pdf"),
            "neighbours.rst",
            "Neighbours",
            "tfsvm_local",
        ),
        png=in_report(
            results("tfsvm_local.png"),
            "neighbours.rst",
            "Neighbours",
            "tfsvm_local",
        ),
        caption=results("tfsvm_local.caption.md"),
        provenance=results("tfsvm_local.provenance.json"),
    log:
        results("logs/neighbours/tfsvm_local.log"),
    conda:
        "../../envs/plot.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "tfsvm_local"),
        target="tfsvm_local",  # the report caption's switch (neighbours.rst)
    script:
        "../scripts/tfsvm_local_figure.py"


rule tfsvm_scs_table:
    input:
        code=code("tfsvm_scs.py"),
    output:
        csv=results("tfsvm_scs.csv"),
    log:
        results("logs/neighbours/tfsvm_scs_table.log"),
    benchmark:
        results("benchmarks/neighbours/tfsvm_scs_table.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=lambda wildcards: at(config["neighbours"], "tfsvm_scs"),
    script:
        "../scripts/tfsvm_scs.py"


# their statements as claims (docs/claims.md, "The neighbours' statements"): a target of its
# own, so that the default build's claims.md stays as it is where these tables are not built
rule claims_neighbours:
    input:
        tfsvm_local=rules.tfsvm_local_run.output.final,
        tfsvm_rank=rules.tfsvm_rank_table.output.csv,
        tfsvm_scs=rules.tfsvm_scs_table.output.csv,
        attentionmd_local=rules.attentionmd_local_run.output.final,
        attentionmd_local_curves=rules.attentionmd_local_run.output.csv,
        attentionmd_joint=rules.attentionmd_joint_run.output.csv,
        code=code("claims_neighbours.py"),
    output:
        md=results("claims_neighbours.md"),
        csv=results("claims_neighbours.csv"),
    log:
        results("logs/claims_neighbours.log"),
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/claims_neighbours.py"
