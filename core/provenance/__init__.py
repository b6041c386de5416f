"""Provenance: the records every stage shares, and how they are checked and read back.

Modules:

- ``types``: the provenance records (``Document``, ``Block``, ``Chunk``, ...), every
  span half-open into the canonical text;
- ``geometry``: axis-aligned boxes in PDF points (``Box``);
- ``cite``: citations: a quoted span of one document version, rendered and verified;
- ``cues``: a transcript's timed cues, and the time range a span covers;
- ``serial``: typed reading of records decoded from JSON, store metadata or rows.
"""
