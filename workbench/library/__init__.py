"""The Library page's own parts.

Modules:

- ``uploads``: uploaded files read into the library, one line of outcome each.
"""
