"""The label-plan loop on the results page: each language's anytime-valid interval so far, its
labels and the forecast of those still needed (``labels/progress.csv``), and what to do next
with the batch ``labels/to_label.csv`` proposes."""
from __future__ import annotations

from .results_folder import PER_LANGUAGE, Results, col, table

PROGRESS_COLUMNS = [
    col("language", type="text"), col("n_items", "items", "int"),
    col("n_labels", "labels so far", "int"), col("estimate"),
    col("ci", "anytime-valid 95% interval: holds at every look at once (planted sequences: "
        "missed the target at some look in 0.009-0.046 of them)", "interval", low="lower",
        high="upper", missing="no interval yet"),
    col("halfwidth", "half-width"), col("target_halfwidth", "target half-width",
                                        missing="no target"),
    col("met", "target met", "text"),
    col("labels_needed", "labels still needed (forecast; -1: out of reach)", "int",
        missing="no forecast"),
    col("next_batch", "items proposed next", "int"), col("sampling", type="text")]


def next_step(name: str, to_label, progress) -> str:
    """One line: what the lab does next with the proposed batch (or that it is done)."""
    if to_label is None:
        return ""
    if not len(to_label):
        done = progress is not None and len(progress) and progress["met"].all()
        return ("Every language's target is met: no labels to add." if done else
                "The plan proposes no items now (no target, or nothing left to label).")
    counts = to_label.groupby("language").size()
    per = ", ".join(f"{language} {n}" for language, n in counts.items())
    return (f"Next: label the {len(to_label)} items results/{name}/labels/to_label.csv "
            f"proposes ({per}): fill in its label column (keep every row and its "
            f"probability), add the file to the panel's human_labels source (a new file in its "
            f"folder, named to sort after the earlier batches) and rerun.")


def label_plan_part(res: Results, name: str) -> tuple[list, str] | None:
    """The progress table and the note of a panel that runs ``label_plan`` (None if it does
    not)."""
    source = f"{name}/labels/progress.csv"
    progress = res.csv(source)
    to_label = res.csv(f"{name}/labels/to_label.csv")
    if progress is None and to_label is None:
        return None
    tables = []
    if progress is not None:
        shown = progress.assign(met=progress["met"].map(
            lambda v: "yes" if str(v).lower() in ("true", "1") else "no"))
        tables.append(table(f"{name}.label_plan_progress", "The label plan: each language so far",
                            source, shown, PROGRESS_COLUMNS, PER_LANGUAGE,
                            {"language": ["language"]}))
    note = ("The label plan: after each batch of human labels, each language's interval for "
            "the mean human label (valid however often you look and whenever you stop), the "
            "labels it still needs to reach the target half-width (a forecast, assuming the "
            "coming labels vary as those so far) and the next items to label (docs/methods.md, "
            "\"The label-plan loop\"). " + next_step(name, to_label, progress))
    return tables, note.strip()
