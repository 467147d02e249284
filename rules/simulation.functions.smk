# Input functions and settings of simulation.smk (Snakemake's linter keeps functions out of
# files with rules); simulation.smk includes this file first.
import zlib


def simulation_settings(scenario):
    """A scenario's panel settings and size: the study's base settings, overridden.

    Its seed is (study seed, CRC-32 of the scenario's name), so adding or reordering scenarios
    leaves the others' draws unchanged.
    """
    study = config["simulation"]
    settings = {**study["base"], **study["scenarios"][scenario]}
    settings["seed"] = [study["seed"], zlib.crc32(scenario.encode())]
    return settings


def simulation_targets():
    return (
        ["results/simulation/summary.csv", "results/simulation/rank_coverage.csv"]
        if config["simulation"]["scenarios"]
        else []
    )
