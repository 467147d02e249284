"""The batch server of tests/judge_server.py through the official openai client: a batch answers
as the same requests sent alone (bodies, usage, log), finishes with nobody polling, shows its
progress; planted errors (400 every time, 500 the first time only), expiry (and a resubmission
that completes), cancel, a malformed output line and an invalid input line land where the OpenAI
Batch API puts them; list pages and metadata; 400, 401 and 404."""
import hashlib
import json
import re
import time
import urllib.error
import urllib.request

import openai
import pytest
from judge_server import JudgeServer, body_hash, uniform

KEY = "k"
SCORERS = {"scorer_x": {"zh": -1}}


def body(item, language, good=True, model="scorer_x"):
    """A pointwise request carrying the markers ``reply`` reads."""
    quality = "<<good|1>>" if good else "<<bad|2>>"
    return {"model": model, "max_tokens": 16, "temperature": 0,
            "messages": [{"role": "system", "content": "Score the output from 1 to 5."},
                         {"role": "user", "content": f"<<item:{item}>> <<lang:{language}>>\n"
                                                     f"Output: {quality} 你好 answer {item}"}]}


def bodies(n):
    return {f"req-{i}": body(str(i // 2), ("en", "zh")[i % 2], good=i % 3 != 0) for i in range(n)}


def jsonl(requests: dict) -> bytes:
    return "".join(json.dumps({"custom_id": custom_id, "method": "POST",
                               "url": "/v1/chat/completions", "body": b}) + "\n"
                   for custom_id, b in requests.items()).encode()


def client(server, key=KEY):
    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=0)


def submit(api, data: bytes, metadata=None):
    uploaded = api.files.create(file=("requests.jsonl", data), purpose="batch")
    return api.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                              completion_window="24h", metadata=metadata)


def wait(api, batch_id, until=("completed", "failed", "expired", "cancelled"), timeout=10.0):
    deadline = time.monotonic() + timeout
    while (batch := api.batches.retrieve(batch_id)).status not in until:
        assert time.monotonic() < deadline, f"{batch_id} still {batch.status}"
        time.sleep(0.01)
    return batch


def lines(api, file_id):
    return [json.loads(line) for line in api.files.content(file_id).text.splitlines()]


def sync_answer(server, request):
    """The synchronous path's answer to the request sent as its canonical bytes (so its body
    hash and id are the batch's)."""
    raw = urllib.request.Request(server.base_url + "/chat/completions",
                                 data=json.dumps(request, sort_keys=True).encode(),
                                 headers={"Authorization": f"Bearer {KEY}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(raw, timeout=10) as response:
        return json.loads(response.read())


def test_a_batch_answers_as_the_same_requests_sent_alone():
    requests = bodies(6)
    with JudgeServer(pointwise=SCORERS, api_key=KEY) as server:
        api = client(server)
        created = submit(api, jsonl(requests), metadata={"run": "r1"})
        assert created.status == "validating" and created.output_file_id is None
        assert created.request_counts.total == 0
        assert created.expires_at == created.created_at + 24 * 3600
        batch = wait(api, created.id)
        assert batch.status == "completed" and batch.metadata == {"run": "r1"}
        assert (batch.request_counts.total, batch.request_counts.completed,
                batch.request_counts.failed) == (6, 6, 0)
        assert None not in (batch.in_progress_at, batch.finalizing_at, batch.completed_at)
        assert (batch.failed_at, batch.expired_at, batch.cancelled_at, batch.error_file_id,
                batch.errors) == (None,) * 5
        output = lines(api, batch.output_file_id)
        assert [line["custom_id"] for line in output] == list(requests)
        assert all(line["id"].startswith("batch_req_") and line["error"] is None
                   and line["response"]["status_code"] == 200 for line in output)
        # the planted scores, the batch's usage, and its log lines (hash of the canonical JSON)
        for line in output:
            request = requests[line["custom_id"]]
            content = request["messages"][-1]["content"]
            item, language = re.search(r"<<item:(\w+)>> <<lang:(\w+)>>", content).groups()
            side = "chosen" if "<<good|" in content else "rejected"
            planted = server.planted_score("scorer_x", item, language, side)
            assert line["response"]["body"]["choices"][0]["message"]["content"] == (
                f"Score: {planted}")
        usage = dict(server.usage["scorer_x"])
        assert usage == {"requests": 6,
                         "input_tokens": sum(line["response"]["body"]["usage"]["prompt_tokens"]
                                             for line in output),
                         "output_tokens": sum(
                             line["response"]["body"]["usage"]["completion_tokens"]
                             for line in output)}
        hashes = [hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest()
                  for r in requests.values()]
        assert hashes == [body_hash(r) for r in requests.values()]
        assert [(e["batch"], e["custom_id"], e["body"], e["model"], e["status"])
                for e in server.batch_log] == [(batch.id, c, h, "scorer_x", 200)
                                               for c, h in zip(requests, hashes)]
        assert [e["body"] for e in server.log] == hashes
        # the same requests sent alone: the very same chat.completion objects, usage counted again
        for line in output:
            assert sync_answer(server, requests[line["custom_id"]]) == line["response"]["body"]
        assert server.usage["scorer_x"]["requests"] == 12
        assert [e["body"] for e in server.log][6:] == hashes  # one hash per request, both ways
        # and through the client (its own bytes, so its own id): the same reply and usage
        alone = api.chat.completions.create(**requests["req-1"])
        first = output[1]["response"]["body"]
        assert alone.choices[0].message.content == first["choices"][0]["message"]["content"]
        assert alone.usage.model_dump(exclude_none=True) == first["usage"]
        assert server.authorization == {f"Bearer {KEY}"}


def test_a_batch_completes_while_nobody_polls():
    with JudgeServer(pointwise=SCORERS, batch_delay=0.2) as server:
        api = client(server)
        created = submit(api, jsonl(bodies(4)))
        time.sleep(0.1)
        assert server.batches[created.id]["status"] in ("validating", "in_progress")
        assert not server.batch_log
        time.sleep(0.6)  # nobody asks
        batch = api.batches.retrieve(created.id)  # the one poll, after the fact
        assert batch.status == "completed" and batch.request_counts.completed == 4
        assert len(lines(api, batch.output_file_id)) == 4 and len(server.batch_log) == 4


def test_a_poll_in_the_middle_sees_progress():
    with JudgeServer(pointwise=SCORERS, batch_request_delay=0.03) as server:
        api = client(server)
        created = submit(api, jsonl(bodies(10)))
        batch = wait(api, created.id, until=("in_progress",))
        deadline = time.monotonic() + 5
        while not 0 < batch.request_counts.completed < 10:
            assert time.monotonic() < deadline
            time.sleep(0.01)
            batch = api.batches.retrieve(created.id)
        assert batch.status == "in_progress" and batch.request_counts.total == 10
        assert batch.output_file_id is None and batch.completed_at is None
        assert wait(api, created.id).request_counts.completed == 10


def test_planted_request_errors_go_to_the_error_file():
    requests = bodies(20)
    requests["req-unknown-model"] = body("8", "en", model="no_such_judge")
    planted = {c for c, b in requests.items() if uniform(body_hash(b), "batch_error") < 0.4}
    assert 0 < len(planted) < 20 and "req-unknown-model" not in planted
    with JudgeServer(pointwise=SCORERS, batch_errors=0.4) as server:
        api = client(server)
        batch = wait(api, submit(api, jsonl(requests)).id)
        failed = planted | {"req-unknown-model"}  # an unanswerable request fails alone
        assert batch.status == "completed"
        assert (batch.request_counts.completed, batch.request_counts.failed) == (
            21 - len(failed), len(failed))
        output, errors = lines(api, batch.output_file_id), lines(api, batch.error_file_id)
        assert [line["custom_id"] for line in output] == [c for c in requests if c not in failed]
        assert [line["custom_id"] for line in errors] == [c for c in requests if c in failed]
        codes = {line["custom_id"]: line["response"]["body"]["error"]["code"] for line in errors}
        assert codes == {**{c: "planted_error" for c in planted},
                         "req-unknown-model": "invalid_request"}
        assert all(line["response"]["status_code"] == 400 and line["error"] is None
                   and line["response"]["body"]["error"]["type"] == "invalid_request_error"
                   for line in errors)
        assert server.usage["scorer_x"]["requests"] == len(output)  # a 400 is not billed
        assert sorted(e["status"] for e in server.batch_log) == sorted(
            [200] * len(output) + [400] * len(failed))


def test_transient_errors_fail_once_and_permanent_ones_every_time():
    requests = bodies(40)
    u = {c: uniform(body_hash(b), "batch_error") for c, b in requests.items()}
    permanent = {c for c in requests if u[c] < 0.1}
    transient = {c for c in requests if 0.1 <= u[c] < 0.3}
    assert permanent and transient
    with JudgeServer(pointwise=SCORERS, batch_errors=0.1, batch_transient=0.2) as server:
        api = client(server)
        first = wait(api, submit(api, jsonl(requests)).id)
        errors = lines(api, first.error_file_id)
        status = {line["custom_id"]: line["response"]["status_code"] for line in errors}
        assert status == {**{c: 400 for c in permanent}, **{c: 500 for c in transient}}
        assert all(line["response"]["body"]["error"]["type"] == "server_error"
                   for line in errors if line["custom_id"] in transient)
        assert server.usage["scorer_x"]["requests"] == 40 - len(status)  # errors are not billed
        # sent again: the 500s are answered, the 400s fail again
        again = wait(api, submit(api, jsonl({c: requests[c] for c in status})).id)
        assert {line["custom_id"] for line in lines(api, again.output_file_id)} == transient
        assert {line["custom_id"] for line in lines(api, again.error_file_id)} == permanent
        assert server.usage["scorer_x"]["requests"] == 40 - len(permanent)
        ran = [(e["custom_id"], e["status"]) for e in server.batch_log]
        assert sorted(ran) == sorted([(c, 200) for c in requests if c not in permanent]
                                     + [(c, 500) for c in transient]
                                     + [(c, 400) for c in permanent] * 2)


def test_an_expired_batch_keeps_what_it_completed_and_a_resubmission_completes_the_rest():
    requests = bodies(10)
    with JudgeServer(pointwise=SCORERS, batch_expire=0.5, batch_expire_batches=1) as server:
        api = client(server)
        first = wait(api, submit(api, jsonl(requests)).id)
        assert first.status == "expired" and first.expired_at and first.completed_at is None
        assert first.request_counts.completed == 5
        done = [line["custom_id"] for line in lines(api, first.output_file_id)]
        assert done == list(requests)[:5]
        rest = lines(api, first.error_file_id)
        assert [line["custom_id"] for line in rest] == list(requests)[5:]
        assert all(line["response"] is None and line["error"]["code"] == "batch_expired"
                   for line in rest)
        again = {c: requests[c] for c in (line["custom_id"] for line in rest)}
        second = wait(api, submit(api, jsonl(again)).id)
        assert second.status == "completed" and second.error_file_id is None
        assert [line["custom_id"] for line in lines(api, second.output_file_id)] == list(again)
        assert server.batch_created == 2
        assert sorted(e["custom_id"] for e in server.batch_log) == sorted(requests)  # each once
        assert server.usage["scorer_x"]["requests"] == 10
    with JudgeServer(pointwise=SCORERS, batch_expire=0.0) as server:  # every batch expires
        api = client(server)
        for _ in range(2):
            batch = wait(api, submit(api, jsonl(bodies(3))).id)
            assert batch.status == "expired" and batch.output_file_id is None
            assert len(lines(api, batch.error_file_id)) == 3
        assert not server.batch_log


def test_a_cancelled_batch_keeps_what_it_completed():
    requests = bodies(12)
    with JudgeServer(pointwise=SCORERS, batch_request_delay=0.05) as server:
        api = client(server)
        created = submit(api, jsonl(requests))
        deadline = time.monotonic() + 5
        while api.batches.retrieve(created.id).request_counts.completed < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        cancelling = api.batches.cancel(created.id)
        assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
        batch = wait(api, created.id)
        assert batch.status == "cancelled" and batch.cancelled_at and batch.completed_at is None
        output, rest = lines(api, batch.output_file_id), lines(api, batch.error_file_id)
        assert 2 <= len(output) < 12 and len(output) + len(rest) == 12
        assert [line["custom_id"] for line in output + rest] == list(requests)
        assert all(line["error"]["code"] == "batch_cancelled" for line in rest)
        assert len(server.batch_log) == len(output) == batch.request_counts.completed
    with JudgeServer(pointwise=SCORERS, batch_delay=5.0) as server:  # cancelled before it starts
        api = client(server)
        created = submit(api, jsonl(bodies(3)))
        time.sleep(0.05)
        start = time.monotonic()
        api.batches.cancel(created.id)
        batch = wait(api, created.id, timeout=2)
        assert batch.status == "cancelled" and time.monotonic() - start < 1
        assert batch.output_file_id is None and len(lines(api, batch.error_file_id)) == 3
        assert not server.batch_log


def test_list_pages_newest_first_with_metadata():
    with JudgeServer(pointwise=SCORERS, api_key=KEY) as server:
        api = client(server)
        ids = [submit(api, jsonl(bodies(1)), metadata={"n": str(n)}).id for n in range(5)]
        page = api.batches.list(limit=2)
        assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
        assert [b.metadata for b in page.data] == [{"n": "4"}, {"n": "3"}]
        assert page.has_next_page()
        following = page.get_next_page()
        assert [b.id for b in following.data] == ids[::-1][2:4]
        assert [b.id for b in api.batches.list(limit=2)] == ids[::-1]  # auto-paging via after
        last = api.batches.list(limit=100)
        assert len(last.data) == 5 and last.has_more is False
        raw = json.loads(api.batches.with_raw_response.list(limit=2, after=ids[1]).text)
        assert raw["object"] == "list" and [b["id"] for b in raw["data"]] == [ids[0]]
        assert (raw["first_id"], raw["last_id"], raw["has_more"]) == (ids[0], ids[0], False)
        assert {b.metadata["n"] for b in last.data} == {"0", "1", "2", "3", "4"}


def test_a_malformed_output_line():
    with JudgeServer(pointwise=SCORERS, batch_malformed=True) as server:
        api = client(server)
        batch = wait(api, submit(api, jsonl(bodies(3))).id)
        text = api.files.content(batch.output_file_id).text.splitlines()
        assert len(text) == 3 and json.loads(text[0])["custom_id"] == "req-0"
        assert json.loads(text[2])["custom_id"] == "req-2"
        with pytest.raises(json.JSONDecodeError):
            json.loads(text[1])
        assert text[1].startswith('{"id": "batch_req_')


def test_an_invalid_input_line_fails_the_batch_naming_the_line():
    good = json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
                       "body": body("1", "en")})
    data = "\n".join([good, "{not json",
                      good.replace('"POST"', '"GET"').replace('"a"', '"b"'),
                      good,  # custom_id a again
                      json.dumps({"custom_id": "c", "method": "POST",
                                  "url": "/v1/chat/completions", "body": "text"})]).encode()
    with JudgeServer(pointwise=SCORERS) as server:
        api = client(server)
        batch = wait(api, submit(api, data).id)
        assert batch.status == "failed" and batch.failed_at and batch.in_progress_at is None
        assert batch.errors.object == "list"
        assert [(e.code, e.line) for e in batch.errors.data] == [("invalid_request", n)
                                                                 for n in (2, 3, 4, 5)]
        assert all(e.message for e in batch.errors.data)
        assert batch.output_file_id is None and batch.error_file_id is None
        assert not server.batch_log and not server.log and not server.usage


def test_requests_the_api_refuses():
    with JudgeServer(pointwise=SCORERS, api_key=KEY) as server:
        stranger = client(server, key="wrong")
        with pytest.raises(openai.AuthenticationError) as refused:
            stranger.files.create(file=("r.jsonl", jsonl(bodies(1))), purpose="batch")
        assert refused.value.status_code == 401
        with pytest.raises(openai.AuthenticationError):
            stranger.batches.list()
        api = client(server)
        with pytest.raises(openai.AuthenticationError):
            stranger.batches.retrieve(submit(api, jsonl(bodies(1))).id)
        with pytest.raises(openai.NotFoundError) as missing:
            api.batches.retrieve("batch_unknown")
        assert missing.value.status_code == 404 and "batch_unknown" in str(missing.value)
        with pytest.raises(openai.NotFoundError):
            api.batches.cancel("batch_unknown")
        with pytest.raises(openai.NotFoundError):
            api.files.content("file-unknown")
        uploaded = api.files.create(file=("r.jsonl", jsonl(bodies(1))), purpose="batch")
        assert api.files.retrieve(uploaded.id).filename == "r.jsonl"
        for kwargs in ({"input_file_id": "file-unknown"}, {"endpoint": "/v1/embeddings"},
                       {"completion_window": "1h"}):
            params = {"input_file_id": uploaded.id, "endpoint": "/v1/chat/completions",
                      "completion_window": "24h", **kwargs}
            with pytest.raises(openai.BadRequestError):
                api.batches.create(**params)
        with pytest.raises(openai.BadRequestError):
            api.files.create(file=("r.jsonl", b"{}"), purpose="fine-tune")
        assert server.batch_created == 1
        unknown = urllib.request.Request(server.base_url + "/nothing/here",
                                         headers={"Authorization": f"Bearer {KEY}"})
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(unknown, timeout=10)
        assert page.value.code == 404 and json.loads(page.value.read())["error"]["message"]


def test_synchronous_faults_are_skipped_but_length_is_kept():
    requests = bodies(4)
    with JudgeServer(pointwise=SCORERS, faults={"429": 1.0}, latency=1.0) as server:
        api = client(server)
        start = time.monotonic()
        batch = wait(api, submit(api, jsonl(requests)).id)
        assert batch.request_counts.completed == 4 and time.monotonic() - start < 1.0
        assert {e["status"] for e in server.log} == {200}
    with JudgeServer(pointwise=SCORERS, faults={"length": 1.0}) as server:
        api = client(server)
        output = lines(api, wait(api, submit(api, jsonl(requests)).id).output_file_id)
        choices = [line["response"]["body"]["choices"][0] for line in output]
        assert {c["finish_reason"] for c in choices} == {"length"}
        assert all(len(c["message"]["content"]) < len("Score: 3") for c in choices)
