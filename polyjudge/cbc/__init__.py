"""Stage 2: the CBC estimator (double-centering, CBC paper section 3) and the task bootstrap.

``estimator``: ``double_center``, CBC-Weighted, the radius, rankings; ``bootstrap``: task
resampling, weighted cell means and Kendall tau, vectorised over replicates. Imports ``data``.
"""
