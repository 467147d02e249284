"""Shared pytest fixtures (each block is self-contained; add, do not rewrite)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgecal.panel import Panel

# the repository's own copy of the default panels' inputs (data/README.md)
DATA = Path(__file__).resolve().parents[1] / "data"


# --- M-RewardBench external panel (issue 6) ------------------------------------------------------
MREWARDBENCH_DIR = DATA / "mrewardbench_panel"
MREWARDBENCH_ARTIFACTS = (DATA / "cbc_paper_artifacts" / "data" / "external_validation"
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

    Read through the workflow's own loader: tasks are the item ids in numeric order, strata the
    subsets, backbones the evaluator file stems; a margin is NaN where a score is missing (35).
    """
    from judgecal import io
    runs = io.load_preference_margins({stem: f"{stem}.parquet" for stem in MREWARDBENCH_EVALUATORS},
                                      MREWARDBENCH_DIR)
    runs = io.validate_runs(runs, "mrewardbench", score_range=None, missing="omit")
    return io.build_panel(runs, "mrewardbench", MREWARDBENCH_LANGUAGES,
                          list(MREWARDBENCH_EVALUATORS), allow_missing_cells=True)


@pytest.fixture(scope="session")
def mrewardbench_panel() -> Panel:
    return load_mrewardbench_panel()


# --- DevAI multilingual panel (foundation) ---------------------------------------------------------
DEVAI_DIR = DATA / "devai_ml_aaaj"
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
    path = DEVAI_DIR / "run_level_scores.parquet"
    return io.validate_runs(io.read_table(path), path)


@pytest.fixture(scope="session")
def devai_panel(devai_runs) -> Panel:
    """The devai task-level panel T[t, l, b] (55 x 8 x 6) in the published order."""
    from judgecal import io
    return io.build_panel(devai_runs, "devai", DEVAI_LANGUAGES, DEVAI_BACKBONES)
