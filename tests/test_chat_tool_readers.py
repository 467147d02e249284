"""Other evaluation tools' files read with no code beyond the source mapping: AlpacaEval
annotations, FastChat's MT-Bench judgments and Arena-Hard-Auto's, in the formats the tools
write (tests/tool_files.py), with planted values; the tools' own loaders where installed."""
import contextlib
import io

import numpy as np
import pandas as pd
import pytest

import polyjudge
from polyjudge.data.errors import InputError
from tool_files import (ALPACA_PREFERENCES, ARENA_EXPECTED, INSTRUCTIONS, PAIR, SINGLE,
                        alpaca_annotations, arena_judgments, fastchat_pair, fastchat_single,
                        write_jsonl)

EN = {"language": "en"}


def runs(tmp_path, source, **kwargs) -> pd.DataFrame:
    return polyjudge.read_runs(source, base_dir=tmp_path, **kwargs)


def error_of(tmp_path, source, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        runs(tmp_path, source, **kwargs)
    return str(caught.value)


# --- AlpacaEval ---------------------------------------------------------------------------------

ALPACA = {"path": "results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json",
          "format": "alpaca_eval", "constants": EN}


def alpaca_win_rate(values) -> float:
    """AlpacaEval's win_rate: mean of preference - 1 (0 read as 1.5), nulls left out, x 100."""
    kept = [1.5 if v == 0 else v for v in values if v is not None]
    return 100 * float(np.mean(kept)) - 100


def test_alpaca_eval_runs_are_the_preferences_and_give_the_win_rate(tmp_path, caplog):
    alpaca_annotations(tmp_path)
    table = runs(tmp_path, ALPACA, missing="omit")
    assert len(table) == 11  # 12 records, one null preference, counted in the log
    assert "model-a/weighted_alpaca_eval_gpt4_turbo/annotations.json: 1 of 6 records have no " \
        "score and are left out (`missing: omit`)" in caplog.text
    assert set(table["backbone"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    assert set(table["language"]) == {"en"} and set(table["task"]) == set(INSTRUCTIONS)
    for model, values in ALPACA_PREFERENCES.items():
        mine = table.loc[table["framework"] == model, "score"]
        assert mine.mean() * 100 == pytest.approx(alpaca_win_rate(values), abs=1e-9)
    a = table[table["framework"] == "model-a"].set_index("task")["score"]
    assert a[INSTRUCTIONS[2]] == 0.5 and a[INSTRUCTIONS[5]] == 0.5  # ties 1.5 and 0 kept as ties
    assert a[INSTRUCTIONS[3]] == pytest.approx(0.83)


def test_alpaca_eval_null_preference_is_missing_not_a_score(tmp_path):
    alpaca_annotations(tmp_path)
    message = error_of(tmp_path, ALPACA)
    assert "model-a/weighted_alpaca_eval_gpt4_turbo/annotations.json" in message
    assert "1 of 6 records have no score: `preference` is null" in message
    assert "annotations.json#5" in message and "missing" in message


def test_alpaca_eval_order_tasks_join_translated_instructions(tmp_path):
    """With the instructions translated, the record's place names the item (`task: order`)."""
    alpaca_annotations(tmp_path, preferences={"model-a": [2, 1, 1.5, 1, 2, 1]})
    table = runs(tmp_path, {**ALPACA, "task": "order"})
    assert table.sort_values("task", key=lambda t: t.astype(int))["task"].tolist() == \
        [str(n) for n in range(1, 7)]


def test_alpaca_eval_repeated_instructions_are_refused_with_the_setting(tmp_path):
    path = alpaca_annotations(tmp_path, preferences={"model-a": [2, 1]})[0]
    records = pd.read_json(path).to_dict("records")
    records[1]["instruction"] = records[0]["instruction"]
    path.write_text(pd.Series(records).to_json(orient="values"), encoding="utf-8")
    message = error_of(tmp_path, ALPACA)
    assert "2 records give the same run" in message and "`task: order`" in message


def test_alpaca_eval_file_of_another_tool_names_file_and_field(tmp_path):
    fastchat_single(tmp_path)
    message = error_of(tmp_path, {"path": "model_judgment/gpt-4_single.jsonl",
                                  "format": "alpaca_eval", "constants": EN})
    assert "is not an AlpacaEval annotations file" in message
    (tmp_path / "copy.json").write_text(
        (tmp_path / "model_judgment/gpt-4_single.jsonl").read_text().splitlines()[0])
    message = error_of(tmp_path, {"path": "copy.json", "format": "alpaca_eval",
                                  "constants": EN})
    assert "copy.json" in message and "lack the field `instruction`" in message


def test_a_tool_source_without_the_language_says_constants(tmp_path):
    alpaca_annotations(tmp_path)
    message = error_of(tmp_path, {**ALPACA, "constants": None}, missing="omit")
    assert "do not say the language" in message and "constants: {language: <value>}" in message


def test_alpaca_eval_mean_equals_alpaca_eval_own_win_rate(tmp_path):
    metrics = pytest.importorskip("alpaca_eval.metrics")
    for path in alpaca_annotations(tmp_path):
        theirs = metrics.get_winrate(pd.read_json(path))["win_rate"]
        mine = runs(tmp_path, {**ALPACA, "path": str(path.relative_to(tmp_path))},
                    missing="omit")["score"].mean() * 100
        assert mine == pytest.approx(theirs, abs=1e-9)


# --- FastChat ------------------------------------------------------------------------------------

FASTCHAT = {"path": "model_judgment/gpt-4_single.jsonl", "format": "fastchat", "constants": EN}


def test_fastchat_single_scores_per_question_and_turn(tmp_path):
    fastchat_single(tmp_path)
    table = runs(tmp_path, FASTCHAT, missing="omit")
    assert len(table) == 7  # one -1 score left out
    assert set(table["task"]) == {"81/turn1", "81/turn2", "82/turn1", "82/turn2"}
    assert set(table["stratum"]) == {"turn 1", "turn 2"} and set(table["backbone"]) == {"gpt-4"}
    for model in ("vicuna-13b", "llama-13b"):
        kept = [s for (_, _, m), s in SINGLE.items() if m == model and s != -1]
        assert table.loc[table["framework"] == model, "score"].mean() == np.mean(kept)


def test_fastchat_minus_one_is_missing_and_named(tmp_path):
    fastchat_single(tmp_path)
    message = error_of(tmp_path, FASTCHAT)
    assert "gpt-4_single.jsonl: 1 of 8 records have no score: `score` is -1" in message
    assert "gpt-4_single.jsonl:4" in message


def test_fastchat_pair_verdicts_follow_show_result(tmp_path):
    fastchat_pair(tmp_path)
    source = {**FASTCHAT, "path": "model_judgment/gpt-4_pair.jsonl"}
    table = runs(tmp_path, source, missing="omit").set_index(["framework", "task"])["score"]
    assert len(table) == 7  # one game's winner is `error`
    assert table[("vicuna-13b", "81/turn1")] == 1 and table[("vicuna-13b", "81/turn2")] == 0
    assert table[("vicuna-13b", "82/turn1")] == 0.5  # the two orders disagree: a tie
    assert table[("llama-13b", "82/turn2")] == 0.5
    message = error_of(tmp_path, source)
    assert "gpt-4_pair.jsonl" in message and "winner is `error`" in message


def test_fastchat_pairwise_all_asks_what_is_judged(tmp_path):
    games = {**PAIR, (81, 1, "vicuna-13b", "llama-13b"): ("model_1", "model_1")}
    fastchat_pair(tmp_path, games=games)
    source = {**FASTCHAT, "path": "model_judgment/gpt-4_pair.jsonl"}
    message = error_of(tmp_path, source, missing="omit")
    assert "the field `model_2` holds 2 models" in message and "`system: pair`" in message
    table = runs(tmp_path, {**source, "system": "pair"}, missing="omit")
    assert "vicuna-13b vs llama-13b" in set(table["framework"])


def test_fastchat_single_and_pair_in_one_folder_ask_which(tmp_path):
    fastchat_single(tmp_path)
    fastchat_pair(tmp_path)
    source = {**FASTCHAT, "path": "model_judgment"}
    message = error_of(tmp_path, source, missing="omit")
    assert "`judgments: single` or `judgments: pair`" in message
    assert len(runs(tmp_path, {**source, "judgments": "pair"}, missing="omit")) == 7
    message = error_of(tmp_path, {**FASTCHAT, "judgments": "pair"}, missing="omit")
    assert "gpt-4_single.jsonl" in message and "holds single judgments only" in message


def test_fastchat_file_of_another_tool_names_file_and_field(tmp_path):
    arena_judgments(tmp_path)
    message = error_of(tmp_path, {**FASTCHAT, "path": "model_judgment/gpt-4.1/model-x.jsonl"})
    assert "model-x.jsonl" in message and "neither `score`" in message
    path = fastchat_single(tmp_path)
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"turn"', '"round"')
    path.write_text("\n".join(lines) + "\n")
    message = error_of(tmp_path, FASTCHAT, missing="omit")
    assert "1 of 8 records lack the field `turn` (first: gpt-4_single.jsonl:3" in message


def show_result(mode: str, path) -> str:
    show = pytest.importorskip("fastchat.llm_judge.show_result")
    import argparse
    args = argparse.Namespace(input_file=str(path), bench_name="mt_bench", model_list=None,
                              judge_model="gpt-4", baseline_model=None, mode=mode)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        (show.display_result_single if mode == "single" else show.display_result_pairwise)(args)
    return printed.getvalue()


def test_fastchat_means_equal_show_result(tmp_path):
    path = fastchat_single(tmp_path)
    text = show_result("single", path).split("Average")[1]
    table = runs(tmp_path, FASTCHAT, missing="omit").groupby("framework")["score"].mean()
    for model, mean in table.items():
        shown = next(line for line in text.splitlines() if line.startswith(model))
        assert float(shown.split()[-1]) == pytest.approx(mean, abs=1e-6)
    path = fastchat_pair(tmp_path)
    text = show_result("pairwise-baseline", path)
    table = runs(tmp_path, {**FASTCHAT, "path": "model_judgment/gpt-4_pair.jsonl"},
                 missing="omit").groupby("framework")["score"].mean()
    for model, mean in table.items():  # win_rate_adjusted: ties count a half
        shown = next(line for line in text.splitlines() if line.startswith(model))
        assert float(shown.split()[-1]) == pytest.approx(mean, abs=1e-4)


# --- Arena-Hard-Auto ----------------------------------------------------------------------------

ARENA_SOURCE = {"path": "model_judgment", "format": "arena_hard", "constants": EN}


@pytest.mark.parametrize("version", [2, 1])
def test_arena_hard_both_games_to_an_ordinal_score(tmp_path, version):
    arena_judgments(tmp_path, version=version)
    table = runs(tmp_path, ARENA_SOURCE, missing="omit")
    assert set(table["backbone"]) == {"gpt-4.1"}  # the folder
    got = table.set_index(["task", "framework"])["score"].to_dict()
    assert got == ARENA_EXPECTED
    assert ("stratum" in table) == (version == 2)


def test_arena_hard_one_game_and_a_null_label(tmp_path):
    arena_judgments(tmp_path)
    first = runs(tmp_path, {**ARENA_SOURCE, "games": "first"})
    assert len(first) == 6 and first["score"].between(-2, 2).all()
    message = error_of(tmp_path, ARENA_SOURCE)
    assert "model-x.jsonl: 1 of 3 records have no score" in message
    assert "model-x.jsonl:3" in message


def test_arena_hard_judge_of_folder_and_record_disagree(tmp_path):
    arena_judgments(tmp_path)
    path = tmp_path / "model_judgment" / "gpt-4.1" / "model-y.jsonl"
    renamed = path.parent.parent / "my-judge" / path.name
    renamed.parent.mkdir()
    path.rename(renamed)
    message = error_of(tmp_path, ARENA_SOURCE, missing="omit")
    assert "model-y.jsonl" in message and "`judge: folder`" in message
    table = runs(tmp_path, {**ARENA_SOURCE, "judge": "record"}, missing="omit")
    assert set(table["backbone"]) == {"gpt-4.1"}


def test_arena_hard_file_of_another_tool_and_an_unknown_label(tmp_path):
    fastchat_single(tmp_path)
    message = error_of(tmp_path, {**ARENA_SOURCE, "path": "model_judgment/gpt-4_single.jsonl"})
    assert "gpt-4_single.jsonl" in message and "lack the field `games`" in message
    write_jsonl(tmp_path / "j" / "judge" / "m.jsonl",
                [{"uid": "q", "model": "m", "games": [{"score": "A>B"}, {"score": "A>>>B"}]}])
    message = error_of(tmp_path, {**ARENA_SOURCE, "path": "j"})
    assert "m.jsonl: 1 game-2 `score` labels" in message and "A>>>B" in message


def test_unknown_reader_option_is_named(tmp_path):
    arena_judgments(tmp_path)
    with pytest.raises(InputError) as caught:
        runs(tmp_path, {**ARENA_SOURCE, "games": "all"})
    assert "`games`" in str(caught.value) and "both" in str(caught.value)
    with pytest.raises(InputError) as caught:
        runs(tmp_path, {**ARENA_SOURCE, "turns": 2})
    assert "unknown key(s) ['turns']" in str(caught.value)
