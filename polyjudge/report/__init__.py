"""Stage 4: what a reader looks at: ``figures`` (one module per analysis), ``claims`` (the
published values beside the reproduced ones) and ``page`` (the self-contained results page,
``results/index.html``, and ``polyjudge compare``). Imports ``data``, ``cbc`` and ``analyses``.
"""
