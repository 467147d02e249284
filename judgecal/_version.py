"""The package version, in one place (``judgecal.__version__``, written into calibrator files)."""

__version__ = "0.1.0"
