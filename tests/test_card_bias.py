"""The judge card's biases (polyjudge.analyses.card.bias): known answers on hand-made panels,
the first-seat share against Judge-LS's position table on LLMBar, the length slope against
statsmodels' OLS, planted biases found in the one language they are planted in, and the card's
inputs and messages (the API, the CLI, the LLMBar texts).
"""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import DATA

import polyjudge
from polyjudge.analyses.card import (ALL_LANGUAGES, BIAS_COLUMNS, BIAS_TEST_COLUMNS, card_bias,
                                     choice_verdicts, with_output_lengths)
from polyjudge.analyses.judge_ls import load_llmbar, normalise_choices, position_table
from polyjudge.data.errors import InputError


def pairwise_panel(rng, n_items, languages=("en", "sw"), judges=("a", "b"), delta=None,
                   slope=None):
    """Both orders of every item for every judge and language; ``delta`` / ``slope`` map a
    (language, judge) to its planted seat preference / length slope (a linear probability)."""
    delta, slope = delta or {}, slope or {}
    gold = rng.integers(1, 3, n_items)
    better = np.where(gold == 1, 1.0, -1.0)
    x = np.clip(-0.8 * better + rng.normal(0, 1, n_items), -2, 2)
    strength = rng.uniform(0.1, 0.3, n_items)
    rows = []
    for language in languages:
        for judge in judges:
            for first in (1.0, 2.0):
                p1 = (0.5 + strength * better + slope.get((language, judge), 0.0) * x
                      + delta.get((language, judge), 0.0) * (1 if first == 1 else -1))
                rows.append(pd.DataFrame({
                    "item": [f"{i}|{first:.0f}" for i in range(n_items)],
                    "cluster": np.arange(n_items).astype(str), "language": language,
                    "judge": judge, "verdict": np.where(rng.random(n_items) < p1, 1.0, 2.0),
                    "first_output": first, "log2_length_ratio": x}))
    frame = pd.concat(rows, ignore_index=True)
    reference = pd.Series(np.tile(gold, 2).astype(float),
                          index=[f"{i}|{o}" for o in (1, 2) for i in range(n_items)])
    return frame, reference


def test_position_known_answer_on_two_items():
    # item 1: the first seat chosen in both orders (output 1 first, then output 2 first);
    # item 2: the second seat once, and a tie (not decisive): 2 of 3 decisive verdicts name the
    # answer in the first seat, 2/3 - 1/2 = 1/6
    frame = pd.DataFrame({"item": ["1|o", "1|s", "2|o", "2|s"], "cluster": ["1", "1", "2", "2"],
                          "language": "en", "judge": "j", "verdict": [1.0, 2.0, 2.0, 0.0],
                          "first_output": [1.0, 2.0, 1.0, 2.0]})
    table, tests, missing = card_bias(frame, replicates=0)
    row = table[(table["bias"] == "position") & (table["language"] == "en")].iloc[0]
    assert row["estimate"] == pytest.approx(1 / 6)
    assert (row["n_items"], row["n_clusters"]) == (3, 2)
    assert np.isnan(row["ci_low"])  # no replicates, no interval
    assert list(table.columns) == BIAS_COLUMNS and list(tests.columns) == BIAS_TEST_COLUMNS
    assert set(missing) == {"length", "self_preference"}


def test_self_preference_known_answer():
    # judges a (family A) and b (family B); item 1 written by A, item 2 by B.
    # a: d = 5 - 3 = 2 on its own answer, 3 - 4 = -1 on the other: 2 - (-1) = 3
    # b: d = 4 - 3 = 1 on its own answer, 3 - 5 = -2 on the other: 1 - (-2) = 3
    frame = pd.DataFrame({"item": ["1", "2", "1", "2"], "language": "en",
                          "judge": ["a", "a", "b", "b"], "verdict": [5.0, 3.0, 3.0, 4.0],
                          "author": ["ma", "mb", "ma", "mb"]})
    families = {"a": "A", "ma": "A", "b": "B", "mb": "B"}
    table, _, missing = card_bias(frame, families=families, replicates=0)
    rows = table[table["language"] == "en"].set_index("judge")["estimate"]
    assert rows.to_dict() == pytest.approx({"a": 3.0, "b": 3.0})
    assert set(missing) == {"position", "length"}
    # without the families nothing says which answers are a judge's own
    assert card_bias(frame, replicates=0)[0].empty


def test_first_seat_share_is_judge_ls_first_seat_rate_on_llmbar():
    verdicts_file = DATA / "llmbar" / "llmbar_judge_verdicts_long.parquet"
    choices = normalise_choices(load_llmbar(verdicts_file))
    choices = choices[choices["condition"].isin(["Vanilla", "CoT"])]
    verdicts, reference = choice_verdicts(choices)
    table, _, _ = card_bias(verdicts, reference, replicates=0)
    ours = table[table["language"] != ALL_LANGUAGES].set_index(["judge", "language"])["estimate"]
    peer = position_table(choices)
    peer = peer[peer["subset"] == "all"].set_index(["judge", "condition"])["first_seat_rate"]
    assert np.allclose(ours.sort_index().to_numpy() + 0.5,
                       peer.reindex(ours.sort_index().index).to_numpy(), atol=1e-12)


def test_length_slope_equals_statsmodels_ols_and_the_reference_matters():
    rng = np.random.default_rng(4)
    frame, reference = pairwise_panel(rng, 300, slope={("sw", "a"): 0.1})
    table, _, _ = card_bias(frame, reference, replicates=0)
    cell = frame[(frame["language"] == "sw") & (frame["judge"] == "a")]
    y = (cell["verdict"] == 1).astype(float)
    gold_first = (reference.reindex(cell["item"]).to_numpy() == 1).astype(float)
    X = sm.add_constant(np.column_stack([cell["log2_length_ratio"], gold_first]))
    peer = sm.OLS(y.to_numpy(), X).fit().params[1]   # statsmodels OLS, the length coefficient
    ours = table.set_index(["bias", "language", "judge"]).loc[("length", "sw", "a"), "estimate"]
    assert ours == pytest.approx(peer, abs=1e-9)
    # without the reference the longer-is-worse gold leaks into the slope
    unadjusted = card_bias(frame, None, replicates=0)[0].set_index(
        ["bias", "language", "judge"]).loc[("length", "en", "a")]
    assert unadjusted["estimate"] < -0.05 and "not adjusted" in unadjusted["unit"]


def test_planted_biases_are_found_in_their_language_only():
    rng = np.random.default_rng(11)
    frame, reference = pairwise_panel(rng, 400, delta={("sw", "a"): 0.15},
                                      slope={("sw", "b"): 0.12})
    table, tests, _ = card_bias(frame, reference, replicates=300, seed=2)
    cells = table[table["language"] != ALL_LANGUAGES].set_index(["bias", "language", "judge"])
    excludes = (cells["ci_low"] > 0) | (cells["ci_high"] < 0)
    assert set(excludes[excludes].index) == {("position", "sw", "a"), ("length", "sw", "b")}
    assert cells.loc[("position", "sw", "a"), "ci_low"] < 0.15 < cells.loc[
        ("position", "sw", "a"), "ci_high"]
    flagged = tests[tests["q_value"] < 0.05]
    assert set(zip(flagged["bias"], flagged["judge"])) == {("position", "a"), ("length", "b")}
    assert (tests["df"] == 1).all()


def test_planted_self_preference_and_pointwise_length_through_the_api():
    rng = np.random.default_rng(5)
    n, langs = 300, ["en", "sw"]
    quality = np.round(rng.normal(0, 1, n) * 2) / 2   # few categories keep the tables small
    size = np.exp2(8 + 0.6 * quality + rng.normal(0, 1, n))
    author = rng.choice(["gpt-x", "claude-y", "other"], n)
    rows = []
    for language in langs:
        for judge, family in (("gpt-j", "openai"), ("claude-j", "anthropic")):
            own = (author == ("gpt-x" if family == "openai" else "claude-y"))
            bump = 1.0 * own if (language == "sw" and judge == "gpt-j") else 0.0
            slope = 0.5 if (language == "en" and judge == "claude-j") else 0.0
            rows.append(pd.DataFrame({"q": np.arange(n).astype(str), "lang": language,
                                      "model": judge, "author": author, "chars": size,
                                      "score": np.round(2 * (quality + bump + slope
                                                             * np.log2(size)
                                                             + rng.normal(0, 0.5, n))) / 2}))
    verdicts = pd.concat(rows, ignore_index=True)
    human = pd.DataFrame({"q": np.arange(n).astype(str), "label": quality})
    card = polyjudge.judge_card(verdicts, human, item="q", language="lang", judge="model",
                                verdict="score", level="interval", length="chars",
                                author="author", replicates=200,
                                families={"gpt-j": "openai", "gpt-x": "openai",
                                          "claude-j": "anthropic", "claude-y": "anthropic"})
    cells = card.bias[card.bias["language"].isin(langs)].set_index(["bias", "language",
                                                                       "judge"])
    excludes = (cells["ci_low"] > 0) | (cells["ci_high"] < 0)
    # with two judges, one judge's self-preference is the other's relative dislike of those
    # answers: claude-j's cell in sw moves too, by half (half the answers it did not write are
    # gpt-x's)
    assert set(excludes[excludes].index) == {("self_preference", "sw", "gpt-j"),
                                             ("self_preference", "sw", "claude-j"),
                                             ("length", "en", "claude-j")}
    assert cells.loc[("length", "en", "claude-j"), "estimate"] == pytest.approx(0.5, abs=0.05)
    assert cells.loc[("self_preference", "sw", "claude-j"), "estimate"] == pytest.approx(
        0.5 * cells.loc[("self_preference", "sw", "gpt-j"), "estimate"], abs=0.2)
    assert set(card.bias_not_computed) == {"position"}
    with pytest.raises(InputError, match="not above 0"):
        polyjudge.judge_card(verdicts.assign(chars=0), item="q", language="lang",
                             judge="model", verdict="score", length="chars", replicates=0)


def test_no_bias_inputs_give_empty_tables_and_reasons():
    frame = pd.DataFrame({"item": ["1", "2"], "language": "en", "judge": "j",
                          "verdict": [1.0, 0.0]})
    table, tests, missing = card_bias(frame, replicates=10)
    assert table.empty and tests.empty and list(table.columns) == BIAS_COLUMNS
    assert set(missing) == {"position", "length", "self_preference"}


def test_llmbar_output_lengths_and_a_missing_column():
    texts = pd.DataFrame({"subset": ["N", "N"], "item_index": [0, 1],
                          "output_1": ["abcd", "ab"], "output_2": ["ab", ""]})
    verdicts = pd.DataFrame({"cluster": ["N|0", "N|1", "N|7"]})
    ratio = with_output_lengths(verdicts, texts, "items.parquet")["log2_length_ratio"]
    assert ratio.iloc[0] == pytest.approx(1.0) and ratio.iloc[1:].isna().all()
    with pytest.raises(InputError, match="items.parquet.*'output_2'"):
        with_output_lengths(verdicts, texts.drop(columns="output_2"), "items.parquet")


def test_the_page_marks_the_cells_whose_interval_excludes_zero(tmp_path):
    from polyjudge.report.page.card import bias_parts
    from polyjudge.report.page.results_folder import Results
    frame, reference = pairwise_panel(np.random.default_rng(3), 200,
                                      delta={("sw", "a"): 0.2})
    table, tests, _ = card_bias(frame, reference, replicates=200)
    (tmp_path / "p" / "card").mkdir(parents=True)
    table.to_csv(tmp_path / "p" / "card" / "bias.csv", index=False)
    tests.to_csv(tmp_path / "p" / "card" / "bias_tests.csv", index=False)
    tables, charts, note = bias_parts(Results(tmp_path), "p")
    assert [t["id"] for t in tables] == ["p.card_bias", "p.card_bias_tests"]
    assert [c["id"] for c in charts] == ["p.card_bias_position", "p.card_bias_length"]
    cells = {(r["language"], r["judge"]): r["label"]
             for r in charts[0]["spec"]["data"]["values"]}
    marked = {cell for cell, label in cells.items() if label.endswith("*")}
    excludes = table[(table["bias"] == "position") & (table["language"] != ALL_LANGUAGES)
                     & ((table["ci_low"] > 0) | (table["ci_high"] < 0))]
    assert marked == set(zip(excludes["language"], excludes["judge"])) and ("sw", "a") in marked
    assert "Not computed: self-preference" in note


def test_the_card_command_writes_the_biases(tmp_path):
    from polyjudge.cli import main
    rng = np.random.default_rng(2)
    rows = [pd.DataFrame({"q": np.arange(40), "lang": lang, "model": judge,
                          "chars": rng.integers(50, 500, 40),
                          "writer": rng.choice(["gpt-x", "claude-y"], 40),
                          "score": rng.integers(1, 6, 40)})
            for lang in ("en", "de") for judge in ("gpt-j", "claude-j")]
    pd.concat(rows).to_csv(tmp_path / "v.csv", index=False)
    assert main(["card", str(tmp_path / "v.csv"), "--item", "q", "--language", "lang", "--judge",
          "model", "--verdict", "score", "--length", "chars", "--author", "writer",
          "--family", "gpt-j=openai", "--family", "gpt-x=openai", "--family",
          "claude-j=anthropic", "--family", "claude-y=anthropic", "--replicates", "50",
          "-o", str(tmp_path / "out")]) == 0
    bias = pd.read_csv(tmp_path / "out" / "bias.csv")
    assert list(bias.columns) == BIAS_COLUMNS
    assert set(bias["bias"]) == {"length", "self_preference"}
    tests = pd.read_csv(tmp_path / "out" / "bias_tests.csv")
    assert list(tests.columns) == BIAS_TEST_COLUMNS and len(tests) == 4


def test_the_page_shows_no_empty_bias_table_and_says_why(tmp_path):
    from polyjudge.report.page.card import bias_parts
    from polyjudge.report.page.results_folder import Results
    (tmp_path / "p" / "card").mkdir(parents=True)
    pd.DataFrame(columns=BIAS_COLUMNS).to_csv(tmp_path / "p" / "card" / "bias.csv", index=False)
    tables, charts, note = bias_parts(Results(tmp_path), "p")
    assert tables == [] and charts == []
    assert note.count("needs") == 3
