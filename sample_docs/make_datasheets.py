"""Generate the demo datasheets in ``sample_docs/datasheets/`` (run from anywhere).

Five invented circulation pumps, one two-page PDF each, with the same sections in the
same order. Each names its product once, in the title on page 1; every later section
speaks only of "the unit", "the pump" or "it". Indexed together, a question such as
"Corvane HX40 operating temperature range" can only be told apart from the four other
temperature sections by knowing which document a section belongs to: what late
chunking is meant to carry into a chunk's vector and naive chunking cannot.

All texts are original and invented for this demo; the products and figures do not
exist. The output is deterministic: fixed metadata, no random document id.

    python sample_docs/make_datasheets.py [OUT_DIR]
"""

from __future__ import annotations

import html
import io
import sys
from pathlib import Path

import pymupdf

OUT_DIR = Path(__file__).resolve().parent / "datasheets"
PAGE = pymupdf.paper_rect("a4")
MARGIN_PT = 56
FIXED_DATE = "D:20240101000000Z"
CSS = """
body { font-family: sans-serif; font-size: 10.5pt; line-height: 1.35; }
h1 { font-size: 20pt; font-weight: bold; margin-bottom: 4pt; }
h2 { font-size: 13.5pt; font-weight: bold; margin-top: 12pt; margin-bottom: 3pt; }
p { margin-top: 0; margin-bottom: 6pt; }
p.kind { font-size: 11pt; font-style: italic; margin-bottom: 10pt; }
"""
SECTIONS: tuple[str, ...] = (
    "Overview",
    "Electrical supply",
    "Operating temperature",
    "Hydraulic performance",
    "Noise and vibration",
    "Maintenance",
    "Safety features",
    "Warranty",
)
# What a user would ask about each section (the demo's queries add the product name).
SECTION_QUERIES: dict[str, str] = {
    "Electrical supply": "power supply voltage",
    "Operating temperature": "operating temperature range",
    "Hydraulic performance": "maximum flow rate and head",
    "Noise and vibration": "noise level",
    "Maintenance": "maintenance schedule",
    "Safety features": "safety protections",
    "Warranty": "warranty period",
}

PRODUCTS: dict[str, dict[str, str]] = {
    "Corvane HX40": {
        "Overview": (
            "A wet-rotor circulation pump for closed heating loops in apartment blocks and "
            "small commercial buildings. The cast-iron volute and the ceramic shaft make it "
            "a quiet, low-maintenance choice for systems of up to forty radiators."
        ),
        "Electrical supply": (
            "The unit runs from a single-phase 230 V, 50 Hz supply and draws at most 0.42 A. "
            "Its electronically commutated motor needs no external capacitor. Use a fused "
            "spur rated 3 A; the terminal box accepts cables of up to 1.5 mm\u00b2."
        ),
        "Operating temperature": (
            "It is rated for water from +2 \u00b0C to +95 \u00b0C and for ambient air between "
            "0 \u00b0C and +40 \u00b0C. Above 80 \u00b0C the electronics lower the top speed by "
            "ten percent to protect the windings. Do not let the pumped water freeze."
        ),
        "Hydraulic performance": (
            "The pump delivers up to 3.6 m\u00b3/h and reaches a maximum head of 4.2 m. Three "
            "fixed speed steps and one proportional-pressure curve cover most radiator "
            "circuits; the best efficiency point lies near 2 m\u00b3/h at 2.5 m."
        ),
        "Noise and vibration": (
            "At the middle speed step the sound pressure level stays below 28 dB(A) at one "
            "metre. Rubber isolation pads are supplied in the box; fit them when the "
            "pipework is fixed to a thin partition wall."
        ),
        "Maintenance": (
            "No routine lubrication is needed. Check the strainer upstream every twelve "
            "months and vent the rotor chamber through the front screw after refilling the "
            "system. Replace the whole unit after about 60,000 operating hours."
        ),
        "Safety features": (
            "A thermal cut-out stops the motor if the windings overheat, and a blocked-rotor "
            "detector retries a restart three times before it signals a fault on the red "
            "LED. The housing is rated IP44."
        ),
        "Warranty": (
            "The manufacturer guarantees the unit for two years from the date of purchase, "
            "extended to five years when it is registered online and installed by a "
            "certified fitter. Damage from frost or dry running is not covered."
        ),
    },
    "Aquaflux 220": {
        "Overview": (
            "An in-line pump for domestic hot-water circulation, designed to keep hot water "
            "at every tap of a family house within seconds. It has a bronze housing and is "
            "approved for drinking water."
        ),
        "Electrical supply": (
            "It is wired to 230 V single-phase mains at 50 or 60 Hz and consumes between 4 "
            "and 9 W. A built-in timer socket lets the installer switch it with a plug-in "
            "clock. The supply cable is fitted at the factory, 1.8 m long."
        ),
        "Operating temperature": (
            "The unit handles water between +5 \u00b0C and +70 \u00b0C; short peaks to "
            "+85 \u00b0C during legionella disinfection cycles are allowed for up to one hour "
            "a day. The room around it must stay between +1 \u00b0C and +35 \u00b0C."
        ),
        "Hydraulic performance": (
            "Its largest flow is 0.9 m\u00b3/h, with a head of up to 1.4 m: enough for a loop "
            "of 50 m of 15 mm copper pipe. The flow is fixed; a balancing valve on the return "
            "line sets the rate."
        ),
        "Noise and vibration": (
            "Running noise is about 22 dB(A), lower than a refrigerator. The bronze body "
            "damps vibration, so it can be mounted directly on the pipe without brackets."
        ),
        "Maintenance": (
            "In hard-water areas descale the rotor every two years: close both isolating "
            "valves, remove the motor head and soak the rotor in a mild citric acid "
            "solution. The non-return valve cartridge can be replaced separately."
        ),
        "Safety features": (
            "A check valve prevents gravity circulation when the pump stops. The motor is "
            "impedance-protected, so a jammed rotor cannot overheat it, and the enclosure "
            "meets IP42."
        ),
        "Warranty": (
            "A three-year warranty covers material and manufacturing defects. Scale damage "
            "is excluded unless the water hardness stated in the installation guide was "
            "respected."
        ),
    },
    "Meridane P7": {
        "Overview": (
            "A dry-rotor pump for chilled-water and heating circuits in office buildings. "
            "The motor sits outside the water, coupled through a mechanical seal, which "
            "lets it handle larger flows than wet-rotor designs."
        ),
        "Electrical supply": (
            "The unit needs a three-phase 400 V, 50 Hz supply; the rated power is 0.75 kW "
            "and the full-load current 1.9 A. An optional frequency converter allows speed "
            "control from a building management system over a 0-10 V signal."
        ),
        "Operating temperature": (
            "Permissible liquid temperature is -10 \u00b0C to +120 \u00b0C with up to 40 % "
            "glycol added. The motor itself may work in rooms from -20 \u00b0C to +40 \u00b0C; "
            "above 1000 m altitude its output must be derated."
        ),
        "Hydraulic performance": (
            "It moves up to 18 m\u00b3/h and builds a maximum head of 14 m. The impeller can "
            "be trimmed at the factory to match a given duty point, which saves energy "
            "compared with throttling the flow."
        ),
        "Noise and vibration": (
            "The sound pressure level is 54 dB(A) at full speed. Mount it on an inertia "
            "base or flexible connectors in plant rooms next to occupied spaces."
        ),
        "Maintenance": (
            "Inspect the mechanical seal for drips every six months and grease the motor "
            "bearings every 8,000 hours. The seal can be changed without removing the pump "
            "housing from the pipework."
        ),
        "Safety features": (
            "PTC thermistors in the motor windings must be wired to the starter to trip it "
            "on overtemperature. The coupling guard is fixed with captive screws. Protection "
            "class IP55."
        ),
        "Warranty": (
            "Eighteen months from delivery or twelve months from commissioning, whichever "
            "ends first. Wear parts such as seals and bearings are excluded."
        ),
    },
    "Oskel Tern 15": {
        "Overview": (
            "A compact solar-thermal circulator for rooftop collector loops. It is built "
            "to start reliably from a low-voltage photovoltaic panel, so the loop keeps "
            "running during a grid outage."
        ),
        "Electrical supply": (
            "It takes 12 to 24 V DC directly from a small solar panel or a battery and draws "
            "up to 1.1 A at 24 V. Reverse polarity is tolerated. No mains connection is "
            "needed."
        ),
        "Operating temperature": (
            "The fluid may range from -25 \u00b0C to +110 \u00b0C, which suits glycol "
            "mixtures in unheated lofts. The pump head tolerates ambient temperatures from "
            "-20 \u00b0C to +60 \u00b0C."
        ),
        "Hydraulic performance": (
            "The unit delivers up to 1.2 m\u00b3/h against a maximum head of 6 m, which "
            "covers collector fields of up to eight panels. The speed follows the available "
            "solar power."
        ),
        "Noise and vibration": (
            "Because it runs on a brushless DC motor its noise stays below 30 dB(A). A "
            "slight hum at very low sun is normal."
        ),
        "Maintenance": (
            "Check the glycol concentration and the pH of the loop every year; acidic fluid "
            "wears the impeller. The motor is sealed for life and needs no service."
        ),
        "Safety features": (
            "It stops when the fluid exceeds +115 \u00b0C to protect the seals, and restarts "
            "automatically once it has cooled down. Rated IP65 for outdoor mounting."
        ),
        "Warranty": (
            "Five years, provided that the unit was installed with the supplied anti-"
            "vibration mounts and that the loop fluid is the recommended type."
        ),
    },
    "Valdrop Cirq 90": {
        "Overview": (
            "A high-efficiency circulator for underfloor heating manifolds, delivered with "
            "a manifold adapter and a thermostatic mixing valve. It fits into the standard "
            "180 mm gap between manifold and boiler flow."
        ),
        "Electrical supply": (
            "The pump connects to 230 V mains and draws between 3 and 45 W depending on "
            "the load. A potential-free relay contact lets the room thermostat switch it "
            "on and off."
        ),
        "Operating temperature": (
            "Supply water from +15 \u00b0C to +60 \u00b0C is accepted; the mixing valve keeps "
            "the floor loops between +25 \u00b0C and +55 \u00b0C. Install it where the air "
            "stays above freezing and below +40 \u00b0C."
        ),
        "Hydraulic performance": (
            "It gives a flow of up to 2.8 m\u00b3/h and a head of 6 m, enough for twelve "
            "floor loops of 100 m each. A constant-pressure mode keeps the flow steady when "
            "loops close."
        ),
        "Noise and vibration": (
            "Below 25 dB(A) in constant-pressure mode. The manifold adapter includes a "
            "rubber gasket that keeps vibration out of the floor screed."
        ),
        "Maintenance": (
            "Flush the manifold filters once a heating season and bleed the loops after "
            "any refill. The pump motor needs no maintenance; the mixing valve cartridge "
            "should be checked every three years."
        ),
        "Safety features": (
            "An overheat limiter closes the mixing valve if supply water above +60 \u00b0C "
            "reaches the floor, protecting the screed. A dry-run detector stops the motor "
            "after two minutes without water."
        ),
        "Warranty": (
            "Four years on the pump and two years on the mixing valve, valid only when the "
            "heating system was flushed and filled with treated water."
        ),
    },
}


def slug(product: str) -> str:
    return "-".join(product.lower().split())


def datasheet_html(product: str, texts: dict[str, str]) -> str:
    parts = [
        f"<h1>{html.escape(product)}</h1>",
        "<p class='kind'>Circulation pump \u2013 technical datasheet</p>",
    ]
    for section in SECTIONS:
        parts.append(f"<h2>{html.escape(section)}</h2>")
        parts.append(f"<p>{html.escape(texts[section])}</p>")
    return "<body>" + "\n".join(parts) + "</body>"


def datasheet_pdf(product: str, texts: dict[str, str]) -> bytes:
    """Lay out one datasheet with a ``Story`` and return deterministic PDF bytes."""
    story = pymupdf.Story(html=datasheet_html(product, texts), user_css=CSS)
    frame = PAGE + (MARGIN_PT, MARGIN_PT, -MARGIN_PT, -MARGIN_PT)
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    more = True
    while more:
        device = writer.begin_page(PAGE)
        more, _ = story.place(frame)
        story.draw(device)
        writer.end_page()
    writer.close()
    pdf = pymupdf.open("pdf", buffer.getvalue())
    pdf.set_metadata(
        {
            "title": f"{product} datasheet",
            "author": "Chunkscope sample documents",
            "subject": "Invented product, generated for a demo",
            "creator": "sample_docs/make_datasheets.py",
            "producer": "PyMuPDF",
            "creationDate": FIXED_DATE,
            "modDate": FIXED_DATE,
        }
    )
    pdf.subset_fonts()
    return pdf.tobytes(garbage=4, deflate=True, no_new_id=True)


def main(out_dir: Path = OUT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for product, texts in PRODUCTS.items():
        path = out_dir / f"datasheet-{slug(product)}.pdf"
        path.write_bytes(datasheet_pdf(product, texts))
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DIR
    for written_path in main(target):
        print(written_path)
