# The judge card: is each judge right, in each language? Agreement with the panel's reference
# and among the judges, and the judges' biases, per language x judge (docs/methods.md section
# 11).


include: "card.functions.smk"


rule card:
    input:
        unpack(card_inputs),
    output:
        agreement=report(
            "results/{panel}/card/agreement.csv",
            caption="../report/card.rst",
            category="0. Judge card",
            subcategory="{panel}",
        ),
        tests="results/{panel}/card/language_tests.csv",
        bias="results/{panel}/card/bias.csv",
        bias_tests="results/{panel}/card/bias_tests.csv",
        redundancy="results/{panel}/card/redundancy.csv",
        ranking="results/{panel}/card/ranking.csv",
    log:
        "results/{panel}/logs/card.log",
    benchmark:
        "results/{panel}/benchmarks/card.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(500, 400),
        runtime=scaled(10, 2),
    params:
        panel=panel_config,
        settings=config["card"],
    script:
        "../workflow_scripts/card.py"
