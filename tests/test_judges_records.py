"""The typed records of a judge call: a reply's plain record is the cache line written before
the records existed (same keys, same bytes), and reads back to the same record."""
import json
import re

import pytest

from polyjudge.judges import AnswerFormat, CallCache, CallResult, Endpoint, protocols
from polyjudge.judges.cache import canonical_json
from polyjudge.judges.runner import Call, Stop

ENDPOINT = Endpoint(name="j", base_url="http://localhost:1/v1", model="m",
                    price_input_per_million=2.0, price_output_per_million=8.0)
ANSWER = AnswerFormat(kind="label", pattern=r"\[\[(A|B|tie)\]\]",
                      labels={"a": "A", "b": "B", "tie": "Tie"})
BODY = {"model": "m-served", "usage": {"prompt_tokens": 100, "completion_tokens": 20},
        "choices": [{"message": {"content": "so [[B]]"}, "finish_reason": "stop"}]}


def line_today(created, **extra):
    """The cache line of BODY as the runner has written it since the cache began."""
    return {"key": "k1", "endpoint": "j", "model": "m", "served_model": "m-served",
            "usage_reported": True, "base_url": "http://localhost:1/v1", "raw": "so [[B]]",
            "value": "B", "status": "ok", "finish_reason": "stop", "truncated": False,
            "input_tokens": 100, "output_tokens": 20, "cost": ENDPOINT.cost(100, 20),
            "latency": 0.25, "attempts": 2, "created": created, **extra}


def test_a_reply_is_the_cache_line_of_today_and_reads_back(tmp_path):
    result = CallResult.from_reply("k1", ENDPOINT, BODY, ANSWER, latency=0.25, attempts=2)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result.created)
    expected = line_today(result.created)
    assert result.to_dict() == expected and list(result.to_dict()) == list(expected)
    assert result.cost == pytest.approx(100 * 2e-6 + 20 * 8e-6, rel=1e-12)
    cache = CallCache(tmp_path / "shard0.jsonl")
    cache.put(result.to_dict())
    cache.close()
    written = (tmp_path / "shard0.jsonl").read_text(encoding="utf-8")
    assert written == canonical_json(expected) + "\n"
    stored = json.loads(written)
    assert CallResult.from_dict(stored) == result and CallResult.from_dict(stored).to_dict() == \
        stored
    assert result.to_dict(with_cached=True) == {**expected, "cached": False}


def test_a_batch_reply_adds_its_batch_and_batch_prices():
    result = CallResult.from_reply("k1", ENDPOINT, BODY, ANSWER, batch="batch_1")
    line = result.to_dict()
    assert line == {**line_today(result.created), "latency": 0.0, "attempts": 1,
                    "cost": ENDPOINT.cost(100, 20, batch=True), "batch": "batch_1"}
    assert CallResult.from_dict(line) == result


def test_a_cached_reply_is_reparsed_and_marked_cached():
    stored = line_today("2026-01-01T00:00:00Z", value="stale", status="parse_failure",
                        other="kept out")
    result = CallResult.from_cache(stored, ANSWER)
    assert (result.value, result.status, result.cached) == ("B", "ok", True)
    assert result.to_dict(with_cached=True) == {**line_today("2026-01-01T00:00:00Z"),
                                                "cached": True}
    cut = CallResult.from_cache({**stored, "truncated": True, "finish_reason": "length"}, ANSWER)
    assert (cut.value, cut.status) == (None, "parse_failure")


def test_a_failure_has_the_fields_of_a_failure():
    failed = CallResult.failure("k2", "j", "APITimeoutError", 3)
    assert failed.to_dict(with_cached=True) == {"key": "k2", "endpoint": "j", "status": "failed",
                                                "error": "APITimeoutError", "attempts": 3,
                                                "cached": False}
    assert not failed.is_reply and CallResult.from_dict(failed.to_dict()) == failed


def test_the_calls_table_reads_records_as_it_read_plain_ones():
    calls = [Call("k1", [{"role": "user", "content": "x"}], meta={"endpoint": "j", "stage": "s"}),
             Call("k2", [{"role": "user", "content": "y"}], meta={"endpoint": "j", "stage": "s"}),
             Call("k3", None, meta={"endpoint": "j", "stage": "s"})]
    reply = CallResult.from_reply("k1", ENDPOINT, BODY, ANSWER, latency=0.25, attempts=2)
    results = {"k1": reply, "k2": CallResult.failure("k2", "j", "APITimeoutError", 3)}
    table = protocols.calls_table(calls, results)
    assert list(table["status"]) == ["ok", "failed", "no_input"]
    assert table["value"][0] == "B" and table["value"][1:].isna().all()
    assert list(table["attempts"]) == [2, 3, 0]
    assert list(table["cost"]) == [reply.cost, 0.0, 0.0]
    assert list(table["cached"]) == [False, False, False]


def test_records_are_frozen_and_every_field_has_a_docstring():
    import ast
    import inspect
    from dataclasses import FrozenInstanceError, fields

    from polyjudge.judges import records, runner
    with pytest.raises(FrozenInstanceError):
        CallResult.failure("k", "j", "e", 1).status = "ok"
    for module, name in ((records, "CallResult"), (runner, "Channel"), (runner, "Tally")):
        body = next(n for n in ast.parse(inspect.getsource(module)).body
                    if isinstance(n, ast.ClassDef) and n.name == name).body
        documented = {a.target.id for a, d in zip(body, body[1:])
                      if isinstance(a, ast.AnnAssign) and isinstance(d, ast.Expr)
                      and isinstance(d.value, ast.Constant) and isinstance(d.value.value, str)}
        assert documented == {f.name for f in fields(getattr(module, name))}, name


def test_the_stop_says_why_each_reason_once():
    import asyncio

    async def main():
        stop = Stop()
        assert not stop.is_set()
        stop.set("max_cost reached")
        stop.set("SIGTERM")
        stop.set("max_cost reached")
        await asyncio.wait_for(stop.wait(), 1)
        return stop
    stop = asyncio.run(main())
    assert stop.is_set() and stop.describe() == "max_cost reached; SIGTERM"
