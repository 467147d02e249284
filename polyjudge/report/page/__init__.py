"""The results page: one self-contained HTML file per run (``results/index.html``).

:func:`build_page` reads a results folder (:mod:`.results_folder`, :mod:`.sections`), writes the
data as JSON inside the page, the charts as Vega-Lite specs (:mod:`.charts`) rendered by
vega-embed, and inlines the Vega JavaScript from the ``vl-convert-python`` package, the page's own
script and its styles (``assets/``), with a Jinja2 template (:mod:`.build`). The page opens from
disk and makes no network request. :func:`compare_pages` builds the same page for run B with the
differences from run A (:mod:`.diff`) listed and outlined; :mod:`.command` is
``polyjudge compare``. The names are imported on first use, so ``polyjudge fit`` does not pay
for them.
"""
from __future__ import annotations

__all__ = ["build_page", "compare_pages", "page_data"]


def __getattr__(name):
    if name in __all__:
        from . import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
