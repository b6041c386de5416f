"""Diagnose: why a query failed.

- ``depth``: any chunk's exact rank under every method at full depth, in a scope of any
  size, with the scores a reader needs to judge the gap (rank 1, rank k, the chunk's own);
- ``signals``: the evidence for each possible cause of a failure (parse, label, method,
  boundary, vocabulary, context), each signal with its strength, and the cause their
  weight suggests, with a confidence and a close runner-up;
- ``run_failures``: every failure of a saved run diagnosed (and the suggestions stored);
- ``casebook``: documents and queries whose cause is known by construction, and the
  agreement of the suggestions with it.
"""
