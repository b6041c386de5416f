"""The model: its files and its tokenizer as the chunkers see it.

Modules:

- ``paths``: where the encoder's files come from (local folders only);
- ``tokens``: tokenizers as the chunkers see them: token spans and token counts.
"""
