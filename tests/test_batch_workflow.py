"""End to end: a pointwise collection in batch jobs against local batch servers
(tests/judge_server.py) that fail 2% of requests once with status 500, as providers do, completes
in one snakemake run: the 500s go into a second batch, the ingest (with `missing: error`) and CBC
run, every request is answered exactly once, and usage.csv, the cache and the ledger count each
reply once at batch prices. A second panel, on a server that fails 10% of requests once with 500
and 5% with status 400 every time, has those calls `failed`, named with their reason in the calls
tables and the shard logs, and only those."""
import pandas as pd
import pytest
from judge_server import JudgeServer
from test_judges_workflow import PRICES, SCORERS, SECRET, collection_config, snakemake

from polyjudge.judges.ledger import Ledger

N_ITEMS, LANGUAGES, MAX_COST = 12, 3, 100.0
BATCH = {"batch": True, "batch_poll_interval": 0.02, "batch_poll_max": 0.05}


def runs(server):
    """custom_id -> the statuses a batch answered it with, in order."""
    out = {}
    for e in server.batch_log:
        out.setdefault(e["custom_id"], []).append(e["status"])
    return out


def batch_cost(server, prices):
    return sum((u["input_tokens"] * prices[m][0] + u["output_tokens"] * prices[m][1]) / 2e6
               for m, u in server.usage.items())


@pytest.mark.slow
def test_a_batch_collection_with_transient_errors_completes_in_one_run(tmp_path):
    with JudgeServer(pointwise=SCORERS, api_key=SECRET, batch_transient=0.02) as server, \
            JudgeServer(pointwise=SCORERS, api_key=SECRET, batch_transient=0.1,
                        batch_errors=0.05) as faulty:
        config = collection_config(tmp_path, server.base_url, n_pointwise=N_ITEMS,
                                   max_cost=MAX_COST)
        for endpoint in config["endpoints"].values():
            endpoint.update(BATCH)
        config["endpoints"]["scorer_p"] = {**config["endpoints"]["scorer_x"],
                                           "base_url": faulty.base_url}
        pw = config["panels"]["pw"]
        pw["missing"] = "error"  # a score missing after the run would stop the ingest
        config["panels"]["pwp"] = {**pw, "collect": {**pw["collect"], "judges": ["scorer_p"]}}
        snakemake(tmp_path, config, "results/pw/cbc/beta.csv", "results/pw/collect/usage.csv",
                  "results/pw/collect/status.csv", "results/pwp/collect/status.csv")
        calls = N_ITEMS * LANGUAGES * 2 * len(SCORERS)
        # every request answered exactly once; the 500s once each, then answered
        ran = runs(server)
        assert len(ran) == calls and all(r in ([200], [500, 200]) for r in ran.values())
        retried = sum(r == [500, 200] for r in ran.values())
        # one batch per judge, and one more for each judge with 500s
        with_500 = {e["model"] for e in server.batch_log if e["status"] == 500}
        assert retried > 0 and server.batch_created == len(SCORERS) + len(with_500)
        assert sum(u["requests"] for u in server.usage.values()) == calls
        # the ingest and CBC ran on every score
        status = pd.read_csv(tmp_path / "results/pw/collect/status.csv")
        assert status["n_ok"].sum() + status["n_parse_failure"].sum() == calls
        assert status["n_failed"].sum() == 0
        assert len(pd.read_csv(tmp_path / "results/pw/cbc/beta.csv")) == LANGUAGES * 2
        # paid once: usage.csv, the cache and the ledger all equal the server's usage
        usage = pd.read_csv(tmp_path / "results/pw/collect/usage.csv").set_index("endpoint")
        assert usage.loc["total", "calls"] == calls
        cost = batch_cost(server, PRICES)
        p_cost = batch_cost(faulty, {"scorer_x": PRICES["scorer_x"]})
        assert usage.loc["total", "cost_usd"] == pytest.approx(cost)
        spent, reserved = Ledger(tmp_path / "cache", "pw", MAX_COST).view()
        assert spent == pytest.approx(cost) and reserved == 0
        assert Ledger(tmp_path / "cache", "pwp", MAX_COST).view()[0] == pytest.approx(p_cost)

        # the second panel: the 400s are failed (run once, never again), named, and only they
        ran = runs(faulty)
        permanent = {k for k, r in ran.items() if r == [400]}
        assert permanent and all(r in ([200], [500, 200], [400]) for r in ran.values())
        assert any(r == [500, 200] for r in ran.values())
        table = pd.concat(pd.read_parquet(p) for p in sorted(
            (tmp_path / "results/pwp/collect/judge_pointwise").rglob("*.parquet")))
        failed = table[table["status"] == "failed"]
        assert set(failed["key"]) == permanent
        assert failed["error"].str.contains("400 planted_error planted request error").all()
        status = pd.read_csv(tmp_path / "results/pwp/collect/status.csv", keep_default_na=False)
        assert status["n_failed"].sum() == len(permanent)
        assert (status["failed_errors"] == [f"{n} x 400 planted_error planted request error"
                                            if n else "" for n in status["n_failed"]]).all()
        log = "".join(p.read_text() for p in (tmp_path / "results/pwp/logs").glob("judge_*.log"))
        assert log.count("failed, not sent again in this run (batch") == len(permanent)
        assert "400 planted_error" in log and "sent again (" in log
