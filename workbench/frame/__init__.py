"""The frame every page runs in, shared by all pages.

Modules:

- ``sidebar``: state, stylesheet, the sidebar and its menu (``MENU``), drawn once per run;
  every page starts with ``sidebar.entry("pages/<name>.py")``;
- ``roles``: viewers read, editors write (the sign-in and ``require_editor``).
"""
