"""A collection stopped at a precision, run as a user runs it: the whole default target
(`snakemake --cores 2`, no target named) against the local server, through the results page.

The first round of the asymptotic sequence has no interval (an infinite half-width); the run
must still end with exit 0, every JSON must be strict JSON, and the page must show the rounds,
the first one as "no interval yet", in a real browser with no console error. Then a rerun with
the same target calls no judge, and a tighter target makes only the new calls. Beside it, a
target met after the first round and one never met (`module fixture` `collections`)."""
from types import SimpleNamespace

import pandas as pd
import pytest
from conftest import assert_strict_json
from judge_server import JudgeServer
from test_judges_workflow import SCORERS, SECRET, collection_config, no_repeated_answers, \
    side_by_side, snakemake

from polyjudge.judges.cache import read_records

pytestmark = pytest.mark.slow
STOPPING = "results/pw/collect/stopping.csv"


def answered(server) -> int:
    return sum(e["status"] == 200 for e in server.log)


def cached(folder) -> int:
    return sum(1 for p in (folder / "cache" / "pw").glob("*/*/shard*.jsonl")
               for _ in read_records(p))


def config_with(folder, server, n_items, **stop):
    config = collection_config(folder, server.base_url, n_pointwise=n_items, shards=1)
    config["panels"]["pw"]["collect"]["stop"] = stop
    return config


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    made = {name: tmp_path_factory.mktemp(name) for name in ("main", "first", "never")}
    with JudgeServer(pointwise=SCORERS, api_key=SECRET) as main, \
            JudgeServer(pointwise=SCORERS, api_key=SECRET) as first, \
            JudgeServer(pointwise=SCORERS, api_key=SECRET) as never:
        config = config_with(made["main"], main, 200, beta_halfwidth=0.6, level=0.95)
        # met after one round of 40 items; never met on 40 items
        once = config_with(made["first"], first, 40, beta_halfwidth=1.5, round_items=40,
                           min_items=40)
        unmet = config_with(made["never"], never, 40, beta_halfwidth=0.01)
        side_by_side((made["main"], config), (made["first"], once), (made["never"], unmet))
        stopped = pd.read_csv(made["main"] / STOPPING)
        calls_first = answered(main)
        page_first = (made["main"] / "results/index.html").read_text()
        rerun = snakemake(made["main"], config)
        calls_rerun = answered(main)
        config["panels"]["pw"]["collect"]["stop"]["beta_halfwidth"] = 0.3
        tighter = snakemake(made["main"], config)
        yield SimpleNamespace(folders=made, stopped=stopped, calls_first=calls_first,
                              page_first=page_first, rerun=rerun, calls_rerun=calls_rerun,
                              tighter=tighter, server=main, calls_tighter=answered(main))


def test_a_stopped_collection_runs_the_whole_default_target_to_the_page(collections):
    folder = collections.folders["main"]
    rounds = collections.stopped
    assert rounds.loc[0, "max_beta_halfwidth"] == float("inf")
    assert "with no interval yet" in rounds.loc[0, "reason"]
    assert rounds.iloc[-1]["stop"] and rounds.iloc[-1]["reason"] == "beta_halfwidth 0.6 reached"
    assert rounds.iloc[-1]["calls"] == collections.calls_first < 200 * 3 * 2 * 2
    assert "Rounds of a collection stopped at a precision" in collections.page_first
    for name in ("first", "never"):
        assert (collections.folders[name] / "results/index.html").is_file()
    for results in (folder / "results", *(collections.folders[n] / "results"
                                          for n in ("first", "never"))):
        assert assert_strict_json(results) >= 3


def test_a_rerun_calls_no_judge_and_a_tighter_target_only_the_new_calls(collections):
    folder, server = collections.folders["main"], collections.server
    assert collections.calls_rerun == collections.calls_first
    tighter = pd.read_csv(folder / STOPPING)
    last = tighter.iloc[-1]
    assert last["stop"] and last["reason"] == "beta_halfwidth 0.3 reached"
    assert last["items"] > collections.stopped.iloc[-1]["items"]
    # only the new items' calls: every request answered once, each cached once
    assert no_repeated_answers(server)
    assert collections.calls_tighter == last["calls"] == cached(folder)
    usage = pd.read_csv(folder / "results/pw/collect/usage.csv")
    total = usage[usage["endpoint"] == "total"].iloc[0]
    assert total["calls_made_this_run"] == collections.calls_tighter - collections.calls_first
    assert assert_strict_json(folder / "results") >= 3


def test_a_target_met_at_once_and_one_never_met(collections):
    once = pd.read_csv(collections.folders["first"] / STOPPING)
    assert len(once) == 1 and once.loc[0, "stop"] and once.loc[0, "items"] == 40
    never = pd.read_csv(collections.folders["never"] / STOPPING)
    assert not never["stop"].any()
    assert never.iloc[-1]["reason"] == "target not met: item table exhausted"
    log = (collections.folders["never"] / "results/pw/logs/judge_pointwise_rounds.log")
    assert "was not met within the item table" in log.read_text()


def test_the_page_shows_the_rounds_and_no_interval_yet_in_a_browser(collections):
    from page_browser import CHROMIUM, Opened, sync_api  # skips where Chromium is missing
    checked = 0
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--no-first-run"])
        for name in ("main", "first", "never"):
            rounds = pd.read_csv(collections.folders[name] / STOPPING)
            opened = Opened(browser, collections.folders[name] / "results/index.html")
            assert opened.errors == [] and opened.requests == []
            shown = opened.visible("pw.collect_stopping")
            assert len(shown) == len(rounds)
            for row, (_, file_row) in zip(shown, rounds.iterrows()):
                expected = ("no interval yet" if file_row["max_beta_halfwidth"] == float("inf")
                            else f"{file_row['max_beta_halfwidth']:.3f}")
                assert row["max_beta_halfwidth"] == expected
                checked += 1
            chart = opened.page.eval_on_selector(
                ".chart[data-chart='pw.stopping_chart']",
                "c => [...c.querySelectorAll('svg text')].map(t => t.textContent)")
            # the first round (no interval yet) is labelled on the chart, never at infinity
            assert ("no interval yet" in chart) == bool((rounds["max_beta_halfwidth"]
                                                         == float("inf")).any())
            assert "Infinity" not in " ".join(chart)
            opened.close()
        browser.close()
    assert checked >= 3
