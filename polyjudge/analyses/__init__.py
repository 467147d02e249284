"""The analyses of the CBC paper and the Judge-LS protocol, one module each.

Which module holds which analysis, and what they may import: docs/README.md#package-map.
"""
