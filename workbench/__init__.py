"""The workbench's glue, by page: what each page draws and what the pages share.

A page (``pages/<name>.py``) imports only its own package and the shared ones; a page's
package is imported by its page alone (``tests/test_workbench_packages.py``).

Modules:

- ``state``: every session-state key, declared once;
- ``frame``: shared: the sidebar, its menu and the roles (viewers read, editors write);
- ``documents``: shared: the session's documents, how they are read, parse and chunk
  caches, the chunk store and imported chunk sets;
- ``widgets``: shared: widgets several pages draw (policy controls, citation views,
  ranked cards, full-depth ranks, method pickers);
- ``engine``: shared: cached resources, indexing and jobs, query sets and saved runs;
- ``library``: the Library page's own parts;
- ``source``: the Source page's own parts;
- ``compare``: the Compare page's own parts;
- ``map``: the Map page's own parts;
- ``evaluate``: the Evaluate & triage page's own parts;
- ``tune``: the Tune page's own parts.
"""
