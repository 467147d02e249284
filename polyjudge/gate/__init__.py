"""``polyjudge check``: an exit code for CI. Conditions on a finished results folder or a run
table (a judge's agreement with the reference, a bias, a rank reversal between two languages,
a calibrated mean) checked one cell at a time, printed one line each and written as JUnit XML
(docs/ci.md).

``conditions`` (the YAML file and the flags, checked against a JSON schema), ``evidence`` (the
tables a results folder holds, or a run table computes), ``checks`` (the conditions held
against them: pure functions), ``junit`` (the XML), ``command`` (the subcommand)."""
from .checks import Check, evaluate
from .conditions import SCHEMAS, check_conditions, flag_condition, read_conditions
from .evidence import ResultsFolder, RunTable
from .junit import junit_xml

__all__ = ["Check", "ResultsFolder", "RunTable", "SCHEMAS", "check_conditions", "evaluate",
           "flag_condition", "junit_xml", "read_conditions"]
