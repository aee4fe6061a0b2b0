rule train:
    input:
        data=rules.data.output[0],
        svm=rules.svm.output[0],
        code=code("train.py"),
    output:
        metrics=results("train/{experiment}/{optimizer}.parquet"),
        final=results("train/{experiment}/{optimizer}.final.npz"),
    log:
        results("logs/train/{experiment}/{optimizer}.log"),
    benchmark:
        results("benchmarks/train/{experiment}/{optimizer}.tsv")
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        train=get_train_settings,
        optimizer=get_optimizer,
        device=config["device"],
        dtype=config["dtype"],
        identities=get_run_identities,
        data=get_data_identities,
        svm=get_svm_identities,
    script:
        "../scripts/train.py"
