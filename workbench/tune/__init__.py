"""The Tune page's own parts.

- ``sweep_panel``: the sweep form, the background job, saved sweeps, cell links.
"""
