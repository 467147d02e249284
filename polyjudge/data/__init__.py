"""Stage 1: reading and checking what users hand the workflow.

``io`` reads and validates run, requirement and verdict tables and builds the task-level
:class:`~polyjudge.data.panel.Panel`; ``streaming`` does the same for large run tables in bounded
memory; ``checksums`` verifies inputs against ``SHA256SUMS``; ``judgment_tree`` flattens the
Agent-as-a-Judge JSON layout; ``inspect_logs`` reads Inspect AI eval logs as a run or verdict
table (inspect-ai, an optional dependency, imported only there); ``config`` completes and checks
a workflow config; ``errors`` holds :class:`~polyjudge.data.errors.InputError`. Imports nothing
else from the package.
"""
from .errors import InputError
from .panel import Panel

__all__ = ["InputError", "Panel"]
