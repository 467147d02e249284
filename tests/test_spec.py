"""RunSpec: a run table's column names and validation settings, read once."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

import polyjudge
from polyjudge.data.errors import InputError
from polyjudge.data.spec import RUN_TABLE_PARAMETERS, RunSpec


def user_runs():
    """2 tasks x 2 languages x 2 backbones x 2 seeds in the user's own column names."""
    rows = [{"prompt_id": t, "lang": l, "judge": b, "seed": f,
             "pct": 10.0 * i + f} for i, (t, l, b) in enumerate(
                 (t, l, b) for t in ("t1", "t2") for l in ("en", "de") for b in ("m1", "m2"))
            for f in (0, 2)]
    return pd.DataFrame(rows)


SPEC = RunSpec(task="prompt_id", language="lang", backbone="judge", score="pct",
               framework="seed")


def test_prepare_renames_validates_and_averages_known_answers():
    checked, panel = SPEC.prepare(user_runs())
    assert set(checked.columns) >= {"task", "language", "backbone", "score", "framework"}
    assert len(checked) == 16
    assert list(panel.tasks) == ["t1", "t2"] and list(panel.backbones) == ["m1", "m2"]
    assert list(panel.languages) == ["de", "en"]  # natural sort
    # cell (t1, de, m1) is row 2 of the grid: scores 20 and 22, mean 21
    assert panel.values[0, 0, 0] == 21.0
    assert panel.values[1, 1, 1] == 51.0  # t2, en, m2 is row 5: scores 50 and 52
    assert (panel.n_runs == 2).all()


def test_axis_order_and_prepare_runs_agree():
    spec = dataclasses.replace(SPEC, languages=["en", "de"])
    _, panel = spec.prepare(user_runs())
    assert list(panel.languages) == ["en", "de"] and panel.values[0, 0, 0] == 1.0
    _, same = polyjudge.prepare_runs(user_runs(), **spec.settings)
    np.testing.assert_array_equal(panel.values, same.values)


def test_from_kwargs_keeps_only_its_fields():
    spec = RunSpec.from_kwargs(task="prompt_id", eps=0.1, runs=None, missing="omit")
    assert spec == RunSpec(task="prompt_id", missing="omit")
    assert spec.columns == {"task": "prompt_id", "language": "language",
                            "backbone": "backbone", "score": "score", "framework": "framework"}
    assert "source" not in spec.settings and spec.settings["missing"] == "omit"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.task = "other"


def test_a_missing_column_is_named_in_the_error():
    runs = user_runs().rename(columns={"judge": "model"})
    with pytest.raises(InputError) as error:
        dataclasses.replace(SPEC, source="my runs").prepare(runs)
    assert "my runs" in str(error.value) and "judge" in str(error.value)


def test_scores_out_of_range_are_refused():
    with pytest.raises(InputError, match="pct|score"):
        dataclasses.replace(SPEC, score_range=(0, 50)).prepare(user_runs())


def test_not_a_data_frame():
    with pytest.raises(TypeError, match="pandas DataFrame"):
        SPEC.prepare(user_runs().to_dict())


def test_the_shared_paragraph_is_in_every_run_table_docstring():
    for function in (polyjudge.prepare_runs, polyjudge.calibrate, polyjudge.heldout,
                     polyjudge.reversal, polyjudge.cmi_test, RunSpec):
        assert RUN_TABLE_PARAMETERS.splitlines()[0] in function.__doc__, function
        assert "{run_table}" not in function.__doc__
