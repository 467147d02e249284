# The reproduction report: the claims table (published vs reproduced) and the figures.


localrules:
    claims,


rule claims:
    input:
        claims=Path(workflow.basedir) / "config" / "claims.yaml",
        outputs=all_targets(),
    output:
        table=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="1. Claims",
        ),
        markdown="results/claims.md",
    params:
        data_dir=str(DATA_DIR),
    log:
        "results/logs/claims.log",
    script:
        "../workflow_scripts/claims.py"
