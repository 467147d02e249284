"""The CBC estimator (double-centering, CBC paper section 3), the task bootstrap and the band.

Its modules and what they may import: docs/README.md#package-map.
"""
