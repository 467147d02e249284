"""Draw every report figure of one panel from its analysis outputs (PNG and SVG)."""
import json
import logging

from polyjudge.data.io import read_table
from polyjudge.data.shape import is_skipped
from polyjudge.data.yamlfile import read_yaml
from polyjudge.report import figures
from polyjudge.scripting import run_step

log = logging.getLogger("polyjudge.figure")


def published_taus(claims_path, panel):
    """Published mean held-out tau per method of this panel, from the claims file."""
    claims = read_yaml(claims_path)
    return {claim["select"]["where"]["method"]: claim["published"] for claim in claims
            if claim["output"] == f"results/{panel}/heldout/tau.csv"
            and claim["select"].get("column") == "mean"}


def draw(name, tables, panel, kind, claims_path):
    """Figure ``name`` of ``panel`` from its input ``tables`` (argument -> table); every title
    names the panel."""
    units = "margin points" if kind == "preference_margins" else "score points"
    title = lambda: f"{figures.TITLES[name]} ({panel})"
    builders = {
        "interaction_heatmap": lambda: figures.interaction_heatmap(
            tables["beta"], units, title=title()),
        "ranking_bump_chart": lambda: figures.ranking_bump_chart(
            tables["rankings"], title=title()),
        "band_vs_radius": lambda: figures.band_vs_radius(
            tables["bands"], tables["summary"], units,
            title=title()),
        "heldout_tau": lambda: figures.heldout_tau_forest(
            tables["tau"], published_taus(claims_path, panel) or None,
            title=title()),
        "reversal_strength": lambda: figures.reversal_strength(
            tables["pairs"], f"{units}²", fdr=tables["summary"]["fdr"],
            title=title()),
        "cmi_null": lambda: figures.cmi_null_histogram(
            tables["null"], tables["summary"],
            title=title()),
        "task_count_curve": lambda: figures.task_count_curve(
            tables["task_count"], units, title=title()),
        "backbone_subsets": lambda: figures.backbone_subsets_panel(
            tables["subsets"], title=title()),
        "lolo": lambda: figures.lolo_panel(
            tables["lolo"], title=title()),
        "deletion_mae": lambda: figures.deletion_mae(
            tables["mae"], units, title=title()),
        "judge_ls_flips": lambda: figures.judge_ls_flips(
            tables["flips"], title=title()),
        "judge_ls_position": lambda: figures.judge_ls_position(
            tables["position"],
            title=title()),
        "applied_ranks": lambda: figures.applied_ranks(
            tables["rankings"], title=title()),
        "new_judge": lambda: figures.new_judge(
            tables["ranks"], tables["shift"], tables["summary"],
            title=title()),
    }
    return builders[name]()


def load(path):
    if path.endswith(".json"):
        with open(path) as handle:
            return json.load(handle)
    return read_table(path)


def main(smk):
    panel = smk.params.panel
    # every table once (two figures may share one), by input name
    loaded = {key: load(path) for key, path in smk.input.items()}
    for name, inputs in smk.params.tables.items():
        tables = {arg: loaded[key] for arg, key in inputs.items()}
        skipped = next((table for table in tables.values() if is_skipped(table)), None)
        if skipped is not None:  # the panel's shape did not allow the analysis (its log says)
            reason = skipped["skipped"] if isinstance(skipped, dict) else skipped["skipped"][0]
            fig = figures.not_drawn(f"{figures.TITLES[name]} ({panel})", reason)
        else:
            fig = draw(name, tables, panel, smk.params.kind, smk.params.claims)
        figures.save_figure(fig, smk.output[name], smk.output[f"{name}_svg"])
        log.info("%s of %s %s", name, panel, "not drawn (skipped)" if skipped is not None
                 else "drawn")


run_step(main, snakemake)
