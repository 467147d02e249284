"""A panel with a third factor, read from one file per language, through the whole workflow:
MT-Bench-style single-answer grading (questions with two turns, two judged models, three
judges), each language's files a source of a list with `constants: {language: ...}`, the turn
as the task stratum and the judged model as the runs of a cell. The run ends without error,
shape.json and the ingest log say which analyses use each factor and which pool it, and the
page's line on what the ranking ranks says what it pools over."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import assert_strict_json

REPO = Path(__file__).resolve().parents[1]
JUDGES, MODELS, LANGUAGES = ("gpt-4", "claude", "qwen"), ("vicuna", "llama"), ("en", "bn")


def write_judgments(root: Path) -> None:
    """data/<language>/<judge>_single.jsonl: records {question_id, turn, model, score}, no
    language field (the tool's files do not say it)."""
    rng = np.random.default_rng(7)
    for language in LANGUAGES:
        for judge in JUDGES:
            folder = root / "data" / language
            folder.mkdir(parents=True, exist_ok=True)
            with open(folder / f"{judge}_single.jsonl", "w") as handle:
                for question in range(81, 93):
                    for turn in (1, 2):
                        for model in MODELS:
                            record = {"question_id": question, "turn": turn, "model": model,
                                      "judge": judge, "score": int(rng.integers(1, 11))}
                            handle.write(json.dumps(record) + "\n")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("third_factor")
    write_judgments(root)
    # the turn is part of the task (a question's two turns are two items) and its stratum
    for path in (root / "data").rglob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps({**r, "item": f"{r['question_id']}-{r['turn']}"})
                                + "\n" for r in lines))
    panel = {"kind": "judge_runs", "score_range": [1, 10],
             "runs": [{"path": f"{language}/*_single.jsonl",
                       "constants": {"language": language}} for language in LANGUAGES],
             "columns": {"task": "item", "backbone": "judge", "framework": "model",
                         "stratum": "turn"},
             "analyses": ["cbc", "reversal", "information"]}
    config = {"data_dir": "data", "panels": {"mtbench": panel}, "simulation": {"scenarios": {}},
              "reversal": {"permutations": 19}, "information": {"permutations": 20, "shards": 1}}
    (root / "my.yaml").write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "-s",
                             str(REPO / "Snakefile"), "--configfile", "my.yaml"], cwd=root,
                            capture_output=True, text=True, timeout=600)
    return root, result


@pytest.mark.slow
def test_a_list_of_sources_with_constants_and_a_third_factor_runs_through(run):
    root, result = run
    assert result.returncode == 0, result.stderr[-3000:]
    results = root / "results"
    assert_strict_json(results)
    shape = json.loads((results / "mtbench" / "shape.json").read_text())
    assert sorted(shape["languages"]) == ["bn", "en"] and shape["n_tasks"] == 24
    factors = shape["factors"]
    assert factors["framework"]["values"] == 2 and factors["stratum"]["values"] == 2
    assert factors["framework"]["analyses"]["information"].startswith("used:")
    assert factors["stratum"]["analyses"]["reversal"].startswith("ignored:")
    log = (results / "mtbench" / "logs" / "ingest.log").read_text()
    assert ("panel mtbench: framework has 2 values; used by information; averaged by cbc, "
            "reversal") in log
    assert "panel mtbench: stratum has 2 values; used by no analysis; ignored by cbc" in log
    page = (results / "index.html").read_text()
    assert "Averaged over 2 frameworks per cell and 2 task strata." in page
