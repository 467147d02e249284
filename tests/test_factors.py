"""What each analysis does with the factors beyond language x judge (polyjudge.data.factors):
the frameworks of a cell and the strata of the tasks, as shape.json and the ingest log say."""
from polyjudge.data.factors import POOLED, USED, factor_lines, factor_uses
from polyjudge.data.shape import ALL_ANALYSES


def test_a_panel_without_repeats_or_strata_has_no_factor():
    assert factor_uses(["single"], None) == {}


def test_every_analysis_says_what_it_does_with_each_factor():
    uses = factor_uses(["MetaGPT", "GPT-Pilot", "OpenHands"], ("easy", "hard", "easy"))
    assert uses["framework"]["values"] == 3 and uses["stratum"]["values"] == 2
    for factor, entry in uses.items():
        assert set(entry["analyses"]) == set(ALL_ANALYSES)
        for analysis, text in entry["analyses"].items():
            assert text == USED[factor].get(analysis, POOLED[factor])
    assert uses["framework"]["analyses"]["information"].startswith("used:")
    assert uses["framework"]["analyses"]["cbc"].startswith("averaged:")
    assert uses["stratum"]["analyses"]["external"].startswith("used:")
    assert uses["stratum"]["analyses"]["reversal"].startswith("ignored:")


def test_one_stratum_is_still_named():
    assert factor_uses(["single"], ("turn-1",))["stratum"]["values"] == 1


def test_the_log_names_the_listed_analyses_that_use_and_that_pool_a_factor():
    uses = factor_uses(["a", "b"], None)
    [line] = factor_lines("fastchat", uses, ["cbc", "information", "reversal", "judge_ls"])
    assert line == ("panel fastchat: framework has 2 values; used by information; averaged by "
                    "cbc, reversal")
    [line] = factor_lines("p", factor_uses(["a", "b"], None), ["cbc"])
    assert line == "panel p: framework has 2 values; used by no analysis; averaged by cbc"
