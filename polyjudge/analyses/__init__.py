"""Stage 3: the analyses of the CBC paper and the Judge-LS protocol, one module each.

``heldout`` and ``baselines`` (Table 2, decisions), ``reversal`` (rank reversal tests),
``information`` (conditional mutual information), ``ablations`` (task count, backbone subsets,
requirement type, LOLO), ``external`` (M-RewardBench, BTL, human anchor), ``missing``
(incomplete panels), ``diagnostics`` (bands, three-way ANOVA), ``synthetic`` and ``simulation``
(planted-truth panels and the simulation study), ``judge_ls`` (the Judge-LS metrics),
``leaderboard`` (per-language mean and rank intervals).
Imports ``data`` and ``cbc``.
"""
