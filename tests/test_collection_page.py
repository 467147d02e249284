"""A collection stopped at a precision, run as a user runs it: the whole default target
(`snakemake --cores 2`, no target named) against the local server, through the results page.

The first round of the asymptotic sequence has no interval (an infinite half-width); the run
must still end with exit 0, every JSON must be strict JSON, and the page must show the rounds,
the first one as "no interval yet", in a real browser with no console error. Then a rerun with
the same target calls no judge, and a tighter target makes only the new calls. Beside it, in the
same config and run, a target met after the first round and one never met (`module fixture`
`collections`: three panels, each on a server of its own, three snakemake runs in all)."""
from types import SimpleNamespace

import pandas as pd
import pytest
from conftest import assert_strict_json
from judge_items import pointwise_items
from judge_server import JudgeServer
from test_judges_workflow import SCORERS, SECRET, collection_config, no_repeated_answers, \
    snakemake

from polyjudge.judges.cache import read_records

pytestmark = pytest.mark.slow
PANELS = ("pw", "pw_first", "pw_never")  # the stopped collection, met at once, never met
STOPPING = "results/{}/collect/stopping.csv"


def answered(server) -> int:
    return sum(e["status"] == 200 for e in server.log)


def cached(folder) -> int:
    return sum(1 for p in (folder / "cache" / "pw").glob("*/*/shard*.jsonl")
               for _ in read_records(p))


def stopping(folder, panel="pw") -> pd.DataFrame:
    return pd.read_csv(folder / STOPPING.format(panel))


def three_collections(folder, servers) -> dict:
    """One config, three pointwise panels: ``pw`` (200 items, stopped at a beta half-width of
    0.6), ``pw_first`` (40 items, met after one round of 40) and ``pw_never`` (40 items, never
    met); each panel's judges are endpoints of its own on its own server (the same models), so
    each server's count is its panel's."""
    config = collection_config(folder, servers["pw"].base_url, n_pointwise=200, shards=1)
    pointwise_items(40, ["en", "zh", "es"]).to_csv(folder / "data" / "pointwise_40.csv",
                                                    index=False)
    main = config["panels"]["pw"]
    main["collect"]["stop"] = {"beta_halfwidth": 0.6, "level": 0.95}
    stops = {"pw_first": {"beta_halfwidth": 1.5, "round_items": 40, "min_items": 40},
             "pw_never": {"beta_halfwidth": 0.01}}
    for panel, stop in stops.items():
        judges = []
        for judge in SCORERS:
            name = f"{panel}_{judge}"
            config["endpoints"][name] = dict(config["endpoints"][judge], model=judge,
                                             base_url=servers[panel].base_url)
            judges.append(name)
        config["panels"][panel] = {**main, "collect": {**main["collect"], "judges": judges,
                                                       "items": "pointwise_40.csv",
                                                       "stop": stop}}
    return config


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    folder = tmp_path_factory.mktemp("collections")
    with JudgeServer(pointwise=SCORERS, api_key=SECRET) as main, \
            JudgeServer(pointwise=SCORERS, api_key=SECRET) as first, \
            JudgeServer(pointwise=SCORERS, api_key=SECRET) as never:
        servers = {"pw": main, "pw_first": first, "pw_never": never}
        config = three_collections(folder, servers)
        snakemake(folder, config)
        stopped = stopping(folder)
        calls_first = answered(main)
        page_first = (folder / "results/index.html").read_text()
        rerun = snakemake(folder, config)
        calls_rerun = answered(main)
        config["panels"]["pw"]["collect"]["stop"]["beta_halfwidth"] = 0.3
        tighter = snakemake(folder, config)
        yield SimpleNamespace(folder=folder, stopped=stopped, calls_first=calls_first,
                              page_first=page_first, rerun=rerun, calls_rerun=calls_rerun,
                              tighter=tighter, server=main, calls_tighter=answered(main),
                              calls_other={p: answered(servers[p]) for p in PANELS[1:]})


def test_a_stopped_collection_runs_the_whole_default_target_to_the_page(collections):
    rounds = collections.stopped
    assert rounds.loc[0, "max_beta_halfwidth"] == float("inf")
    assert "with no interval yet" in rounds.loc[0, "reason"]
    assert rounds.iloc[-1]["stop"] and rounds.iloc[-1]["reason"] == "beta_halfwidth 0.6 reached"
    assert rounds.iloc[-1]["calls"] == collections.calls_first < 200 * 3 * 2 * 2
    assert "Rounds of a collection stopped at a precision" in collections.page_first
    for panel in PANELS[1:]:  # each beside panel's calls on its own server, all in its table
        assert stopping(collections.folder, panel).iloc[-1]["calls"] \
            == collections.calls_other[panel]
    assert assert_strict_json(collections.folder / "results") >= 3 * len(PANELS)


def test_a_rerun_calls_no_judge_and_a_tighter_target_only_the_new_calls(collections):
    folder, server = collections.folder, collections.server
    assert collections.calls_rerun == collections.calls_first
    assert "Nothing to be done" in collections.rerun.stdout + collections.rerun.stderr
    tighter = stopping(folder)
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
    once = stopping(collections.folder, "pw_first")
    assert len(once) == 1 and once.loc[0, "stop"] and once.loc[0, "items"] == 40
    never = stopping(collections.folder, "pw_never")
    assert not never["stop"].any()
    assert never.iloc[-1]["reason"] == "target not met: item table exhausted"
    log = collections.folder / "results/pw_never/logs/judge_pointwise_rounds.log"
    assert "was not met within the item table" in log.read_text()


def test_the_page_shows_the_rounds_and_no_interval_yet_in_a_browser(collections):
    """The one page of the three panels (after the tighter target), each panel's rounds."""
    from page_browser import CHROMIUM, Opened, sync_api  # skips where Chromium is missing
    checked = 0
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--no-first-run"])
        opened = Opened(browser, collections.folder / "results/index.html")
        for name in PANELS:
            rounds = stopping(collections.folder, name)
            opened.panel(name)
            assert opened.errors == [] and opened.requests == []
            shown = opened.visible(f"{name}.collect_stopping")
            assert len(shown) == len(rounds)
            for row, (_, file_row) in zip(shown, rounds.iterrows()):
                expected = ("no interval yet" if file_row["max_beta_halfwidth"] == float("inf")
                            else f"{file_row['max_beta_halfwidth']:.3f}")
                assert row["max_beta_halfwidth"] == expected
                checked += 1
            chart = opened.page.eval_on_selector(
                f".chart[data-chart='{name}.stopping_chart']",
                "c => [...c.querySelectorAll('svg text')].map(t => t.textContent)")
            # the first round (no interval yet) is labelled on the chart, never at infinity
            assert ("no interval yet" in chart) == bool((rounds["max_beta_halfwidth"]
                                                         == float("inf")).any())
            assert "Infinity" not in " ".join(chart)
        opened.close()
        browser.close()
    assert checked >= 3
