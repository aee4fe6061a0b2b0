rule svm:
    input:
        data=rules.data.output[0],
        code=code("svm.py"),
    output:
        results("svm/{experiment}.npz"),
    log:
        results("logs/svm/{experiment}.log"),
    benchmark:
        results("benchmarks/svm/{experiment}.tsv")
    conda:
        "../../envs/data-svm.yaml"
    params:
        train_u=lookup(dpath="experiments/{experiment}/train/train_u", within=config),
        identities=JOB.svm_identities,
        data=JOB.data_identities,
    script:
        "../scripts/svm.py"


# The SVMs under other norms (attnbias.svm.norms) for an experiment that lists `norms`:
# which max-margin each optimizer's geometry finds (docs/file-contract.md).
rule svm_geometry:
    input:
        data=rules.data.output[0],
        code=code("svm_geometry.py"),
    output:
        results("svm_geometry/{experiment}.npz"),
    log:
        results("logs/svm_geometry/{experiment}.log"),
    benchmark:
        results("benchmarks/svm_geometry/{experiment}.tsv")
    conda:
        "../../envs/data-svm.yaml"
    params:
        train_u=lookup(dpath="experiments/{experiment}/train/train_u", within=config),
        norms=JOB.norms,
        identities=JOB.svm_geometry_identities,
        data=JOB.data_identities,
    script:
        "../scripts/svm_geometry.py"
