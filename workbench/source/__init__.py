"""The Source page's own parts.

Modules:

- ``source_views``: which document a link opens, the cited page, the text around it.
"""
