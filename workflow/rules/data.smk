rule data:
    input:
        code=data_code,
    output:
        results("data/{experiment}/seed{seed}.npz"),
    log:
        results("logs/data/{experiment}/seed{seed}.log"),
    benchmark:
        results("benchmarks/data/{experiment}/seed{seed}.tsv")
    conda:
        "../../envs/data-svm.yaml"
    params:
        job=job_params(data=section("data"), identity=of_job(WF.identity, "data")),
    shell:
        job_shell("data.py")
