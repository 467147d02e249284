"""The judge card (polyjudge.analyses.card): every measure against its peer (scikit-learn,
krippendorff, statsmodels, scipy) on generated tables and on the devai panel; identities of the
bootstrap; the DevAI human labels (the original Agent-as-a-Judge at kappa 0.78, the multilingual
judges at chance); the reference file's errors; planted agreement that differs in one language.
"""
import numpy as np
import pandas as pd
import pytest
from conftest import DATA, DEVAI_DIR, DEVAI_LANGUAGES
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from polyjudge.analyses.card import (ALL_LANGUAGES, judge_card, measures, reference_labels,
                                     requirement_verdicts)
from polyjudge.data.errors import InputError

krippendorff = pytest.importorskip("krippendorff")

DEVAI_REFERENCE = {"file": "devai_original/requirement_labels_long.parquet",
                   "keys": ["framework", "task", "requirement_id"], "label": "satisfied",
                   "rater_column": "judge", "reference_rater": "human", "language": "English",
                   "level": "nominal"}


def table(a, b, values):
    C = np.zeros((len(values), len(values)))
    np.add.at(C, (np.searchsorted(values, a), np.searchsorted(values, b)), 1)
    return C


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_measure_equals_its_peer_on_generated_ratings(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, 400)
    b = np.clip(a + rng.integers(-2, 3, 400), 1, 5)
    values = np.arange(1, 6)
    C = table(a, b, values)
    assert measures.cohen_kappa(C) == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    assert measures.cohen_kappa(C, "quadratic") == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic"), abs=1e-9)
    assert measures.cohen_kappa(C) == pytest.approx(cohens_kappa(C).kappa, abs=1e-9)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        peer = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float),
                                  level_of_measurement=level)
        assert measures.krippendorff_alpha(C, values, level) == pytest.approx(peer, abs=1e-9)
    assert measures.kendall_tau_b(C) == pytest.approx(stats.kendalltau(a, b).statistic,
                                                      abs=1e-9)
    assert measures.spearman(C) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-9)
    assert measures.percent_agreement(C) == pytest.approx(np.mean(a == b))
    assert measures.mean_signed_error(C, values) == pytest.approx(np.mean(a - b))


def test_gwet_ac1_known_answer():
    # by hand: p_a = 118/125 = 0.944, pi = (243/250, 7/250) = (0.972, 0.028),
    # p_e = 2 x 0.972 x 0.028 / (2 - 1) = 0.054432, AC1 = (0.944 - p_e) / (1 - p_e) = 0.94078
    C = np.array([[118.0, 5.0], [2.0, 0.0]])
    pi = (C.sum(0) + C.sum(1)) / (2 * C.sum())
    pe = (pi * (1 - pi)).sum()
    assert measures.gwet_ac1(C) == pytest.approx((118 / 125 - pe) / (1 - pe), abs=1e-12)
    assert measures.gwet_ac1(C) == pytest.approx(0.94078, abs=1e-5)
    # every measure is vectorised over leading axes: a stack of tables gives each one's value
    stack = np.stack([C, C.T, np.eye(2) * 5])
    assert np.allclose(measures.gwet_ac1(stack), [measures.gwet_ac1(t) for t in stack])


@pytest.fixture(scope="module")
def devai():
    requirements = pd.read_parquet(DEVAI_DIR / "requirement_judgments.parquet")
    labels = pd.read_parquet(DATA / DEVAI_REFERENCE["file"])
    reference, original = reference_labels(labels, DEVAI_REFERENCE, "labels.parquet")
    verdicts = requirement_verdicts(requirements)
    card = judge_card(verdicts, reference, replicates=200, seed=3, languages=DEVAI_LANGUAGES,
                      comparison=original)
    return verdicts, reference, original, card


def test_devai_judges_are_at_chance_and_the_original_agent_is_not(devai):
    verdicts, reference, _, card = devai
    rows = card.agreement
    kappa = rows[(rows["versus"] == "reference") & (rows["measure"] == "cohen_kappa")]
    panel = kappa[(kappa["language"] != ALL_LANGUAGES) & (kappa["judge"] != "agent_gray_box")]
    assert len(panel) == 48 and panel["n_items"].eq(1095).all()
    assert panel["estimate"].between(-0.06, 0.06).all() and (panel["ci_high"] < 0.2).all()
    original = kappa[(kappa["judge"] == "agent_gray_box") & (kappa["language"] == "English")]
    assert original["estimate"].iloc[0] == pytest.approx(0.7777, abs=1e-3)
    assert original["n_items"].iloc[0] == 1098 and original["n_clusters"].iloc[0] == 55
    # each cell's kappa is scikit-learn's on the joined verdicts
    joined = verdicts.join(reference.rename("human"), on="item")
    for (language, judge), cell in list(joined.groupby(["language", "judge"]))[:6]:
        mine = panel[(panel["language"] == language) & (panel["judge"] == judge)]
        assert mine["estimate"].iloc[0] == pytest.approx(
            cohen_kappa_score(cell["verdict"], cell["human"]), abs=1e-9)
    # intervals hold their estimate; the language test has L - 1 degrees of freedom
    assert ((rows["ci_low"] <= rows["estimate"] + 1e-12)
            & (rows["estimate"] <= rows["ci_high"] + 1e-12)).all()
    assert card.language_tests["df"].eq(len(DEVAI_LANGUAGES) - 1).all()


def test_panel_agreement_equals_fleiss_and_krippendorff(devai):
    verdicts, _, _, card = devai
    rows = card.agreement
    for language in ("English", "Swahili"):
        wide = verdicts[verdicts["language"] == language].pivot(index="item", columns="judge",
                                                                  values="verdict")
        mine = rows[(rows["language"] == language) & (rows["judge"] == "panel")].set_index(
            "measure")["estimate"]
        assert mine["fleiss_kappa"] == pytest.approx(
            fleiss_kappa(aggregate_raters(wide.to_numpy())[0]), abs=1e-9)
        assert mine["krippendorff_alpha_nominal"] == pytest.approx(krippendorff.alpha(
            reliability_data=wide.to_numpy().T, level_of_measurement="nominal"), abs=1e-9)
        pair = rows[(rows["language"] == language) & (rows["judge"] == "gpt-4o")
                    & (rows["versus"] == "gpt-5.4") & (rows["measure"] == "cohen_kappa")]
        assert pair["estimate"].iloc[0] == pytest.approx(
            cohen_kappa_score(wide["gpt-4o"], wide["gpt-5.4"]), abs=1e-9)


def test_a_reference_file_without_its_columns_or_with_two_labels_is_refused():
    labels = pd.DataFrame({"task": ["t1", "t1"], "requirement_id": ["0", "0"],
                           "satisfied": [1, 0]})
    spec = {"keys": ["task", "requirement_id"], "label": "satisfied"}
    with pytest.raises(InputError, match=r"labels.csv: 1 item\(s\) with two reference labels, "
                                         r"e.g. 't1\|0'"):
        reference_labels(labels, spec, "labels.csv")
    with pytest.raises(InputError, match=r"labels.csv: no column 'framework'"):
        reference_labels(labels, dict(spec, keys=["framework", "task"]), "labels.csv")


def test_without_reference_the_card_gives_agreement_among_judges_only(devai):
    verdicts = devai[0]
    card = judge_card(verdicts[verdicts["language"].isin(["English", "Hindi"])], None,
                      replicates=0, languages=["English", "Hindi"])
    assert not card.has_reference and card.language_tests.empty
    assert set(card.agreement["versus"]) - {"panel"} <= set(verdicts["judge"])
    assert card.agreement["ci_low"].isna().all()  # no replicates: no interval


def test_a_planted_language_difference_is_found_where_it_is_planted():
    rng = np.random.default_rng(5)
    n, tasks = 2000, 100
    truth = (rng.random(n) < 0.4).astype(float)
    rows = []
    for language, error in (("en", 0.1), ("de", 0.1), ("sw", 0.35)):
        wrong = rng.random(n) < error
        rows.append(pd.DataFrame({"item": np.arange(n).astype(str),
                                  "cluster": np.arange(n) % tasks, "language": language,
                                  "judge": "a",
                                  "verdict": np.where(wrong, 1 - truth, truth)}))
    card = judge_card(pd.concat(rows), pd.Series(truth, index=np.arange(n).astype(str)),
                      replicates=300, seed=1, languages=["en", "de", "sw"])
    test = card.language_tests.set_index("measure").loc["cohen_kappa"]
    assert test["lowest"] == "sw" and test["p_value"] < 1e-6


def test_the_api_and_the_card_command_read_your_columns(tmp_path):
    import subprocess
    import sys

    import polyjudge
    verdicts = pd.DataFrame({"q": [str(i % 6) for i in range(24)],
                             "lang": ["en"] * 12 + ["de"] * 12,
                             "model": (["m1"] * 6 + ["m2"] * 6) * 2,
                             "says": [1, 0, 1, 1, 0, 0] * 4, "topic": [str(i % 3) for i in
                                                                      range(24)]})
    gold = pd.DataFrame({"q": [str(i) for i in range(6)], "right": [1, 0, 1, 0, 0, 0]})
    card = polyjudge.judge_card(verdicts, gold, item="q", language="lang", judge="model",
                                verdict="says", label="right", cluster="topic", replicates=50)
    share = card.agreement.query("measure == 'percent_agreement' and versus == 'reference'")
    assert share["estimate"].eq(5 / 6).all() and share["n_clusters"].eq(3).all()
    with pytest.raises(InputError, match=r"verdicts: no column 'item'"):
        polyjudge.judge_card(verdicts, gold)
    verdicts.to_csv(tmp_path / "v.csv", index=False)
    gold.to_csv(tmp_path / "g.csv", index=False)
    command = [sys.executable, "-m", "polyjudge.cli", "card", str(tmp_path / "v.csv"),
               "--reference", str(tmp_path / "g.csv"), "--item", "q", "--language", "lang",
               "--judge", "model", "--verdict", "says", "--label", "right", "--replicates", "50",
               "-o", str(tmp_path / "card")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(tmp_path / "card" / "agreement.csv")
    assert written["estimate"].tolist() == pytest.approx(card.agreement["estimate"].tolist(),
                                                         nan_ok=True)
    bad = subprocess.run(command[:-2] + ["--verdict", "nope", "-o", str(tmp_path / "x")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no column 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "x").exists()


def test_a_pairwise_panels_card_agrees_with_its_judge_ls_accuracy():
    # percent agreement with the gold answer is Judge-LS's strict accuracy, judgment for
    # judgment (a tie never agrees; tie probes and unusable verdicts are left out of both)
    import polyjudge
    from polyjudge.analyses.card import choice_verdicts
    from polyjudge.analyses.judge_ls import load_llmbar
    stored = DATA / "llmbar" / "llmbar_judge_verdicts_long.parquet"
    result = polyjudge.judge_ls(load_llmbar(stored), reference="Vanilla")
    verdicts, reference = choice_verdicts(result.choices)
    card = judge_card(verdicts, reference, replicates=0)
    mine = card.agreement.query("measure == 'percent_agreement' and versus == 'reference' "
                                "and language != @ALL_LANGUAGES")
    accuracy = result.accuracy.query("subset == 'all' and order == 'all'")
    both = accuracy[["judge", "condition", "n", "strict_accuracy"]].merge(
        mine[["judge", "language", "estimate", "n_items"]], left_on=["judge", "condition"],
        right_on=["judge", "language"])
    assert len(both) == len(accuracy) == 65
    assert np.allclose(both["strict_accuracy"], both["estimate"], rtol=0, atol=1e-12)
    assert (both["n"] == both["n_items"]).all()


def test_a_preference_panels_card_is_the_accuracy_on_the_chosen_side():
    # margins chosen - rejected: positive right, zero a tie (wrong), negative wrong; the
    # reference is one answer for every item, so kappa is undefined and not reported
    from polyjudge.analyses.card import margin_verdicts
    runs = pd.DataFrame({"task": ["1", "2", "3", "4"] * 2, "language": ["en"] * 4 + ["zh"] * 4,
                         "backbone": "j", "score": [2, 1, 0, -1, 1, np.nan, -2, -1]})
    verdicts, reference = margin_verdicts(runs)
    assert len(verdicts) == 7 and set(reference) == {1.0}
    card = judge_card(verdicts, reference, replicates=50, languages=["en", "zh"])
    against = card.agreement.query("versus == 'reference'").set_index("language")
    assert set(against["measure"]) == {"percent_agreement"}
    assert against.loc["en", "estimate"] == 0.5 and against.loc["zh", "estimate"] == 1 / 3
    assert against.loc[ALL_LANGUAGES, "n_items"] == 7
