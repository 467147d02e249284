"""Coverage of the union radius and the bootstrap band across the simulation scenarios."""
from polyjudge.data.io import read_table
from polyjudge.report import figures
from polyjudge.scripting import run_step


def main(smk):
    fig = figures.simulation_coverage(read_table(smk.input.summary), smk.params.level)
    figures.save_figure(fig, smk.output.png, smk.output.svg)


run_step(main, snakemake)
