"""The box type and its geometry (core.provenance.geometry)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.ingest.pdf_lines import NAN_BOX
from core.provenance.geometry import Box, bounding, contains_centre, iou, overlaps, union_of

coords = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False)


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    x0, x1 = sorted((draw(coords), draw(coords)))
    y0, y1 = sorted((draw(coords), draw(coords)))
    return Box(x0, y0, x1, y1)


def test_a_box_is_a_frozen_tuple_written_as_the_same_list():
    box = Box(1.0, 2.0, 3.0, 5.0)
    assert box == (1.0, 2.0, 3.0, 5.0)
    assert json.dumps({"bbox_pt": box}) == json.dumps({"bbox_pt": [1.0, 2.0, 3.0, 5.0]})
    with pytest.raises(AttributeError):
        box.x0 = 0.0  # type: ignore[misc]
    assert (box.width, box.height, box.area, box.centre) == (2.0, 3.0, 6.0, (2.0, 3.5))


def test_union_skips_inserted_boxes():
    found = [NAN_BOX, (3.0, 2.0, 5.0, 9.0), (1.0, 4.0, 7.0, 6.0), NAN_BOX, (0.0, -0.0, 7.0, 9.0)]
    assert bounding(found) == (0.0, -0.0, 7.0, 9.0)
    assert union_of([NAN_BOX]) is None and union_of([]) is None
    with pytest.raises(ValueError):
        bounding([NAN_BOX])


@given(st.lists(boxes(), min_size=1, max_size=8))
def test_the_union_holds_every_box_and_is_the_smallest(found):
    union = bounding(found)
    assert all(union.union(b) == union for b in found)
    assert union.x0 == min(b.x0 for b in found) and union.y1 == max(b.y1 for b in found)
    assert all(union.contains_centre_of(b) for b in found)


TINY = Box(0.0, 0.0, 4.3e-229, 1.2e-268)  # overlapping, but its area is 0.0 as a float


@given(boxes(), boxes())
@example(TINY, TINY)
def test_iou_is_symmetric_and_bounded(a, b):
    assert iou(a, b) == pytest.approx(iou(b, a))
    assert 0.0 <= a.iou(b) <= 1.0 + 1e-9
    if a.area > 0:
        assert a.iou(a) == pytest.approx(1.0)
    if not overlaps(a, b):
        assert iou(a, b) == 0.0


def test_centre_containment_counts_the_edges():
    area = (0.0, 0.0, 10.0, 10.0)
    assert contains_centre(area, (8.0, 8.0, 12.0, 12.0))  # centre on the corner
    assert not contains_centre(area, (9.0, 9.0, 12.0, 12.0))
    assert Box.of([0, 0, 4, 4]).overlaps((3.0, 3.0, 5.0, 5.0))
    assert not Box(0, 0, 4, 4).overlaps((4.0, 0.0, 5.0, 4.0))  # touching edges
    assert math.isclose(iou((0, 0, 10, 10), (5, 0, 15, 10)), 1 / 3)
