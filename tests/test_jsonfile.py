"""Strict JSON (polyjudge.data.jsonfile): the one encoder of every JSON file the package writes.
Known answers: a number that is not finite is null with its reason under ``undefined``; numpy
types are plain; finite data are written byte for byte as ``json.dumps`` writes them."""
import json
import math

import numpy as np
import pytest

from polyjudge.data.jsonfile import dumps, json_ready, strict_loads, write_json
from polyjudge.scripting import write_json as script_write_json


def test_finite_data_are_written_as_json_writes_them():
    data = {"a": 1.5, "b": [1, 2, {"c": "text", "d": None}], "e": True, "f": "é"}
    assert dumps(data, indent=2) == json.dumps(data, indent=2)
    assert dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == \
        json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_not_finite_numbers_are_null_with_their_reason():
    data = {"critical_value": float("nan"), "rows": [{"width": np.inf}, {"width": 0.5}],
            "low": -math.inf}
    text = dumps(data, reasons={"critical_value": "fewer than two backbones",
                                "rows[0].width": "no interval yet"})
    parsed = strict_loads(text)
    assert parsed["critical_value"] is None and parsed["rows"][0]["width"] is None
    assert parsed["rows"][1]["width"] == 0.5 and parsed["low"] is None
    assert parsed["undefined"] == {"critical_value": "fewer than two backbones",
                                   "rows[0].width": "no interval yet",
                                   "low": "not finite (-inf)"}


def test_a_reason_by_key_serves_every_path_ending_in_it():
    plain, undefined = json_ready({"table": [{"f": np.nan}, {"f": 2.0}, {"f": np.nan}]},
                                  {"f": "not tested"})
    assert plain == {"table": [{"f": None}, {"f": 2.0}, {"f": None}]}
    assert undefined == {"table[0].f": "not tested", "table[2].f": "not tested"}


def test_numpy_scalars_and_arrays_are_plain():
    plain, undefined = json_ready({"n": np.int64(3), "x": np.float32(0.25), "ok": np.bool_(True),
                                   "v": np.array([1.0, np.nan])})
    assert plain == {"n": 3, "x": 0.25, "ok": True, "v": [1.0, None]}
    assert type(plain["n"]) is int and undefined == {"v[1]": "not a number (NaN)"}


def test_the_strict_reader_refuses_what_browsers_refuse():
    for text in ('{"a": NaN}', '[Infinity]', '{"b": -Infinity}'):
        with pytest.raises(ValueError, match="is not JSON"):
            strict_loads(text)
    with pytest.raises(TypeError):
        dumps({"a": object()})


def test_the_rule_scripts_write_json_through_it(tmp_path):
    script_write_json({"x": float("inf"), "k": [np.int64(1)]}, tmp_path / "a.json",
                      reasons={"x": "no interval yet"})
    write_json({"x": None, "k": [1]}, tmp_path / "b.json")
    a = strict_loads((tmp_path / "a.json").read_text())
    assert a == {"x": None, "k": [1], "undefined": {"x": "no interval yet"}}
    assert (tmp_path / "b.json").read_text() == json.dumps({"x": None, "k": [1]}, indent=2) + "\n"
