"""A new user's first hour (issue 28): each mistake a new user makes gets a message naming what
is at fault and a fix that works, at every place a table enters (API, Calibrator, CLI,
read_runs, workflow)."""
import json
from pathlib import Path
import zipfile

import numpy as np
import pandas as pd
import pytest

import judgecal
from judgecal import cli
from judgecal.analyses.synthetic import simulate_panel
from judgecal.data import io
from judgecal.data.errors import InputError

KEYS = ["task", "language", "backbone", "framework"]
REPO = Path(__file__).resolve().parents[1]
USER = {"task": "id", "language": "lang", "backbone": "judge", "score": "rating",
        "framework": "seed"}


def error_of(function, *args, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def categorical_runs(seed=3, n_tasks=8, n_languages=4, n_backbones=3) -> pd.DataFrame:
    """Runs as pd.read_parquet often gives them: identifiers categorical, user column names."""
    runs = simulate_panel(seed=seed, n_tasks=n_tasks, n_languages=n_languages,
                          n_backbones=n_backbones, n_frameworks=2).runs
    return runs.astype({key: "category" for key in KEYS}).rename(columns=USER)


def filtered(runs: pd.DataFrame) -> pd.DataFrame:
    """3 of the 4 languages and 2 of the 3 judges kept: the dropped ones stay as categories."""
    kept = runs[(runs["lang"] != "L4") & (runs["judge"] != "B3")]
    assert "L4" in kept["lang"].cat.categories and "B3" in kept["judge"].cat.categories
    return kept


# --- item 1: labels come from the rows present, never from unused categories -------------------

def test_filtered_categoricals_calibrate_as_the_same_rows_as_text():
    kept = filtered(categorical_runs())
    as_text = kept.astype({USER[key]: str for key in KEYS})
    got, want = judgecal.calibrate(kept, **USER), judgecal.calibrate(as_text, **USER)
    assert got.panel.languages == ("L1", "L2", "L3") and got.panel.backbones == ("B1", "B2")
    pd.testing.assert_frame_equal(got.beta, want.beta)
    fitted = judgecal.Calibrator(**USER).fit(kept)
    assert fitted.languages_ == ["L1", "L2", "L3"] and fitted.backbones_ == ["B1", "B2"]
    np.testing.assert_array_equal(fitted.beta_["beta"], want.beta["beta"])
    out = fitted.transform(kept)
    assert len(out) == len(kept) and out["calibrated"].all()


def test_filtered_categoricals_through_read_runs_and_the_cli(tmp_path):
    kept = filtered(categorical_runs())
    path = tmp_path / "filtered.parquet"
    kept.to_parquet(path)  # the unused categories are written into the Parquet dictionary
    assert "L4" in pd.read_parquet(path)["lang"].cat.categories
    runs = judgecal.read_runs(path, columns=USER)
    assert sorted(runs["language"].cat.categories) == ["L1", "L2", "L3"]
    assert sorted(runs["backbone"].cat.categories) == ["B1", "B2"]
    assert judgecal.calibrate(runs).panel.shape == (8, 3, 2)
    flags = [f"--{key}={user}" for key, user in USER.items()]
    assert cli.main(["fit", str(path), "-o", str(tmp_path / "c.json"), *flags]) == 0
    saved = json.loads((tmp_path / "c.json").read_text())
    assert "L4" not in json.dumps(saved) and "B3" not in json.dumps(saved)


def test_a_label_whose_scores_are_all_missing_is_still_named():
    runs = categorical_runs()
    runs.loc[runs["lang"] == "L4", "rating"] = np.nan
    message = error_of(judgecal.calibrate, runs, **USER, missing="omit")
    assert "language(s) ['L4'] have runs but every score is missing" in message


# --- item 2: one language or one backbone -------------------------------------------------------

@pytest.mark.parametrize("axis", ["lang", "judge"])
def test_one_language_or_one_backbone_says_what_cbc_needs(axis):
    runs = categorical_runs()
    runs = runs[runs[axis] == runs[axis].iloc[0]]
    for fit in (lambda r: judgecal.calibrate(r, **USER),
                lambda r: judgecal.Calibrator(**USER).fit(r),
                lambda r: judgecal.heldout(r, **USER, replicates=10),
                lambda r: judgecal.reversal(r, **USER, permutations=9)):
        message = error_of(fit, runs)
        one = "1 language (L1)" if axis == "lang" else "1 backbone (B1)"
        assert one in message and "needs at least 2 languages and at least 2 backbones" in message
        assert "What still runs on this panel" in message
    # the fix offered works: the task-level panel and its raw means
    checked, panel = judgecal.prepare_runs(runs, **USER)
    assert np.isfinite(panel.cell_means()).all()


# --- item 13: checks that come late -------------------------------------------------------------

def test_a_reversed_score_range_stops_before_any_score_is_checked(tmp_path):
    runs = categorical_runs()
    message = error_of(judgecal.calibrate, runs, **USER, score_range=(10, 1))
    assert "score_range [10, 1] has low >= high" in message and "[1, 10]" in message
    assert "outside" not in message
    path = tmp_path / "runs.csv"
    runs.to_csv(path, index=False)
    message = error_of(judgecal.read_runs, path, columns=USER, score_range=[10, 1])
    assert "score_range [10, 1] has low >= high" in message
    assert len(judgecal.read_runs(path, columns=USER, score_range=[0, 100])) == len(runs)


def test_a_missing_source_names_the_path_it_looked_for(tmp_path):
    from judgecal.data.sources import source_inputs
    message = error_of(source_inputs, "nodir", tmp_path / "data")
    assert f"looked for {tmp_path / 'data' / 'nodir'}" in message
    assert f"read under data_dir, here {tmp_path / 'data'}" in message


# --- item 7: Excel workbooks ---------------------------------------------------------------------

def workbook(path):
    """The zip layout of an .xlsx (its workbook under xl/), enough to be recognised."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return path


@pytest.mark.parametrize("name", ["all.xlsx", "all.csv"])
def test_an_excel_workbook_is_named_and_the_export_explained(tmp_path, name):
    path = workbook(tmp_path / name)
    for read in (lambda: judgecal.read_runs(path), lambda: io.read_table(path),
                 lambda: judgecal.read_runs([str(path)])):
        message = error_of(read)
        assert f"{path}: is a spreadsheet workbook" in message and "UTF-8" not in message.split(
            "expected")[0]
        assert "export the sheet as CSV" in message and "CSV UTF-8" in message
    code = cli.main(["fit", str(path), "-o", str(tmp_path / "c.json")])
    assert code == cli.EXIT_INPUT and not (tmp_path / "c.json").exists()


def test_a_folder_of_workbooks_says_they_are_not_read(tmp_path):
    (tmp_path / "runs").mkdir()
    workbook(tmp_path / "runs" / "a.xlsx")
    message = error_of(judgecal.read_runs, tmp_path / "runs")
    assert "spreadsheet workbooks, which are not read: export them as CSV" in message


# --- item 3: a typo at any depth of the config is named with the key meant ---------------------

def schema_keys(schema, root, path=(), fixed=()):
    """(path, fixed, key) for every key the schema declares, at every depth: ``path`` leads to
    the object holding ``key`` ("x" for an entry of a collection such as `panels`), ``fixed``
    lists the (path, key, value) the object needs for ``key`` to be valid (a panel's kind)."""
    while isinstance(schema, dict) and set(schema) == {"$ref"}:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        yield from schema_keys({"$ref": schema["$ref"]}, root, path, fixed)
    names = schema.get("propertyNames", {}).get("enum")
    for name in names or ():
        yield path, fixed, name
    for key, rule in schema.get("properties", {}).items():
        yield path, fixed, key
        yield from schema_keys(rule, root, path + (key,), fixed)
    if isinstance(schema.get("additionalProperties"), dict) and not names:
        yield from schema_keys(schema["additionalProperties"], root, path + ("x",), fixed)
    for branch in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        yield from schema_keys(branch, root, path, fixed)
    if "if" in schema:
        const = {key: rule["const"] for key, rule in schema["if"].get("properties", {}).items()
                 if "const" in rule}
        yield from schema_keys(schema.get("then", {}), root, path,
                               fixed + tuple((path, key, value) for key, value in const.items()))


def misspelt(key: str) -> str:
    """Two neighbouring letters swapped near the middle (task -> taks); a doubled last letter
    for a key without two different neighbours."""
    for i in range(max(len(key) // 2 - 1, 0), len(key) - 1):
        if key[i] != key[i + 1]:
            return key[:i] + key[i + 1] + key[i] + key[i + 2:]
    return key + key[-1]


def config_with(path, fixed, key) -> dict:
    config = {}

    def node(at):
        here = config
        for part in at:
            here = here.setdefault(part, {})
        return here
    for at, name, value in fixed:
        node(at)[name] = value
    node(path)[key] = 1
    return config


def test_every_schema_key_misspelt_is_named_with_the_key_meant():
    import yaml
    from judgecal.data.config import check_keys
    schema = yaml.safe_load(open(REPO / "config/schema/config.schema.yaml"))
    cases = sorted(set(schema_keys(schema, schema)), key=str)
    assert len(cases) > 300 and any(key == "task" and path[-1] == "columns"
                                    for path, _, key in cases)
    wrong = []
    for path, fixed, key in cases:
        typo = misspelt(key)
        where = ".".join(map(str, path + (typo,)))
        with pytest.raises(ValueError) as caught:
            check_keys(config_with(path, fixed, typo), schema)
        lines = str(caught.value).splitlines()
        if not (len(lines) == 3 and
                f"unknown key '{typo}' at {where}: did you mean '{key}'?" in lines[1]):
            wrong.append((where, lines))
    assert not wrong, wrong[:5]
