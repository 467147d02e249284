"""The default configuration's outputs are byte-identical to the stored checksums.

Regenerate them only when an output is meant to change, with the reason in the commit:
``python tests/checksums.py --update`` (see tests/checksums.py).
"""
import json

import pytest

from checksums import STORE, compare, default_data_dir, output_checksums, run_default


@pytest.mark.slow
@pytest.mark.skipif(not default_data_dir().is_dir(), reason="the default data is not present")
def test_default_outputs_match_the_stored_checksums(tmp_path):
    expected = json.loads(STORE.read_text())["files"]
    actual = output_checksums(run_default(tmp_path, default_data_dir()), default_data_dir())
    problems = compare(expected, actual)
    assert not problems, ("outputs differ from tests/output_checksums.json (if intended, run "
                          "`python tests/checksums.py --update` and say why in the commit):\n"
                          + "\n".join(problems[:40]))
