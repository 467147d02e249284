"""Judge-LS: known answers, peers (statsmodels, scipy), upstream LLMBar statistics, planted
truth."""
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from conftest import DATA
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from polyjudge.analyses import judge_ls as jl
from polyjudge.data.errors import InputError

LLMBAR_DIR = DATA / "llmbar"
LLMBAR_CSV = LLMBAR_DIR / "llmbar_judge_verdicts_long.parquet"
# the 325 upstream statistics.json, one row each (subset, evaluator, strategy + their keys)
LLMBAR_STATISTICS = LLMBAR_DIR / "upstream_statistics.csv"
LLMBAR_JUDGES = {"GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon"}


def verdicts(rows, **extra):
    """Verdict table from (item, judge, condition, order, verdict, gold) tuples, subset 's'."""
    frame = pd.DataFrame(rows, columns=["item", "judge", "condition", "order", "verdict", "gold"])
    return frame.assign(subset="s", **extra)[jl.VERDICT_COLUMNS + list(extra)]


@pytest.fixture(scope="module")
def llmbar():
    return jl.load_llmbar(LLMBAR_CSV)


@pytest.fixture(scope="module")
def synthetic():
    return jl.simulate_judge_ls(seed=20240611, n_items=3000)


# --- intervals and tests against peers -----------------------------------------------------------
@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_wilson_equals_statsmodels(confidence):
    k = np.array([0, 1, 5, 37, 95, 100, 3])
    n = np.array([10, 10, 20, 80, 100, 100, 3])
    low, high = jl.wilson_interval(k, n, confidence)
    ref_low, ref_high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12)
    assert np.isnan(jl.wilson_interval(0, 0)[0])


@pytest.mark.parametrize("b,c", [(0, 0), (0, 3), (5, 5), (12, 3), (3, 12), (40, 61), (73, 50)])
def test_mcnemar_equals_statsmodels_and_scipy(b, c):
    p = float(jl.mcnemar_exact_p(b, c))
    assert p == pytest.approx(mcnemar([[10, b], [c, 10]], exact=True).pvalue, abs=1e-12)
    expected = 1.0 if b + c == 0 else scipy.stats.binomtest(b, b + c, 0.5).pvalue
    assert p == pytest.approx(expected, abs=1e-12)


# --- normalisation and hand-computed tables ------------------------------------------------------
def test_normalise_known_answers():
    frame = jl.validate_verdicts(verdicts([
        (1, "j", "en", "original", "A", 1), (1, "j", "en", "swapped", "A", 1),
        (2, "j", "en", "original", "B", 2), (2, "j", "en", "swapped", " b ", 2),
        (3, "j", "en", "original", "Tie", 1), (3, "j", "en", "swapped", "tie", 1),
        (4, "j", "en", "original", "Output (a)", 2), (4, "j", "en", "swapped", np.nan, 2)]), "t")
    out = jl.normalise_choices(frame)
    assert out["choice"].fillna("invalid").tolist() == [
        "1", "2", "2", "1", "Tie", "Tie", "invalid", "invalid"]
    assert out["valid"].tolist() == [True] * 6 + [False] * 2
    assert len(out) == len(frame)  # unparseable rows are kept, marked invalid


def test_accuracy_table_hand_computed():
    # gold 1 throughout. original: A (1, right), B (2, wrong), Tie, garbage
    #                     swapped:  B (1, right), B (1, right), A (2, wrong), garbage
    rows = [(i, "j", "en", o, v, 1) for i, (o, v) in enumerate(
        [("original", "A"), ("original", "B"), ("original", "Tie"), ("original", "?"),
         ("swapped", "B"), ("swapped", "B"), ("swapped", "A"), ("swapped", "?")])]
    table = jl.accuracy_table(jl.validate_verdicts(verdicts(rows), "t"), by_order=True)
    pooled = table.loc[(table["subset"] == "all") & (table["order"] == "all")].iloc[0]
    assert (pooled["n"], pooled["n_invalid"], pooled["n_correct"]) == (6, 2, 3)
    assert pooled["strict_accuracy"] == pytest.approx(3 / 6)
    assert pooled["tie_half_accuracy"] == pytest.approx(3.5 / 6)
    scores = np.array([1, 0, 0.5, 1, 1, 0])
    half = scipy.stats.norm.isf(0.025) * scores.std(ddof=1) / np.sqrt(6)
    assert pooled["tie_half_ci_low"] == pytest.approx(scores.mean() - half)
    assert pooled["tie_half_ci_high"] == pytest.approx(min(1, scores.mean() + half))
    # decisive verdicts A, B, B, B, A: two of five name the answer shown first
    assert pooled["position_a_rate"] == pytest.approx(2 / 5)
    assert pooled["tie_rate"] == pytest.approx(1 / 6)
    original = table.loc[(table["subset"] == "s") & (table["order"] == "original")].iloc[0]
    assert (original["n"], original["n_correct"]) == (3, 1)
    wrong = jl.accuracy_table(jl.validate_verdicts(verdicts(rows), "t"), invalid_as_wrong=True)
    assert wrong.iloc[0]["n"] == 8 and wrong.iloc[0]["strict_accuracy"] == pytest.approx(3 / 8)


def test_flip_and_position_tables_hand_computed():
    # items 1-4, gold 1. en (reference): 1, 1, 2, 1 ; zh: 1, 2, 1, garbage  (both original order)
    en = ["A", "A", "B", "A"]
    zh = ["A", "B", "A", "??"]
    rows = [(i + 1, "j", c, "original", v, 1) for c, vs in (("en", en), ("zh", zh))
            for i, v in enumerate(vs)]
    # swapped order in en: item 1 consistent (B -> 1), item 2 inconsistent (A -> 2)
    rows += [(1, "j", "en", "swapped", "B", 1), (2, "j", "en", "swapped", "A", 1)]
    frame = jl.validate_verdicts(verdicts(rows), "t")
    flips = jl.flip_table(frame, reference="en")
    row = flips.loc[flips["subset"] == "all"].iloc[0]
    assert (row["target"], row["n_pairs"], row["n_invalid_pairs"], row["n_flips"]) == (
        "zh", 3, 1, 2)
    # item 2: en correct, zh wrong (b); item 3: en wrong, zh correct (c)
    assert (row["n_discordant_b"], row["n_discordant_c"], row["n_gold_flips"]) == (1, 1, 2)
    assert row["mcnemar_p"] == pytest.approx(1.0)
    assert (row["flip_ci_low"], row["flip_ci_high"]) == pytest.approx(jl.wilson_interval(2, 3))
    position = jl.position_table(frame)
    en_row = position.loc[(position["condition"] == "en") & (position["subset"] == "all")].iloc[0]
    assert (en_row["n"], en_row["n_inconsistent"]) == (2, 1)
    assert en_row["position_inconsistency"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="reference condition 'fr'"):
        jl.flip_table(frame, reference="fr")


def test_tie_probe_table_hand_computed():
    # output 1 English, output 2 Chinese. original: A = en wins, B = zh wins; swapped: A = zh wins
    rows = [(1, "j", "probe", "original", "A", "Tie"), (1, "j", "probe", "swapped", "A", "Tie"),
            (2, "j", "probe", "original", "B", "Tie"), (2, "j", "probe", "swapped", "Tie", "Tie"),
            (3, "j", "probe", "original", "Tie", "Tie"), (3, "j", "probe", "swapped", "x", "Tie")]
    frame = jl.validate_verdicts(verdicts(rows, probe_language_1="en", probe_language_2="zh"), "t")
    row = jl.tie_probe_table(frame).iloc[0]
    assert (row["language_1"], row["language_2"]) == ("en", "zh")
    assert (row["n"], row["n_invalid"], row["n_language_1_wins"], row["n_language_2_wins"],
            row["n_ties"]) == (5, 1, 1, 2, 2)
    assert row["tie_share"] == pytest.approx(0.4)
    assert row["non_tie_language_2_share"] == pytest.approx(2 / 3)
    # the same probes with the languages written the other way round give the same table
    flipped = frame.assign(probe_language_1="zh", probe_language_2="en")
    flipped["verdict"] = flipped["verdict"].replace({"A": "B", "B": "A"})
    pd.testing.assert_frame_equal(jl.tie_probe_table(flipped), jl.tie_probe_table(frame))
    assert jl.accuracy_table(frame).empty  # tie probes are not gold 1/2 judgments


# --- LLMBar: the upstream statistics -------------------------------------------------------------
def test_llmbar_gpt4_vanilla_natural_matches_upstream(llmbar):
    table = jl.accuracy_table(llmbar, by_order=True)
    rows = table.loc[(table["judge"] == "GPT-4") & (table["condition"] == "Vanilla")
                     & (table["subset"] == "Natural")].set_index("order")
    assert (rows.loc["original", "n_correct"], rows.loc["original", "n"]) == (95, 100)
    assert (rows.loc["swapped", "n_correct"], rows.loc["swapped", "n"]) == (96, 100)
    stats = pd.read_csv(LLMBAR_STATISTICS).set_index(["subset", "evaluator", "strategy"]).loc[
        ("Natural", "GPT-4", "Vanilla")]
    assert stats["correct_False"].startswith("95 / 100") and stats["correct_True"].startswith(
        "96 / 100")


def test_llmbar_every_upstream_statistics_file_reproduced():
    """All 325 statistics.json: correct counts per order (unparsable = wrong, as upstream) and
    position agreement ``equal`` where no verdict is unparsable (upstream counts '' == '')."""
    frame = jl.load_llmbar(LLMBAR_CSV, rating="upstream")
    acc = jl.accuracy_table(frame, by_order=True, invalid_as_wrong=True).set_index(
        ["subset", "judge", "condition", "order"])
    pos = jl.position_table(frame).set_index(["subset", "judge", "condition"])
    statistics = pd.read_csv(LLMBAR_STATISTICS)
    assert len(statistics) == 325
    count = lambda text: tuple(int(x) for x in re.match(r"(\d+) / (\d+)", text).groups())
    checked_position = 0
    for _, stats in statistics.iterrows():
        subset, judge, condition = stats["subset"], stats["evaluator"], stats["strategy"]
        path = (subset, judge, condition)
        for order, key in (("original", "correct_False"), ("swapped", "correct_True")):
            row = acc.loc[(subset, judge, condition, order)]
            assert (row["n_correct"], row["n"]) == count(stats[key]), (path, order)
        row = pos.loc[(subset, judge, condition)]
        if row["n_invalid_pairs"] == 0:
            assert row["n"] - row["n_inconsistent"] == count(stats["equal"])[0], path
            checked_position += 1
    assert checked_position > 250


def test_llmbar_position_inconsistency_all_six_judges(llmbar):
    table = jl.position_table(llmbar)
    vanilla = table.loc[(table["condition"] == "Vanilla") & (table["subset"] == "all")]
    assert set(vanilla["judge"]) == LLMBAR_JUDGES
    for column in ["position_inconsistency", "position_ci_low", "position_ci_high"]:
        assert vanilla[column].notna().all() and vanilla[column].between(0, 1).all()
    assert (vanilla["position_ci_low"] <= vanilla["position_inconsistency"]).all()
    assert (vanilla["position_inconsistency"] <= vanilla["position_ci_high"]).all()
    assert (vanilla["n"] >= 410).all()
    # GPT-4 Natural: upstream `equal` 95 / 100
    gpt4 = table.set_index(["judge", "condition", "subset"]).loc[("GPT-4", "Vanilla", "Natural")]
    assert gpt4["n_inconsistent"] == 5


def test_llmbar_rating_strategies_become_score_ties(llmbar):
    rating = llmbar.loc[llmbar["condition"] == "Rating"]
    raw = pd.read_parquet(LLMBAR_CSV)
    raw = raw.loc[raw["strategy"] == "Rating"]
    equal = int((raw["score_1"] == raw["score_2"]).sum())
    assert (rating["verdict"] == "Tie").sum() == 2 * equal > 0
    position = jl.position_table(llmbar)
    assert (position.loc[position["condition"] == "Rating", "n_inconsistent"] == 0).all()
    excluded = jl.load_llmbar(LLMBAR_CSV, rating="exclude")
    assert not excluded["condition"].str.startswith("Rating").any()


def test_llmbar_flips_between_strategies(llmbar):
    flips = jl.flip_table(llmbar, reference="Vanilla")
    pooled = flips.loc[flips["subset"] == "all"]
    assert set(pooled["judge"]) == LLMBAR_JUDGES
    assert "Vanilla" not in set(pooled["target"])
    # without ties a preference flip is always a correctness flip
    no_rating = pooled.loc[~pooled["target"].str.startswith("Rating")]
    assert (no_rating["n_flips"] == no_rating["n_gold_flips"]).all()
    assert pooled["mcnemar_p"].between(0, 1).all()


# --- synthetic planted truth ---------------------------------------------------------------------
def _within(table, truth, keys, estimate, low, high):
    merged = truth.merge(table, on=keys, suffixes=("_truth", ""))
    assert len(merged) == len(truth)
    inside = ((merged[f"{low}"] <= merged[f"{estimate}_truth"])
              & (merged[f"{estimate}_truth"] <= merged[f"{high}"]))
    assert inside.all(), merged.loc[~inside, keys + [f"{estimate}_truth", estimate, low, high]]


def test_synthetic_planted_effects_recovered(synthetic):
    """Every planted rate lies in its 99.9% interval (about 50 intervals: 99.9% keeps the chance
    of a false failure near 5% for a fixed seed).

    The two orders of an item share the judge's content choice: accuracy and flips are checked
    within one order at a time (one judgment per item: plain Wilson intervals; by the 1 <-> 2
    symmetry of the design each order has the pooled expectation) and pooled over both orders
    (item-clustered intervals); position pairs are one per item, tie probes are clustered.
    """
    frame, truth = synthetic
    conf = 0.999
    for order in [*jl.ORDERS, None]:
        one_order = frame if order is None else frame.loc[frame["order"] == order]
        flips = jl.flip_table(one_order, reference="en", confidence=conf)
        flips = flips.loc[flips["subset"] == "all"]
        _within(flips, truth["flips"], ["judge", "reference", "target"], "flip_rate",
                "flip_ci_low", "flip_ci_high")
        _within(flips, truth["flips"], ["judge", "reference", "target"], "gold_flip_rate",
                "gold_flip_ci_low", "gold_flip_ci_high")
        acc = jl.accuracy_table(one_order, confidence=conf)
        acc = acc.loc[acc["subset"] == "all"]
        _within(acc, truth["accuracy"], ["judge", "condition"], "strict_accuracy",
                "strict_ci_low", "strict_ci_high")
        _within(acc, truth["accuracy"], ["judge", "condition"], "tie_half_accuracy",
                "tie_half_ci_low", "tie_half_ci_high")
    position = jl.position_table(frame, confidence=conf)
    _within(position.loc[position["subset"] == "all"], truth["position"], ["judge", "condition"],
            "position_inconsistency", "position_ci_low", "position_ci_high")
    probe = jl.tie_probe_table(frame, confidence=conf)
    _within(probe, truth["tie_probe"], ["judge", "condition"], "tie_share", "tie_share_ci_low",
            "tie_share_ci_high")
    _within(probe, truth["tie_probe"], ["judge", "condition"], "non_tie_language_2_share",
            "non_tie_ci_low", "non_tie_ci_high")
    # the planted shape: best in English, position inconsistency highest code-switched
    acc = jl.accuracy_table(frame)
    acc = acc.loc[acc["subset"] == "all"]
    best = acc.loc[acc.groupby("judge")["strict_accuracy"].idxmax(), "condition"]
    assert set(best) == {"en"}
    pos = position.loc[position["subset"] == "all"].pivot(index="judge", columns="condition",
                                                         values="position_inconsistency")
    assert (pos["cs"] > pos["en"]).all()
    # unparseable verdicts (1%) are counted, not dropped
    assert acc["n_invalid"].sum() > 0


def test_synthetic_truth_matches_a_large_sample():
    """The exact expectations against one large sample (checks the enumeration itself; 0.01 is
    about four standard errors of a rate near 0.15 on 40,000 pairs)."""
    frame, truth = jl.simulate_judge_ls(seed=7, n_items=20_000, subsets=("one",),
                                        unparseable_rate=0.0)
    flips = jl.flip_table(frame).merge(truth["flips"], on=["judge", "reference", "target"],
                                       suffixes=("", "_truth"))
    np.testing.assert_allclose(flips["flip_rate"], flips["flip_rate_truth"], atol=0.01)
    position = jl.position_table(frame).merge(truth["position"], on=["judge", "condition"],
                                              suffixes=("", "_truth"))
    np.testing.assert_allclose(position["position_inconsistency"],
                               position["position_inconsistency_truth"], atol=0.01)
    np.testing.assert_allclose(position["first_seat_rate"], position["first_seat_rate_truth"],
                               atol=0.01)


def test_simulation_is_seeded_and_validates_its_effects():
    a, _ = jl.simulate_judge_ls(seed=3, n_items=50)
    b, _ = jl.simulate_judge_ls(seed=3, n_items=50)
    pd.testing.assert_frame_equal(a, b)
    effects = jl.JudgeEffects(accuracy={"en": 0.9, "zh": 0.6}, flip={"zh": 0.1},
                              position_bias={"en": 0, "zh": 0}, tie_rate={"en": 0, "zh": 0})
    with pytest.raises(ValueError, match="impossible"):
        jl.simulate_judge_ls(seed=1, n_items=10, judges={"j": effects})


# --- translation audit ---------------------------------------------------------------------------
def test_translation_audit_hand_computed():
    keys = dict(item=["1", "2", "3", "4", "5"], subset="s", field="output_1")
    ref = pd.DataFrame(keys | {"text": ["Pay 12 and 30 dollars", "a 1 b 2 c 3 d 4", "x" * 100,
                                        "x" * 100, "same 7 text"]})
    var = pd.DataFrame(keys | {"text": ["付钱美元", "甲 1 乙", "y" * 9, "y" * 20, "  "]})
    audit = jl.translation_audit(ref, var, kind="full").set_index("item")
    assert audit["lost_numbers"].tolist() == [True, False, False, False, False]
    assert audit["number_count_change"].tolist() == [False, True, False, False, False]
    assert audit["shrinkage"].tolist() == [False, False, True, False, True]  # empty: ratio 0
    assert audit["empty"].tolist() == [False, False, False, False, True]
    assert audit.loc["3", "length_ratio"] == pytest.approx(0.09)
    cs = jl.translation_audit(ref, var, kind="code_switched").set_index("item")
    assert cs.loc["4", "shrinkage"] and not audit.loc["4", "shrinkage"]  # ratio 0.20
    looser = jl.translation_audit(ref, var, thresholds=jl.AuditThresholds(
        number_count_difference=4, length_ratio_full=0.05)).set_index("item")
    assert looser["flagged"].tolist() == [True, False, False, False, True]
    missing_variant = jl.translation_audit(ref, var.iloc[:1])
    assert missing_variant["empty"].tolist() == [False, True, True, True, True]


@pytest.mark.parametrize("kind", ["full", "code_switched"])
def test_audit_flags_exactly_the_planted_defects(synthetic, kind):
    frame, _ = synthetic
    ref, var, planted = jl.simulate_audit_texts(5, frame.loc[frame["item"].astype(int) < 40],
                                                kind=kind)
    audit = jl.translation_audit(ref, var, kind=kind)
    flagged = audit.loc[audit["flagged"], ["item", "subset", "field"]]
    key = lambda t: set(map(tuple, t[["item", "subset", "field"]].values))
    assert key(flagged) == key(planted)
    merged = planted.merge(audit, on=["item", "subset", "field"])
    assert all(merged.loc[i, d] for i, d in enumerate(merged["defect"]))


def test_flip_sensitivity_drops_flagged_items(synthetic):
    frame, _ = synthetic
    flagged = pd.DataFrame({"item": ["0", "1", "2"],
                            "subset": ["natural", "adversarial", "natural"]})
    table = jl.flip_sensitivity(frame, flagged, reference="en")
    pooled = table.loc[table["subset"] == "all"].set_index(["items", "judge", "target"])
    full, kept = pooled.loc["all"], pooled.loc["unflagged"]
    assert (kept["n_excluded_items"] == 3).all()
    # three items x two orders fewer pairs (less the few unparseable pairs among them)
    assert ((full["n_pairs"] + full["n_invalid_pairs"])
            - (kept["n_pairs"] + kept["n_invalid_pairs"]) == 6).all()


# --- summary -------------------------------------------------------------------------------------
def test_summary_markdown_mentions_every_part(synthetic):
    frame, _ = synthetic
    ref, var, _ = jl.simulate_audit_texts(5, frame.loc[frame["item"].astype(int) < 40])
    audit = jl.translation_audit(ref, var)
    text = jl.summary_markdown(jl.accuracy_table(frame), jl.flip_table(frame),
                               jl.position_table(frame), jl.tie_probe_table(frame),
                               jl.flip_sensitivity(frame, audit.loc[audit.flagged], "en"), audit)
    for needle in ["# Judge-LS summary", "judge_a", "judge_b", "Flips against `en`",
                   "Position inconsistency", "Tie probes", "Translation audit", "unparseable",
                   "item-clustered",
                   "Most accurate condition: judge_a en; judge_b en"]:
        assert needle in text


# --- bad inputs ----------------------------------------------------------------------------------
GOOD = [(1, "j", "en", "original", "A", 1), (1, "j", "en", "swapped", "B", 1)]


def test_missing_column_names_the_file():
    with pytest.raises(InputError, match=r"verdicts\.csv: missing column\(s\) \['gold'\]"):
        jl.validate_verdicts(verdicts(GOOD).drop(columns="gold"), "verdicts.csv")


def test_duplicate_judgments_error_names_rows_or_keep_first():
    frame = verdicts(GOOD + [(1, "j", "en", "original", "B", 1)])
    with pytest.raises(InputError) as error:
        jl.validate_verdicts(frame, "verdicts.csv")
    message = str(error.value)
    assert "verdicts.csv: 2 rows repeat a judgment" in message
    assert "drop_first" in message
    rows = message.split("offending rows")[1]
    assert re.search(r"^\s+2\s", rows, re.M) and re.search(r"^\s+4\s", rows, re.M)  # file lines
    with pytest.warns(UserWarning, match="dropped 1 repeated"):
        kept = jl.validate_verdicts(frame, "verdicts.csv", on_duplicate="drop_first")
    assert kept["verdict"].tolist() == ["A", "B"]
    with pytest.raises(ValueError, match="on_duplicate"):
        jl.validate_verdicts(frame, "verdicts.csv", on_duplicate="ignore")


def test_unknown_condition_and_bad_values_error():
    frame = verdicts(GOOD + [(2, "j", "fr", "original", "A", 2)])
    with pytest.raises(InputError, match=r"unknown condition\(s\) \['fr'\].*\n.*condition in "
                                         r"\['en', 'zh', 'cs'\]"):
        jl.validate_verdicts(frame, "v.csv", conditions=["en", "zh", "cs"])
    with pytest.raises(InputError, match=r"`order` values \['reversed'\]"):
        jl.validate_verdicts(verdicts(GOOD + [(2, "j", "en", "reversed", "A", 2)]), "v.csv")
    with pytest.raises(InputError, match="bad `gold`"):
        jl.validate_verdicts(verdicts(GOOD + [(2, "j", "en", "original", "A", 3)]), "v.csv")
    with pytest.raises(InputError, match="empty `judge`"):
        jl.validate_verdicts(verdicts(GOOD + [(2, None, "en", "original", "A", 2)]), "v.csv")
    with pytest.raises(InputError, match="subset named 'all'"):
        jl.validate_verdicts(verdicts(GOOD).assign(subset="all"), "v.csv")
    with pytest.raises(InputError, match=r"tie probes .* no column\(s\)"):
        jl.validate_verdicts(verdicts(GOOD + [(2, "j", "en", "original", "A", "Tie")]), "v.csv")


def test_unparseable_verdicts_are_counted_everywhere():
    rows = GOOD + [(2, "j", "en", "original", "I cannot tell", 2),
                   (2, "j", "en", "swapped", "", 2),
                   (1, "j", "zh", "original", "A", 1), (1, "j", "zh", "swapped", None, 1)]
    frame = jl.validate_verdicts(verdicts(rows), "v.csv")
    acc = jl.accuracy_table(frame)
    assert acc.loc[(acc["subset"] == "all"), "n_invalid"].tolist() == [2, 1]
    position = jl.position_table(frame)
    assert position.loc[position["subset"] == "all", "n_invalid_pairs"].tolist() == [1, 1]
    flips = jl.flip_table(frame)
    assert flips.loc[flips["subset"] == "all",
                     ["n_pairs", "n_invalid_pairs"]].values.tolist() == [[1, 1]]


def test_recovery_table_covers_the_planted_values():
    verdicts, truth = jl.simulate_judge_ls(seed=3, n_items=300)
    choices = jl.normalise_choices(verdicts)
    tables = {"accuracy": jl.accuracy_table(choices, by_order=True),
              "flips": jl.flip_table(choices, "en"),
              "position": jl.position_table(choices),
              "tie_probe": jl.tie_probe_table(choices)}
    table = jl.recovery_table(tables, truth)
    assert set(table["table"]) == {"accuracy", "flips", "position", "tie_probe"}
    assert list(table.columns) == jl.RECOVERY_COLUMNS
    assert table["covered"].mean() >= 0.8  # nominal 95% per value, about 20 values
    assert jl.audit_variants(None, {}).empty
