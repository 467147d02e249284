"""Building the results page: the page data, the Jinja2 template, the inlined scripts."""
from __future__ import annotations

import functools
import os
from pathlib import Path

import jinja2
import pandas as pd

from ... import __version__
from ...data import jsonfile
from .charts import CONFIG, heatmap
from .results_folder import Results, rows
from .diff import run_diff
from .sections import claims_table, panel_data, provenance

ASSETS = Path(__file__).with_name("assets")


SNIPPET = "window.vegaEmbed = vegaEmbed;"


@functools.lru_cache(maxsize=1)
def vega_javascript() -> str:
    """vega, vega-lite and vega-embed as one classic script (``window.vegaEmbed``).

    Bundling takes vl-convert a few CPU seconds and gives the same text for the same package
    version, so the bundle is kept in the user's cache (``$XDG_CACHE_HOME/polyjudge``, else
    ``~/.cache/polyjudge``), named by that version; an unwritable cache only costs the time.
    """
    import vl_convert

    home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    cached = Path(home) / "polyjudge" / f"vega-embed-vl-convert-{vl_convert.__version__}.js"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    bundle = vl_convert.javascript_bundle(SNIPPET)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        _write(bundle, cached)
    except OSError:
        pass
    return bundle


def page_data(results, panels=None, available=None, config_sha256=None) -> dict:
    """Everything the page shows, read from the results folder ``results``."""
    res = Results(results, available)
    names = list(panels) if panels is not None else res.panels()
    panel_list = [panel_data(res, name) for name in names]
    panel_list = [p for p in panel_list if p["sections"]]
    return {"panels": panel_list, "claims": claims_table(res),
            "provenance": provenance(res, names, __version__, config_sha256),
            "chart_config": CONFIG, "diff": None}


def _script_json(data) -> str:
    """JSON safe inside a <script> element: no ``<``, ``>`` or ``&`` characters at all."""
    text = jsonfile.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: dict, title: str) -> str:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(ASSETS), autoescape=True,
                                     keep_trailing_newline=True)
    page = environment.get_template("page.html.j2")
    safe = jinja2.utils.markupsafe.Markup
    return page.render(title=title, version=__version__,
                       css=safe((ASSETS / "page.css").read_text(encoding="utf-8")),
                       data_json=safe(_script_json(data)),
                       vega_js=safe(vega_javascript()),
                       page_js=safe((ASSETS / "page.js").read_text(encoding="utf-8")))


def _write(text: str, output) -> Path:
    output = Path(output)
    temporary = output.with_name(f"{output.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(output)
    return output


def build_page(results, output, panels=None, available=None, config_sha256=None,
               title="polyjudge results") -> Path:
    """Write the results page of the results folder ``results`` to ``output``.

    ``panels``: the panel folders to show (default: every folder with a panel's outputs);
    ``available``: if given, the only files to read (the workflow rule's inputs, so files left
    by an earlier configuration are not shown); ``config_sha256``: the run's configuration digest.
    """
    return _write(render(page_data(results, panels, available, config_sha256), title), output)


def _listed(panels: list[str]) -> str:
    return ("panel " if len(panels) == 1 else "panels ") + ", ".join(panels)


def compare_pages(run_a, run_b, output, title=None) -> tuple[Path, dict]:
    """Write run B's page with its differences from run A; returns the path and the counts.

    Raises ValueError, naming both folders and their panels, when they share no panel."""
    a, b = Results(run_a), Results(run_b)
    names = b.panels()
    common = [n for n in names if n in a.panels()]
    if not common:  # nothing to compare: a diff of no panels would read as "no change"
        raise ValueError(
            f"{run_a} and {run_b} have no panel in common, so there is nothing to compare: "
            f"{run_a} has {_listed(a.panels())}, {run_b} has {_listed(names)} (compare two "
            "runs of the same config, or of configs that share a panel name)")
    data = page_data(run_b, names)
    diff = run_diff(a, b, common, (run_a, run_b))
    for panel in data["panels"]:
        cells = diff["changed_cells"].get(panel["name"])
        for section in panel["sections"]:
            if section["id"] == "beta" and cells:
                chart = section["charts"][0]
                frame = pd.DataFrame(rows(section["tables"][0]))
                section["charts"][0] = heatmap(chart["id"], frame, cells)
    data["diff"] = {k: v for k, v in diff.items() if k != "changed_cells"}
    only = sorted(set(a.panels()) ^ set(names))
    if only:
        data["diff"]["tolerance"] += " Panels in only one run: " + ", ".join(only) + "."
    title = title or f"polyjudge: {run_b} compared with {run_a}"
    return _write(render(data, title), output), diff["counts"]
