"""Flattening the Agent-as-a-Judge JSON tree: exact agreement with the published flat tables."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import DEVAI_DIR

from polyjudge.data import io
from polyjudge.data.judgment_tree import COLUMNS, flatten_judgment_tree, response_status

RAW_ROOT = DEVAI_DIR / "raw_samples" / "benchmark_tests"
SAMPLE = ("gpt-4o", "Spanish", "OpenHands", "01_Image_Classification_ResNet18_Fashion_MNIST_DL")


def sample_path(root, backbone, language, framework, task, framework_again=None):
    return (root / backbone / language / framework / "judgment" / (framework_again or framework)
            / "agent_as_a_judge" / "gray_box" / f"{task}.json")


def in_raw_samples(frame: pd.DataFrame) -> pd.Series:
    return (frame["framework"] == "OpenHands") & frame["task"].str[:2].isin(["01", "39"])


@pytest.fixture(scope="module")
def flat() -> pd.DataFrame:
    return flatten_judgment_tree(RAW_ROOT)


def test_flattened_rows_equal_the_published_requirement_table(flat):
    published = pd.read_parquet(DEVAI_DIR / "requirement_judgments.parquet")
    expected = published[in_raw_samples(published)].reset_index(drop=True)
    # the table keeps requirement ids as the text written; the JSON has them as numbers
    expected = expected.astype({"requirement_id": flat["requirement_id"].dtype})
    assert len(flat) == 576 and list(flat.columns) == COLUMNS
    pd.testing.assert_frame_equal(flat, expected, check_exact=True)
    # the four statuses present in the samples, including the spaced "< SATISFIED >" tag
    assert flat["response_status"].value_counts().to_dict() == \
        {"sat_tag": 371, "unsat_tag": 174, "empty": 30, "no_tag": 1}


def test_run_scores_from_flattened_verdicts_equal_published_run_scores(flat):
    published = pd.read_parquet(DEVAI_DIR / "run_level_scores.parquet")
    expected = published[in_raw_samples(published)]
    runs = io.runs_from_requirements(flat, RAW_ROOT)
    assert len(runs) == len(expected) == 96
    merged = runs.merge(expected, on=io.RUN_KEYS, suffixes=("", "_published"), validate="1:1")
    assert len(merged) == 96
    for column in ("n_requirements", "n_satisfied", "score"):
        np.testing.assert_array_equal(merged[column], merged[f"{column}_published"])


@pytest.mark.parametrize("text, status", [
    ("", "empty"), ("  \n", "empty"), ("<SATISFIED>\nok", "sat_tag"),
    ("<UNSATISFIED> missing", "unsat_tag"), ("<UNSATISFIED> then <SATISFIED>", "both_tags"),
    ("< SATISFIED > spaced", "no_tag"), ("<satisfied> lower case", "no_tag"),
    ("no verdict at all", "no_tag")])
def test_response_status_rule(text, status):
    assert response_status(text) == status


# --- bad input --------------------------------------------------------------------------------

@pytest.fixture
def tree(tmp_path):
    """A one-file judgment tree in tmp_path: (root, path of the file, its parsed JSON)."""
    root = tmp_path / "tree"
    path = sample_path(root, *SAMPLE)
    path.parent.mkdir(parents=True)
    shutil.copy(sample_path(RAW_ROOT, *SAMPLE), path)
    return root, path, json.loads(path.read_text(encoding="utf-8"))


def test_copied_sample_flattens(tree):
    root, _, data = tree
    frame = flatten_judgment_tree(root)
    assert len(frame) == len(data["requirements"])
    assert frame[["backbone", "language", "framework", "task"]].drop_duplicates().values.tolist() \
        == [list(SAMPLE)]


def test_missing_root_and_empty_root(tmp_path):
    with pytest.raises(ValueError, match="is not a directory"):
        flatten_judgment_tree(tmp_path / "absent")
    (tmp_path / "empty" / "gpt-4o").mkdir(parents=True)
    with pytest.raises(ValueError, match="contains no JSON files"):
        flatten_judgment_tree(tmp_path / "empty")


@pytest.mark.parametrize("where", ["too_shallow", "framework_mismatch", "wrong_folder"])
def test_file_outside_the_layout(tree, where):
    root, path, _ = tree
    bad = {"too_shallow": root / "gpt-4o" / "English" / "task.json",
           "framework_mismatch": sample_path(root, "gpt-4o", "English", "OpenHands", "t",
                                             framework_again="MetaGPT"),
           "wrong_folder": root / "gpt-4o" / "English" / "OpenHands" / "judgment" / "OpenHands"
           / "agent_as_a_judge" / "black_box" / "t.json"}[where]
    bad.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, bad)
    with pytest.raises(ValueError, match="outside the judgment layout") as error:
        flatten_judgment_tree(root)
    assert str(bad) in str(error.value) and "gray_box" in str(error.value)


def test_unreadable_json(tree):
    root, path, _ = tree
    path.write_text('{"requirements": [', encoding="utf-8")
    with pytest.raises(ValueError, match="cannot be read as JSON") as error:
        flatten_judgment_tree(root)
    assert str(path) in str(error.value)


def _break(data, case):
    """Mutate a parsed judgment JSON into one bad-input case; returns the expected message."""
    verdicts = data["judge_stats"]
    if case == "no_judge_stats":
        del data["judge_stats"]
        return r"top level lacks key\(s\) \['judge_stats'\]"
    if case == "no_category":
        del data["requirements"][1]["category"]
        return r"requirements\[1\] lacks key\(s\) \['category'\]"
    if case == "no_reason":
        del verdicts[2]["llm_stats"]["reason"]
        return r"judge_stats\[2\].llm_stats lacks key\(s\) \['reason'\]"
    if case == "fewer_verdicts":
        verdicts.pop()
        return "one verdict per requirement"
    if case == "duplicate_index":
        verdicts[1]["requirement_index"] = 0
        return "one verdict per requirement"
    if case == "satisfied_null":
        verdicts[0]["satisfied"] = None
        return r"judge_stats\[0\].satisfied is None"
    if case == "tokens_text":
        verdicts[0]["llm_stats"]["input_tokens"] = "1800"
        return r"judge_stats\[0\].llm_stats.input_tokens is '1800'"
    if case == "not_an_object":
        return None
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["no_judge_stats", "no_category", "no_reason", "fewer_verdicts",
                                  "duplicate_index", "satisfied_null", "tokens_text",
                                  "not_an_object"])
def test_malformed_judgment(tree, case):
    root, path, data = tree
    message = _break(data, case)
    path.write_text(json.dumps([] if case == "not_an_object" else data), encoding="utf-8")
    with pytest.raises(ValueError, match=message or "the top level is a list") as error:
        flatten_judgment_tree(root)
    assert str(path) in str(error.value) and "expected:" in str(error.value)
