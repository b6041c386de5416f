"""Diagnose: why a query failed, each possible cause weighed by its evidence, and the
suggested one given with its confidence (or ``unclear``).

Modules:

- ``depth``: any chunk's exact rank under every method at full depth, in a scope of any
  size, with the scores a reader needs to judge the gap;
- ``run_depth``: the same for one query of a saved evaluation run, its corpus rebuilt;
- ``signals``: the evidence for each possible cause (parse, label, method, boundary,
  vocabulary, context) with its strength, and the cause their weight suggests;
- ``terms``: the words of a query, a chunk and a document as the signals read them;
- ``attribution``: what moved a vector: the sentences or prefix words that raised a
  chunk's cosine to the query;
- ``run_failures``: every failure of a saved run diagnosed (and the suggestions stored);
- ``casebook``: documents and queries whose cause is known by construction, and the
  agreement of the suggestions with it.
"""
