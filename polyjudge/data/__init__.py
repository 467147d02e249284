"""Reading and checking what users hand the workflow.

Its modules and what they may import: docs/README.md#package-map.
"""
from .errors import InputError
from .panel import Panel

__all__ = ["InputError", "Panel"]
