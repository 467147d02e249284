"""Logs of older Inspect versions: their sample summaries hold no metadata (it is only in the
full samples), so a reader that trusts the summaries would find every metadata key missing.
The logs are written by Inspect's own log writer (no eval is run: fast)."""
import pytest

import polyjudge


def write_log(path, empty_summaries: bool, monkeypatch) -> None:
    """A finished eval of 3 samples scored by `judge_score`, language in the sample metadata;
    with ``empty_summaries`` its summaries have empty metadata, as older Inspect wrote them."""
    log_api = pytest.importorskip("inspect_ai.log")
    from inspect_ai.scorer import Score
    spec = log_api.EvalSpec(created="2024-06-01T00:00:00+00:00", task="judge_panel",
                            dataset=log_api.EvalDataset(), model="mockllm/grader-a",
                            config=log_api.EvalConfig())
    samples = [log_api.EvalSample(id=f"t0{i}", epoch=1, input="judge this", target="",
                                  metadata={"language": "de"},
                                  scores={"judge_score": Score(value=score)})
               for i, score in enumerate((7, 3, 9), start=1)]
    if empty_summaries:
        summary = log_api.EvalSample.summary
        monkeypatch.setattr(log_api.EvalSample, "summary",
                            lambda self: summary(self).model_copy(update={"metadata": {}}))
    log_api.write_eval_log(log_api.EvalLog(status="success", eval=spec, samples=samples),
                           str(path), format="eval")
    monkeypatch.undo()


def test_a_log_whose_summaries_have_empty_metadata_is_read(tmp_path, monkeypatch):
    """Such a log is read from its full samples, as the same log with the metadata in its
    summaries is, rather than refused as "3 of 3 samples lack key 'language'"."""
    write_log(tmp_path / "older.eval", True, monkeypatch)
    write_log(tmp_path / "newer.eval", False, monkeypatch)
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
    older = str(tmp_path / "older.eval")
    assert [s.metadata for s in read_eval_log_sample_summaries(older)] == [{}] * 3
    assert [s.metadata for s in read_eval_log(older).samples] == [{"language": "de"}] * 3
    runs = polyjudge.read_inspect_logs(older, scorer="judge_score")
    assert runs["score"].tolist() == [7.0, 3.0, 9.0] and set(runs["language"]) == {"de"}
    assert runs.equals(polyjudge.read_inspect_logs(tmp_path / "newer.eval",
                                                   scorer="judge_score"))
