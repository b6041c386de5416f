"""The engine that runs work for the pages: cached resources, jobs and saved runs.

Modules:

- ``resources``: the encoder, vector cache, comparisons, indexing and its job panel;
- ``jobs``: the panel of a background job (progress, stop, summary);
- ``compare_model``: Compare's view model, without Streamlit;
- ``run_files``: labelled query sets and the runs saved beside the index.
"""
