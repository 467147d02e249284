"""The default configuration's outputs are byte-identical to the stored checksums.

The outputs are those of the README's reproduction command, run in a copy of the repository with
nothing beside it (the ``readme_reproduction`` fixture, shared with tests/test_standalone.py).
Regenerate them only when an output is meant to change, with the reason in the commit:
``python tests/checksums.py --update`` (see tests/checksums.py).
"""
import json

import pytest

from checksums import STORE, compare, output_checksums


@pytest.mark.slow
def test_default_outputs_match_the_stored_checksums(readme_reproduction):
    expected = json.loads(STORE.read_text())["files"]
    actual = output_checksums(readme_reproduction / "results")
    problems = compare(expected, actual)
    assert not problems, ("outputs differ from tests/output_checksums.json (if intended, run "
                          "`python tests/checksums.py --update` and say why in the commit):\n"
                          + "\n".join(problems[:40]))
