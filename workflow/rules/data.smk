rule data:
    input:
        code=code("data.py"),
        generator=JOB.data_generator_code,
    output:
        results("data/{experiment}.npz"),
    log:
        results("logs/data/{experiment}.log"),
    benchmark:
        results("benchmarks/data/{experiment}.tsv")
    conda:
        "../../envs/data-svm.yaml"
    params:
        seeds=JOB.seeds,
        data=JOB.data_settings,
        identities=JOB.data_identities,
    script:
        "../scripts/data.py"
