"""Shared pytest fixtures (each block is self-contained; add, do not rewrite)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgecal.panel import Panel

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


# --- M-RewardBench external panel (issue 6) ------------------------------------------------------
MREWARDBENCH_DIR = SHARED_DATA / "mrewardbench_panel"
MREWARDBENCH_ARTIFACTS = (SHARED_DATA / "cbc_paper_artifacts" / "data" / "external_validation"
                          / "mrewardbench_panel" / "analysis_1500_item")
# evaluator file stem -> the evaluator label of the published matrices (same order as their columns)
MREWARDBENCH_EVALUATORS = {
    "claude_sonnet_4_6": "openrouter/anthropic/claude-sonnet-4.6",
    "deepseek_v3_2": "deepseek/deepseek-v3.2",
    "gemini_3_flash_preview": "openrouter/google/gemini-3-flash-preview",
    "gpt4o_2024_08_06": "openrouter/openai/gpt-4o-2024-08-06",
    "gpt5_4": "openrouter/openai/gpt-5.4",
}
MREWARDBENCH_LANGUAGES = ("eng_Latn", "arb_Arab", "tur_Latn", "zho_Hans", "hin_Deva", "jpn_Jpan",
                          "spa_Latn")


def load_mrewardbench_panel() -> Panel:
    """The 1,500 item x 7 language x 5 evaluator margin panel (margin = chosen - rejected).

    Tasks are the item ids as strings in numeric order, strata the subsets, backbones the
    evaluator file stems; a margin is NaN where either score is missing (35 cells).
    """
    frames = []
    for stem in MREWARDBENCH_EVALUATORS:
        frame = pd.read_csv(MREWARDBENCH_DIR / f"{stem}.csv")
        frames.append(frame.assign(backbone=stem,
                                   margin=frame["chosen_score"] - frame["rejected_score"]))
    runs = pd.concat(frames, ignore_index=True)
    items = np.sort(runs["item_numeric_id"].unique())
    cube = (runs.pivot_table(index=["item_numeric_id", "language"], columns="backbone",
                             values="margin", dropna=False)
            .reindex(pd.MultiIndex.from_product([items, MREWARDBENCH_LANGUAGES]))
            .reindex(columns=list(MREWARDBENCH_EVALUATORS)))
    strata = runs.drop_duplicates("item_numeric_id").set_index("item_numeric_id")["subset"]
    return Panel(values=cube.to_numpy(float).reshape(len(items), len(MREWARDBENCH_LANGUAGES), -1),
                 tasks=tuple(str(i) for i in items), languages=MREWARDBENCH_LANGUAGES,
                 backbones=tuple(MREWARDBENCH_EVALUATORS),
                 strata=tuple(strata.loc[items].astype(str).tolist()))


@pytest.fixture(scope="session")
def mrewardbench_panel() -> Panel:
    return load_mrewardbench_panel()


# --- DevAI multilingual panel (foundation) ---------------------------------------------------------
DEVAI_DIR = SHARED_DATA / "devai_ml_aaaj"
DEVAI_LANGUAGES = ("English", "Arabic", "Turkish", "Chinese", "Hindi", "Japanese", "Spanish",
                   "Swahili")
DEVAI_BACKBONES = ("gpt-4o", "gpt-5.4", "claude-sonnet-4.6", "gemini-3-flash-preview",
                   "deepseek-v3.2", "qwen3.5-9b")
# display names used by the published tables, in the same order
DEVAI_BACKBONE_LABELS = ("GPT-4o", "GPT-5.4", "Sonnet", "Gemini", "DeepSeek", "Qwen")


@pytest.fixture(scope="session")
def devai_runs() -> pd.DataFrame:
    """The validated 7,920-row devai run table (standard columns)."""
    from judgecal import io
    path = DEVAI_DIR / "run_level_scores.csv"
    return io.validate_runs(io.read_table(path), path)


@pytest.fixture(scope="session")
def devai_panel(devai_runs) -> Panel:
    """The devai task-level panel T[t, l, b] (55 x 8 x 6) in the published order."""
    from judgecal import io
    return io.build_panel(devai_runs, "devai", DEVAI_LANGUAGES, DEVAI_BACKBONES)
