"""What running against a real llama.cpp server revealed, checked without a server: messages that
name why a collected panel is short (polyjudge.judges.diagnosis), the parse rule for cut-off
replies, the server quirks a shard reports, item texts that look like numbers."""
import pandas as pd

import polyjudge

from polyjudge.judges import AnswerFormat, Endpoint
from polyjudge.judges import protocols
from polyjudge.judges.diagnosis import judge_ls_shortfall, missing_scores_note
from polyjudge.judges.parse import parse_answer
from polyjudge.judges.stages import server_quirks

ENDPOINTS = {"tr": {"max_tokens": 256}, "judge": {"max_tokens": 32, "structured_output": False}}


def verdicts(statuses: dict) -> pd.DataFrame:
    """condition -> list of statuses (one judge, items 0..n-1, original order)."""
    rows = [{"item": str(i), "subset": "s", "judge": "judge", "condition": c, "order": "original",
             "verdict": "A" if s == "ok" else "", "gold": "1", "status": s, "truncated": False}
            for c, values in statuses.items() for i, s in enumerate(values)]
    return pd.DataFrame(rows)


def texts(n_ok: int, n_cut: int) -> pd.DataFrame:
    status = ["ok"] * n_ok + ["parse_failure"] * n_cut
    return pd.DataFrame({"item": "0", "subset": "s", "field": "input", "text": "",
                         "status": status, "truncated": [False] * n_ok + [True] * n_cut})


def test_translations_cut_off_name_the_stage_counts_files_and_setting():
    # the case: every translation cut off, every zh judgment no_input: the analysis
    # still runs on the reference (a warning), and the warning says why and what to change
    table = verdicts({"en": ["ok", "ok"], "zh": ["no_input", "no_input"]})
    error, warning = judge_ls_shortfall("ls", table, {"zh": texts(0, 6)}, "en", "tr", ENDPOINTS)
    assert error is None
    assert "no usable judgment in condition(s) ['zh']" in warning
    assert "translate (tr) zh: 6 calls: 6 unparseable (6 cut off at max_tokens)" in warning
    assert "judge_pairwise judge zh: 2 calls: 2 no_input" in warning
    assert "results/ls/collect/status.csv" in warning and "audit.csv" in warning
    assert "raise endpoints.tr.max_tokens (now 256)" in warning


def test_no_usable_reference_judgment_is_an_error_naming_the_parse_failures():
    table = verdicts({"en": ["parse_failure"] * 3, "zh": ["parse_failure", "ok", "ok"]})
    error, warning = judge_ls_shortfall("ls", table, {"zh": texts(6, 0)}, "en", "tr", ENDPOINTS)
    assert warning is None
    assert "judge(s) ['judge'] have no usable judgment in the reference condition 'en'" in error
    assert "judge_pairwise judge en: 3 calls: 3 unparseable" in error
    assert "set endpoints.judge.structured_output (now False) to true" in error


def test_a_complete_collection_has_nothing_to_say():
    table = verdicts({"en": ["ok"], "zh": ["ok", "parse_failure"]})
    assert judge_ls_shortfall("ls", table, {"zh": texts(3, 0)}, "en", "tr", ENDPOINTS) == (None,
                                                                                          None)
    scores = pd.DataFrame({"chosen_status": ["ok"], "rejected_status": ["ok"],
                           "chosen_truncated": [False], "rejected_truncated": [False]})
    assert missing_scores_note("pw", {"judge": scores}, ENDPOINTS) is None


def test_missing_scores_name_the_parse_failures_behind_them():
    scores = pd.DataFrame({"chosen_status": ["ok", "parse_failure", "parse_failure"],
                           "rejected_status": ["failed", "ok", "ok"],
                           "chosen_truncated": [False, True, False],
                           "rejected_truncated": [False] * 3})
    note = missing_scores_note("pw", {"judge": scores}, ENDPOINTS)
    assert "judge_pointwise judge: 6 calls: 3 ok, 2 unparseable, 1 failed (1 cut off" in note
    assert "raise endpoints.judge.max_tokens (now 32)" in note
    assert "structured_output" in note and "status.csv" in note and "missing: omit" in note


def test_a_cut_off_reply_is_never_an_answer():
    score = AnswerFormat(kind="integer", pattern=r"([1-5])", minimum=1, maximum=5)
    assert parse_answer("The score is 3 because", score) == (3, "ok")
    assert parse_answer("The score is 3 because", score, truncated=True) == (None,
                                                                            "parse_failure")


def test_server_quirks_are_reported():
    endpoint = Endpoint(name="smol", base_url="http://127.0.0.1:1/v1", model="smol-t0")
    replies = [{"finish_reason": "stop", "served_model": "smollm2-135m", "usage_reported": True},
               {"finish_reason": "content_filter", "served_model": "smol-t0",
                "usage_reported": False},
               {"finish_reason": "stop", "served_model": "x", "cached": True}]
    lines = server_quirks(replies, endpoint)
    assert any("answered as model ['smollm2-135m'], not 'smol-t0'" in line for line in lines)
    assert any("1 of 2 replies carried no usage" in line for line in lines)
    assert any("['content_filter']" in line for line in lines)
    assert server_quirks(replies[:1], Endpoint(name="s", base_url="u", model="smollm2-135m")) == []


def test_item_texts_that_look_like_numbers_stay_as_written(tmp_path):
    # LLMBar's arithmetic items: a column of answers such as "5" and "22.5" was read as floats
    # (the prompt showed "5.0", and the reference texts could not be written)
    path = tmp_path / "items.csv"
    path.write_text("subset,item_index,input,output_1,output_2,label\n"
                    "s,007,Divide 45 by 9,22.5,5,2\ns,8,Find the 3rd prime,5,1e3,1\n")
    items = protocols.read_items(path, "pairwise")
    assert items["output_1"].tolist() == ["22.5", "5"]
    assert items["output_2"].tolist() == ["5", "1e3"] and items["item_index"][0] == "007"
    assert protocols.reference_texts(items)["text"].map(type).eq(str).all()


def test_judge_ls_runs_when_every_translation_is_unusable():
    # the collection: every translation cut off, so every item is flagged by the audit
    # and every zh judgment is no_input; the sensitivity table (flips without flagged items) had
    # nothing left and failed with "reference condition 'en' is not among the conditions []"
    table = verdicts({"en": ["ok", "ok"], "zh": ["no_input", "no_input"]})
    reference = pd.DataFrame({"item": ["0", "1"], "subset": "s", "field": "input",
                              "text": ["Divide 45 by 9", "Add 3.7 and 6.2"]})
    cut = reference.assign(text="")
    result = polyjudge.judge_ls(table, reference="en", reference_texts=reference,
                               variant_texts={"zh": (cut, "full")})
    assert set(result.sensitivity["items"]) == {"all"}
    assert (result.flips["n_pairs"] == 0).all() and result.audit["flagged"].all()
    assert "no flip rate" in result.summary and "no flip rates without them" in result.summary
