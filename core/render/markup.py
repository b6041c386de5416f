"""HTML for page overlays and marked-up text. Every document string is escaped.

``page_html`` draws a rendered page image with boxes over it (given in PDF points, origin
top-left, placed in percent of the page so they follow any display width); a ``view_pt``
box crops (zooms) the view. ``marked_text_html`` shows a slice of the canonical
text with marked runs. Text from documents (titles, tooltips, quotes) goes through
``html.escape`` here and nowhere else; the result contains no script and no event handler.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.provenance.types import BBox

_SAFE_TOKEN = re.compile(r"^[A-Za-z0-9_-]*$")


def escape(text: str) -> str:
    """Escape ``& < > " '`` so document text is shown, never interpreted."""
    return html.escape(text, quote=True)


def _token(value: str, what: str) -> str:
    """CSS classes, ids and data-attribute names are ours, never document text."""
    if not _SAFE_TOKEN.match(value):
        raise ValueError(f"unsafe {what}: {value!r}")
    return value


def _classes(value: str) -> str:
    return " ".join(_token(part, "class") for part in value.split())


def _data_attrs(data: Sequence[tuple[str, str]]) -> str:
    return "".join(f' data-{_token(k, "data name")}="{escape(v)}"' for k, v in data)


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """A rectangle over a page, in points. ``title`` is the plain-text hover tooltip
    (line breaks kept)."""

    bbox_pt: BBox
    fill: str
    stroke: str | None = None
    fill_opacity: float = 0.22
    stroke_width_pt: float = 0.8
    title: str = ""
    css_class: str = ""
    data: tuple[tuple[str, str], ...] = ()
    hatched: bool = False
    label: str = ""
    label_size_pt: float = 0.0  # > 0: the label fills the box at this size (points of the page)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mark:
    """A marked run ``[char_start, char_end)`` of the canonical text."""

    char_start: int
    char_end: int
    css_class: str
    colour: str = ""
    title: str = ""
    data: tuple[tuple[str, str], ...] = ()


def _colour(value: str) -> str:
    if not re.match(r"^#[0-9A-Fa-f]{3,8}$", value):
        raise ValueError(f"colours are hex codes, got {value!r}")
    return value


def _rgba(colour: str, alpha: float) -> str:
    """``#rrggbb`` (or ``#rgb``) and an opacity as a CSS ``rgba()``."""
    digits = _colour(colour).lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    r, g, b = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha:.2f})"


def _percent(value: float, whole: float) -> str:
    return f"{100.0 * value / whole:.3f}%"


def _shape_html(shape: Shape, width_pt: float, height_pt: float) -> str:
    x0, y0, x1, y1 = shape.bbox_pt
    if shape.hatched:
        fill = (
            f"repeating-linear-gradient(45deg,{_rgba(shape.fill, 0.55)} 0 2px,"
            f"{_rgba(shape.fill, 0.15)} 2px 5px)"
        )
    else:
        fill = _rgba(shape.fill, shape.fill_opacity)
    border = f"border:1px solid {_rgba(shape.stroke, 0.9)};" if shape.stroke else ""
    style = (
        f"left:{_percent(x0, width_pt)};top:{_percent(y0, height_pt)};"
        f"width:{_percent(max(x1 - x0, 0.5), width_pt)};"
        f"height:{_percent(max(y1 - y0, 0.5), height_pt)};background:{fill};{border}"
    )
    # The tooltip is a child element, not a title attribute: sanitisers drop attributes
    # whose value looks like markup (``</script>``), and document text may look like that.
    tip = ""
    if shape.title:
        side = " cs-tip-left" if x0 > width_pt / 2 else ""
        side += " cs-tip-up" if y1 > height_pt * 0.7 else ""
        tip = f'<span class="cs-tip{side}">{escape(shape.title)}</span>'
    label = ""
    if shape.label:
        colour = _colour(shape.stroke or shape.fill)
        fit = ""
        if shape.label_size_pt > 0:  # in the box, sized with the page (container units)
            size = 100.0 * shape.label_size_pt / width_pt
            fit = f";font-size:{size:.3f}cqw"
        cls = "cs-label cs-label-fit" if fit else "cs-label"
        label = f'<span class="{cls}" style="color:{colour}{fit}">{escape(shape.label)}</span>'
    return (
        f'<div class="cs-box {_classes(shape.css_class)}" style="{style}"'
        f"{_data_attrs(shape.data)}>{label}{tip}</div>"
    )


def page_html(
    png: bytes,
    *,
    width_pt: float,
    height_pt: float,
    shapes: Sequence[Shape],
    view_pt: BBox | None = None,
    alt: str = "",
) -> str:
    """The page image with ``shapes`` over it, scaled to its container's width.

    Shapes are absolutely positioned in percent of the page, so the overlay stays on its
    glyphs at any width. ``view_pt`` crops to that box (points) by clipping a shifted,
    enlarged page; ``alt`` is an accessible description (escaped). Plain HTML and CSS
    only (no SVG, no script), which survives any HTML sanitiser.
    """
    vx0, vy0, vx1, vy1 = view_pt or (0.0, 0.0, width_pt, height_pt)
    view_w, view_h = vx1 - vx0, vy1 - vy0
    image = base64.b64encode(png).decode("ascii")
    inner = (
        f"left:{_percent(-vx0, view_w)};top:{_percent(-vy0, view_h)};"
        f"width:{_percent(width_pt, view_w)};aspect-ratio:{width_pt:.3f}/{height_pt:.3f}"
    )
    parts = [
        f'<div class="cs-page" role="img" aria-label="{escape(alt)}" '
        f'style="aspect-ratio:{view_w:.3f}/{view_h:.3f}">',
        f'<div class="cs-page-inner" style="{inner}">',
        f'<img class="cs-page-image" alt="" src="data:image/png;base64,{image}">',
    ]
    parts.extend(_shape_html(shape, width_pt, height_pt) for shape in shapes)
    parts.append("</div></div>")
    return "".join(parts)


def marked_text_html(
    text: str, base: int, marks: Sequence[Mark], *, css_class: str = "cs-text"
) -> str:
    """``text`` (the canonical slice starting at offset ``base``) with ``marks`` applied.

    Marks are absolute offsets, sorted and non-overlapping; parts outside the slice are
    clipped. Whitespace and line breaks are kept (``white-space: pre-wrap``).
    """
    end = base + len(text)
    out = [f'<div class="{_classes(css_class)}">']
    cursor = base
    for mark in marks:
        a, b = max(mark.char_start, cursor), min(mark.char_end, end)
        if b <= a:
            continue
        out.append(escape(text[cursor - base : a - base]))
        style = f' style="background:{_colour(mark.colour)}40"' if mark.colour else ""
        title = f' title="{escape(mark.title)}"' if mark.title else ""
        out.append(
            f'<mark class="{_classes(mark.css_class)}"{style}{title}'
            f"{_data_attrs(mark.data)}>{escape(text[a - base : b - base])}</mark>"
        )
        cursor = b
    out.append(escape(text[cursor - base :]))
    out.append("</div>")
    return "".join(out)


def legend_html(
    items: Sequence[tuple[str, str]],
    *,
    hatched: Sequence[str] = (),
    underlined: Sequence[str] = (),
) -> str:
    """A row of coloured swatches: ``(label, hex colour)``; labels in ``hatched`` striped,
    in ``underlined`` a faint tint over a band (as overlaps are drawn)."""
    chips = []
    for label, colour in items:
        border = f"border:1.5px solid {colour}"
        if label in hatched:
            pattern = f"repeating-linear-gradient(45deg,{_colour(colour)} 0 2px,{colour}55 2px 5px)"
        elif label in underlined:
            pattern = f"{_colour(colour)}12"
            border = f"border:0;border-bottom:3px solid {colour}"
        else:
            pattern = f"{_colour(colour)}55"
        chips.append(
            f'<span class="cs-chip"><span class="cs-swatch" style="background:{pattern};'
            f'{border}"></span>{escape(label)}</span>'
        )
    return f'<div class="cs-legend">{"".join(chips)}</div>'


def badge_html(text: str, *, tone: str, detail: str = "") -> str:
    """A verification badge: ``tone`` is ok (green), bad (red) or info (blue)."""
    if tone not in ("ok", "bad", "info"):
        raise ValueError(f"unknown badge tone {tone!r}")
    cls = f"cs-badge cs-badge-{tone}"
    more = f'<div class="cs-badge-detail">{escape(detail)}</div>' if detail else ""
    return f'<div class="{cls}"><strong>{escape(text)}</strong>{more}</div>'


# Classes used by the markup above; injected once per page by the app.
STYLESHEET = """
div.cs-page { position: relative; width: 100%; overflow: hidden; background: #fff;
  border: 1px solid #d5dde3; border-radius: 4px; box-shadow: 0 1px 4px rgba(15,30,45,.10); }
div.cs-page-inner { position: absolute; container-type: inline-size; }
div.cs-page-inner img.cs-page-image { display: block; width: 100%; height: 100%;
  margin: 0; max-width: none; user-select: none; }
div.cs-box { position: absolute; box-sizing: border-box; border-radius: 1px; }
div.cs-box:hover { outline: 1.5px solid #1f2933; z-index: 4; }
div.cs-box span.cs-tip { display: none; position: absolute; left: 0; top: 100%;
  margin-top: 4px; z-index: 5; width: max-content; max-width: 26rem; white-space: pre-line;
  font: .78rem/1.35 sans-serif; color: #1f2933; background: #fff; padding: .35rem .5rem;
  border: 1px solid #c5d0d8; border-radius: 4px; box-shadow: 0 2px 8px rgba(15,30,45,.18);
  pointer-events: none; }
div.cs-box span.cs-tip-left { left: auto; right: 0; }
div.cs-box span.cs-tip-up { top: auto; bottom: 100%; margin: 0 0 4px 0; }
div.cs-box:hover span.cs-tip { display: block; }
div.cs-box span.cs-label { position: absolute; left: 0; bottom: 100%; font: 700 .62rem/1
  sans-serif; padding: 0 .15em; background: rgba(255,255,255,.85); border-radius: 2px;
  pointer-events: none; }
div.cs-box span.cs-label-fit { inset: 0; bottom: auto; height: 100%; display: flex;
  align-items: center; justify-content: center; padding: 0; background: none;
  font-weight: 700; line-height: 1; text-shadow: 0 0 2px #fff, 0 0 2px #fff; }
div.cs-box.cs-margin-label { border-radius: 3px; z-index: 3; }
div.cs-box.cs-overlap-band, div.cs-box.cs-start-tick { pointer-events: none; border-radius: 0; }
div.cs-text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .9rem;
  line-height: 1.6; max-height: 32rem; overflow-y: auto; padding: .75rem 1rem;
  border: 1px solid #d5dde3; border-radius: 6px; background: #fbfcfd; }
div.cs-text mark { color: inherit; padding: 0; border-radius: 2px; }
div.cs-text mark.cs-overlap { background: rgba(199, 62, 29, .07) !important;
  box-shadow: inset 0 -2px 0 rgba(199, 62, 29, .85); }
div.cs-text mark.cs-hl { background: #ffd400b3 !important;
  border-bottom: 2px solid #d97706; }
div.cs-text mark.cs-block[data-kind]::before { content: attr(data-kind); font: 600 .62rem
  sans-serif; letter-spacing: .03em; text-transform: uppercase; color: #52606d;
  margin-right: .35em; vertical-align: .1em; }
div.cs-text mark[data-start]::before { content: attr(data-start); font: 700 .68rem
  sans-serif; color: #fff; background: #33475b; border-radius: 3px; padding: 0 .3em;
  margin-right: .25em; vertical-align: .15em; }
div.cs-legend { display: flex; flex-wrap: wrap; gap: .35rem .9rem; font-size: .82rem;
  margin: .2rem 0 .5rem 0; }
span.cs-chip { display: inline-flex; align-items: center; gap: .35rem; }
span.cs-swatch { display: inline-block; width: .95rem; height: .75rem; border-radius: 2px; }
div.cs-badge { padding: .5rem .8rem; border-radius: 6px; margin-bottom: .6rem; }
div.cs-badge-ok { background: #e6f4ea; border: 1px solid #34a853; color: #174f2a; }
div.cs-badge-bad { background: #fdecea; border: 1px solid #d93025; color: #8a1c14; }
div.cs-badge-info { background: #eaf2f8; border: 1px solid #2e86ab; color: #1b4a5e; }
div.cs-badge-detail { font-size: .85rem; margin-top: .2rem; }
table.cs-turns { border-collapse: collapse; width: 100%; font-size: .88rem; }
table.cs-turns th { text-align: left; font-weight: 600; color: #52606d; padding: .2rem .4rem; }
table.cs-turns td { vertical-align: top; padding: .3rem .4rem; border-top: 1px solid #e4e9ee; }
table.cs-turns td.cs-turn-time { white-space: nowrap; font-variant-numeric: tabular-nums; }
table.cs-turns td.cs-turn-speaker { white-space: nowrap; font-weight: 600; }
table.cs-turns tr.cs-turn-cited { background: #fffbe6; }
table.cs-turns div.cs-turn-text { border: 0; padding: 0; background: none; max-height: none; }
div.cs-raw { font-family: ui-monospace, monospace; font-size: .8rem; }
div.cs-hit span.cs-doc { display: inline-block; max-width: 100%; overflow-wrap: break-word; }
"""
