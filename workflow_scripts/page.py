"""The results page results/index.html: one self-contained HTML file from the run's outputs; and
results/panels.json, the panels of this run's config (what `polyjudge compare` reads, so panel
folders left by another config are never shown)."""
import logging
from pathlib import Path

from polyjudge.report.page import build_page
from polyjudge.scripting import run_step, write_json

log = logging.getLogger("polyjudge.page")


def main(smk):
    output = Path(smk.output.page)
    path = build_page(output.parent, output, panels=smk.params.panels,
                      available=list(smk.input), config_sha256=smk.params.config_sha256)
    log.info("wrote %s (%.0f kB) for panels %s", path, path.stat().st_size / 1000,
             ", ".join(smk.params.panels))
    write_json({"panels": list(smk.params.panels), "config_sha256": smk.params.config_sha256},
               smk.output.panels)


run_step(main, snakemake)
