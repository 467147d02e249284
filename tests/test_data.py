"""The repository's data/: manifest complete and correct, provenance per folder, typed tables, a
damaged file stops the reader and the workflow naming it, and the conversion is reproducible."""
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import DATA

from polyjudge.analyses import external
from polyjudge.data import checksums, io
from polyjudge.data.errors import InputError
from polyjudge.data.judgment_tree import flatten_judgment_tree

REPO = DATA.parent
# files under data/ that are not data (not in the manifest)
NOT_DATA = {"SHA256SUMS", "convert.py", ".gitattributes", "make_seventh_judge.py",
            "make_local_items.py", "make_mrewardbench_standin.py"}


def manifest():
    return checksums.read_manifest(DATA / "SHA256SUMS")


def data_files(root=DATA):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.name not in NOT_DATA and p.suffix != ".md"
                  and "__pycache__" not in p.parts)


def tamper(path: Path) -> None:
    """Flip one bit in the middle of the file."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


@pytest.fixture
def copy(tmp_path):
    """A private copy of data/ (the tests damage it)."""
    target = tmp_path / "data"
    shutil.copytree(DATA, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_manifest_lists_every_data_file_with_its_digest():
    listed = manifest()
    assert sorted(listed) == data_files()
    for name, digest in listed.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


def test_every_folder_has_provenance_and_the_data_stays_small():
    folders = [p for p in DATA.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert {p.name for p in folders} == {"devai_ml_aaaj", "devai_original", "mrewardbench_panel",
                                         "llmbar", "cbc_paper_artifacts", "examples"}
    for folder in folders:
        text = (folder / "PROVENANCE.md").read_text()
        assert "commit" in text.lower() and "licen" in text.lower(), folder
    assert sum((DATA / name).stat().st_size for name in manifest()) < 15e6


def test_default_config_and_claims_read_only_listed_files():
    """Every data file of the default panels and every published table of the claims is in the
    manifest, so all of them are checked when read."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert config["data_dir"] == "data"
    listed = manifest()
    paths = []
    for panel in config["panels"].values():
        paths += [panel[k] for k in ("runs", "requirements", "requirement_types", "anchor_sample",
                                     "verdicts") if panel.get(k)]
        paths += list((panel.get("files") or {}).values())
        if panel.get("root"):
            assert any(name.startswith(panel["root"] + "/") for name in listed), panel["root"]
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    paths += [c["select"]["compare"]["published"] for c in claims if "compare" in c["select"]]
    assert len(paths) > 10
    assert [p for p in paths if p not in listed] == []


def test_tables_keep_identifiers_as_text_and_numbers_as_numbers():
    runs = io.read_table(DATA / "devai_ml_aaaj/run_level_scores.parquet")
    assert runs.shape == (7920, 8) and runs["task"].iloc[0].startswith("01_")
    assert runs["judged_language"].isna().sum() == 990  # English: empty upstream
    requirements = io.read_table(DATA / "devai_ml_aaaj/requirement_judgments.parquet")
    assert requirements["requirement_id"].map(type).eq(str).all()
    assert requirements["satisfied"].dtype == "int64" and len(requirements) == 52560
    margins = io.read_table(DATA / "mrewardbench_panel/claude_sonnet_4_6.parquet")
    assert margins["item_numeric_id"].iloc[0] == "0"
    assert margins[["chosen_score", "rejected_score"]].isna().any(axis=1).sum() == 24
    items = io.read_table(DATA / "llmbar/items.parquet")
    assert list(items.columns) == ["subset", "item_index", "input", "output_1", "output_2",
                                   "label"]
    assert len(items) == 419 and set(items["label"]) == {1, 2}
    assert items.groupby("subset").size().to_dict() == {
        "Natural": 100, "Adversarial/Neighbor": 134, "Adversarial/GPTInst": 92,
        "Adversarial/GPTOut": 47, "Adversarial/Manual": 46}
    assert (items.groupby("subset")["item_index"].agg(lambda s: list(s) == list(range(len(s))))
            .all())


def test_a_damaged_file_stops_every_reader_naming_it(copy):
    table = copy / "devai_ml_aaaj/run_level_scores.parquet"
    assert len(io.read_table(table)) == 7920
    tamper(table)
    with pytest.raises(InputError, match=r"run_level_scores\.parquet.*SHA-256"):
        io.read_table(table)
    anchor = copy / "mrewardbench_panel/human_anchor_sample.csv"
    tamper(anchor)
    with pytest.raises(InputError, match="human_anchor_sample.csv"):
        external.load_anchor_sample(anchor)
    raw = sorted((copy / "devai_ml_aaaj/raw_samples").rglob("*.json"))
    tamper(raw[0])
    with pytest.raises(InputError, match=raw[0].name):
        flatten_judgment_tree(copy / "devai_ml_aaaj/raw_samples/benchmark_tests")


def test_files_no_manifest_lists_are_not_checked(copy, tmp_path):
    own = copy / "devai_ml_aaaj/my_runs.csv"  # beside listed files, but not listed
    own.write_text("task,language,backbone,score\nt,en,b,1\n")
    assert len(io.read_table(own)) == 1
    elsewhere = tmp_path / "mine.csv"
    shutil.copyfile(own, elsewhere)
    assert len(io.read_table(elsewhere)) == 1


@pytest.mark.slow
def test_a_damaged_file_stops_the_workflow_in_the_rule_that_reads_it(copy, tmp_path):
    tamper(copy / "devai_ml_aaaj/run_level_scores.parquet")
    config = {"data_dir": str(copy), "simulation": {"scenarios": {}},
              "panels": {"devai": {"kind": "judge_runs",
                                   "runs": "devai_ml_aaaj/run_level_scores.parquet",
                                   "score_range": [0, 100], "analyses": ["cbc"]}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                             "--cores", "1", "results/devai/tensor.parquet",
                             "--configfile", "config.yaml"],
                            cwd=tmp_path, capture_output=True, text=True)
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert "run_level_scores.parquet" in text and "SHA-256" in text
    assert not (tmp_path / "results/devai/tensor.parquet").exists()
    assert not (tmp_path / "results/devai/runs.parquet").exists()


@pytest.mark.skipif(not os.environ.get("POLYJUDGE_ORIGIN_DATA"),
                    reason="set POLYJUDGE_ORIGIN_DATA to the origin data folder")
def test_conversion_reproduces_data_byte_for_byte(tmp_path):
    spec = importlib.util.spec_from_file_location("convert", DATA / "convert.py")
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)
    written = convert.convert(Path(os.environ["POLYJUDGE_ORIGIN_DATA"]), tmp_path)
    assert written == sorted(manifest())
    for name in written + ["SHA256SUMS"]:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
