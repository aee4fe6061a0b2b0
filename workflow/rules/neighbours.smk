# The neighbours' experiments (docs/neighbours.md): targets of their own, not part of
# `rule all`. Settings: config key neighbours (its comments cite their scripts).


rule tfsvm_rank:
    input:
        code=code("tfsvm_rank.py"),
    output:
        csv=results("tfsvm_rank.csv"),
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
    benchmark:
        results("benchmarks/neighbours/tfsvm_rank.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=at(config["neighbours"], "tfsvm_rank"),
    script:
        "../scripts/tfsvm_rank.py"


rule attentionmd_joint:
    input:
        code=code("attentionmd_joint.py"),
    output:
        csv=results("attentionmd_joint.csv"),
        summary=results("attentionmd_joint.json"),
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
    benchmark:
        results("benchmarks/neighbours/attentionmd_joint.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        settings=at(config["neighbours"], "attentionmd_joint"),
    script:
        "../scripts/attentionmd_joint.py"
