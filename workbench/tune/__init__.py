"""The Tune page's own parts.

Modules:

- ``sweep_panel``: the sweep form, the background job, saved sweeps, cell links.
"""
