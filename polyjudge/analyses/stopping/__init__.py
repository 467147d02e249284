"""Stopping a collection at a precision: confidence sequences valid at any stopping time for
the beta cells and backbone pairs of a panel collected item by item (docs/methods.md, 10.7).

``stopping_status`` decides after a round of items; ``replay`` replays a collection over seeded
item orders of a complete panel; ``forecast`` predicts the items and calls a target needs from
a pilot or an earlier panel; ``round_ends`` gives the item counts after which rounds decide;
``StopTarget`` is a checked target (``check_target`` builds one from a dict).
"""
from .replay import forecast, replay, round_ends
from .sequences import asymptotic_cs, betting_cs, fixed_n_interval, mixture_boundary, mixture_rho
from .targets import (StopStatus, StopTarget, check_target, collection_target, contrast_plan,
                      stopping_status)

__all__ = ["StopStatus", "StopTarget", "asymptotic_cs", "betting_cs", "check_target",
           "collection_target", "contrast_plan", "fixed_n_interval", "forecast",
           "mixture_boundary", "mixture_rho", "replay", "round_ends", "stopping_status"]
