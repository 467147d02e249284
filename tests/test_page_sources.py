"""Every table source the reader accepts (polyjudge.data.sources), through the workflow: one
run, default target, with one small panel per source kind (one file, a folder, a glob, a list, a
template, Hive partitions, a list of a glob and a folder whose records name their backbone and
language, Inspect logs). The run exits 0; each source of the same runs gives the one file's
tensor and beta bit for bit; the page's provenance lists each panel's files with their
checksums. (One run serves both: the sources' own run would repeat three of these panels.)"""
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from test_page import page_json
from test_sources import JSON_COLUMNS, hive_tree, jsonl_tree, one_csv, runs_table

# panel -> its `runs` source (and columns); the data are the same runs in every layout
SOURCES = {
    "one_file": {"runs": "one.csv"},
    "folder": {"runs": "parts"},
    "glob": {"runs": "parts/*.csv"},
    "listed": {"runs": ["parts/claude.csv", "parts/gpt.csv"]},
    "template": {"runs": {"template": "judges/{backbone}/{language}.jsonl"},
                 "columns": JSON_COLUMNS},
    "hive": {"runs": {"path": "hive", "partitioning": "hive"}},
    # backbone and language from the records themselves (fields b and l), not the paths
    "records": {"runs": ["judges/gpt/*.jsonl", "judges/claude"],
                "columns": {**JSON_COLUMNS, "backbone": "b", "language": "l"}},
    "inspect": {"runs": {"inspect": "inspect", "scorer": "judge_score"}},
}
N_FILES = {"one_file": 1, "folder": 2, "glob": 2, "listed": 2, "template": 6, "hive": 6,
           "records": 6, "inspect": 6}
SAME_RUNS = [name for name in SOURCES if name not in ("one_file", "inspect")]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The one snakemake run over every source kind: (workdir, its completed process)."""
    from test_inspect_logs import write_logs
    from test_workflow import snakemake

    workdir = tmp_path_factory.mktemp("page_sources")
    data = workdir / "data"
    data.mkdir()
    frame = runs_table(n_tasks=6)
    one_csv(data, frame)
    (data / "parts").mkdir()
    for backbone, part in frame.groupby("backbone"):
        part.to_csv(data / "parts" / f"{backbone}.csv", index=False)
    jsonl_tree(data, frame)
    for (backbone, language), part in frame.groupby(["backbone", "language"]):
        path = data / "judges" / backbone / f"{language}.jsonl"  # the records name their cell
        records = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps({**r, "b": backbone, "l": language}) + "\n"
                                for r in records))
    hive_tree(data, frame)
    write_logs(data / "inspect", log_format="json", epochs=2, n_samples=4, seed=4)
    common = {"kind": "judge_runs", "score_range": [0, 100], "analyses": ["cbc"]}
    config = {"data_dir": str(data), "simulation": {"scenarios": {}},
              "rank_intervals": {"replicates": 100, "level": 0.95, "seed": 0},
              "panels": {name: {**common, **source} for name, source in SOURCES.items()}}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    return workdir, snakemake(workdir, "--configfile", "config.yaml", check=False)


def page_data(workdir) -> dict:
    return page_json((workdir / "results" / "index.html").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_run_over_every_source_kind_exits_0_with_its_page(run):
    workdir, result = run
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    shown = {panel["name"] for panel in page_data(workdir)["panels"]}
    assert shown == set(SOURCES)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SOURCES))
def test_the_page_lists_each_file_of_a_source_with_its_checksum(run, name):
    workdir, result = run
    assert result.returncode == 0, result.stderr[-3000:]
    provenance = page_data(workdir)["provenance"]["inputs"]
    shown = pd.DataFrame(provenance["data"], columns=provenance["keys"])
    shown = shown[shown["panel"] == name]
    manifest = json.loads((workdir / "results" / name / "inputs.json").read_text())["files"]
    files = manifest["runs"] if isinstance(manifest["runs"], list) else [manifest["runs"]]
    assert len(files) == N_FILES[name]
    assert shown["input"].tolist() == ["runs"] * len(files)
    assert shown["path"].tolist() == [f["path"] for f in files]
    assert shown["sha256"].tolist() == [f["sha256"] for f in files]
    assert all(len(sha) == 64 for sha in shown["sha256"])


@pytest.mark.slow
@pytest.mark.parametrize("name", SAME_RUNS)
def test_each_source_gives_the_tensor_and_beta_of_the_one_csv(run, name):
    workdir, result = run
    assert result.returncode == 0, result.stderr[-3000:]
    results = workdir / "results"
    want_tensor = pd.read_parquet(results / "one_file" / "tensor.parquet")
    want_beta = pd.read_csv(results / "one_file" / "cbc" / "beta.csv")
    tensor = pd.read_parquet(results / name / "tensor.parquet")
    pd.testing.assert_frame_equal(tensor, want_tensor)
    assert np.array_equal(tensor["score"].to_numpy(), want_tensor["score"].to_numpy())
    beta = pd.read_csv(results / name / "cbc" / "beta.csv")
    pd.testing.assert_frame_equal(beta, want_beta, check_exact=True)
    if name == "template":
        manifest = json.loads((results / name / "inputs.json").read_text())
        assert len(manifest["files"]["runs"]) == 6 and all(
            len(f["sha256"]) == 64 for f in manifest["files"]["runs"])
