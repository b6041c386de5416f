"""Diagnose: why a query failed.

- ``depth``: any chunk's exact rank under every method at full depth, in a scope of any
  size, with the scores a reader needs to judge the gap (rank 1, rank k, the chunk's own);
- ``signals``: the evidence for each possible cause of a failure (boundary, context,
  vocabulary, parse, label), and the cause a rule over it suggests.
"""
