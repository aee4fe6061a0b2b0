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
