"""Diagnose: why a query failed: the repair that makes the failure succeed, measured (an
experiment per repair), else the evidence a reader can check, else ``unclear``.

Modules:

- ``depth``: any chunk's exact rank under every method at full depth, in a scope of any
  size, with the scores a reader needs to judge the gap;
- ``run_depth``: the same for one query of a saved evaluation run, its corpus rebuilt;
- ``repairs``: the repairs of one failure as experiments (boundary, context, parse: a
  repaired text scored as the failing method scores a chunk and ranked against the run's
  scores; method: the other methods' ranks);
- ``cause``: the suggested cause from the experiments and the evidence, with its
  confidence;
- ``signals``: the evidence shown for each possible cause (parse, label, method,
  boundary, vocabulary, context) with its strength and spans, and the diagnosis itself;
- ``track_record``: how often each suggested cause was a careful reader's cause on
  failures no rule was written on (the blind sets), shown beside a suggestion;
- ``restated``: the gold said again in other words: the top hit's sentence closest in
  meaning to a sentence of the gold (label evidence);
- ``terms``: the words of a query, a chunk and a document as the signals read them, and
  the query's key terms as a reader looks them up (phrases, a metric to compute);
- ``attribution``: what moved a vector: the sentences or prefix words that raised a
  chunk's cosine to the query;
- ``run_failures``: every failure of a saved run diagnosed, its repairs run (their texts
  embedded in batches) and the suggestions stored with their experiments;
- ``import_job``: our methods added to an imported run once the retriever's run is kept
  (computed, every failure diagnosed again, the same run kept grown; stopped, it says
  which were never added), in the calling thread or in the background;
- ``casebook``: documents and queries whose cause is known by construction, and the
  agreement of the suggestions with it.
"""
