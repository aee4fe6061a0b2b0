rule svm:
    input:
        data=rules.data.output[0],
        code=code("svm.py"),
    output:
        results("svm/{experiment}/seed{seed}.npz"),
    log:
        results("logs/svm/{experiment}/seed{seed}.log"),
    benchmark:
        results("benchmarks/svm/{experiment}/seed{seed}.tsv")
    conda:
        "../../envs/data-svm.yaml"
    params:
        job=job_params(
            train_u=section("train", "train_u"),
            identity=of_job(WF.identity, "svm"),
            data=of_job(WF.identity, "data"),
        ),
    shell:
        job_shell("svm.py", input=["data"])
