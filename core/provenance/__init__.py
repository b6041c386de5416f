"""Provenance: the records every stage shares (``types``), boxes in PDF points
(``geometry``), citations and their verification (``cite``), transcript cues (``cues``)
and typed reading of decoded records (``serial``).
"""
