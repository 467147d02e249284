"""YAML in, with libyaml's parser where PyYAML has it.

The workflow reads its schema, its defaults and the claims file at every start (and SLURM jobs
start it once each): libyaml parses them about ten times faster than PyYAML's pure-Python parser,
which is used where libyaml is missing. Both build the same objects (the same safe constructor
and resolver).
"""
import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text):
    """The object a YAML document (str, bytes or an open file) describes, as yaml.safe_load."""
    return yaml.load(text, Loader=LOADER)


def read_yaml(path):
    """The object the YAML file at ``path`` describes, as yaml.safe_load."""
    with open(path, "rb") as handle:
        return parse_yaml(handle)
