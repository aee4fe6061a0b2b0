rule train:
    input:
        data=rules.data.output[0],
        svm=rules.svm.output[0],
        code=code("train.py"),
    output:
        metrics=results("train/{experiment}/{optimizer}/seed{seed}.parquet"),
        final=results("train/{experiment}/{optimizer}/seed{seed}.final.npz"),
    log:
        results("logs/train/{experiment}/{optimizer}/seed{seed}.log"),
    benchmark:
        results("benchmarks/train/{experiment}/{optimizer}/seed{seed}.tsv")
    conda:
        "../../envs/train.yaml"
    threads: config["threads"]
    params:
        job=job_params(
            train=section("train"),
            optimizer=of_job(WF.optimizer),
            device=config["device"],
            dtype=config["dtype"],
            identity=of_job(WF.identity, "run"),
            data=of_job(WF.identity, "data"),
            svm=of_job(WF.identity, "svm"),
        ),
    shell:
        job_shell("train.py", input=["data", "svm"], output=["metrics", "final"])
