"""Colour-blind-safe colours shared by the figures and the results page (no matplotlib here)."""

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
             "#F0E442")
"""Okabe-Ito colours, most distinct first (yellow last: weak on white)."""
