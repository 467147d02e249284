"""What a reader looks at: the figures, the claims table and the results page.

Its modules and what they may import: docs/README.md#package-map.
"""
