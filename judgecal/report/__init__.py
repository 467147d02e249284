"""Stage 4: what a reader looks at: ``figures`` (one module per analysis) and ``claims`` (the
published values beside the reproduced ones). Imports ``data``, ``cbc`` and ``analyses``.
"""
