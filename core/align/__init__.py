"""Text alignment for evidence and imported chunks: where a passage lies in the canonical
text, exactly or word by word, with canonical offsets throughout.

Modules:

- ``words``: the words of a text with their canonical offsets (hyphenated line breaks
  joined);
- ``exact``: whole-word matches of a passage, spacing aside, in a whitespace-free view
  of a region;
- ``window``: the tightest run of a region's words that holds a passage's words.
"""
