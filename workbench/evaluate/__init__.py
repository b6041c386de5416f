"""The Evaluate & triage page's own parts.

Modules:

- ``eval_form``: the "Run an evaluation" form, the metric and delta tables;
- ``run_import``: "Import a run": a retriever's log scored over an imported chunk set;
- ``triage``: the failure reader's state, tags, exports and query card;
- ``why``: the "why it failed" panel and the failure's ranks at full depth.
"""
