"""The package version, in one place (``polyjudge.__version__``, written into calibrator files)."""

__version__ = "0.2.0"
