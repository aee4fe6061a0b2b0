rule data:
    input:
        code=get_data_code,
    output:
        results("data/{experiment}.npz"),
    log:
        results("logs/data/{experiment}.log"),
    benchmark:
        results("benchmarks/data/{experiment}.tsv")
    conda:
        "../../envs/data-svm.yaml"
    params:
        seeds=get_seeds,
        data=get_data_settings,
        identities=get_data_identities,
    script:
        "../scripts/data.py"
