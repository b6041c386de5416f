"""Widgets several pages draw, shared by all pages.

Modules:

- ``wording``: Markdown escaping (``md``), notes, table heights, ``synced`` callbacks;
- ``controls``: the page picker and the chunking policy controls;
- ``cite_view``: page figures, text windows and the Source link of a citation;
- ``chunk_pick``: the chunks of a policy over a page, picked by a click;
- ``result_cards``: ranked-chunk cards and the inspected chunk on its page;
- ``full_depth``: any chunk's rank at full depth, and "mark as the answer";
- ``method_picker``: the methods and fusions the registry offers;
- ``query_upload``: an uploaded QA table as a query set;
- ``map_links``: the link that opens the Map page on a query and its gold.
"""
