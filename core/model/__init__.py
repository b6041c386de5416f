"""The model's files (``paths``: local folders only) and its tokenizer as the chunkers
see it (``tokens``).
"""
