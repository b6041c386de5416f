"""The Library page's own parts.

- ``uploads``: uploaded files read into the library, one line of outcome each.
"""
