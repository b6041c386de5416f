"""A measuring set for the diagnosis: documents and queries whose cause of failure is
known by construction, so that a suggestion can be scored against the truth.

Four families of invented documents (device datasheets, company reports, town bylaws,
clinical study summaries), each with its own subjects, sections, figures and filler, and
six causes, each built as a careful reader would name it on the page:

- **context**: the document's title is neutral, the subject is named once in its
  introduction, and the answering sentence says "the unit" / "the company";
- **boundary**: the answering sentence (the subject and its label first, the figure last)
  straddles a chunk boundary of the measuring policy, each half among unrelated filler;
- **vocabulary**: the query calls the subject by a code and the quantity by a word that
  no document of the set uses (the documents say the marketing name and another word);
- **label**: the gold points at a near-duplicate sentence (another variant or year, other
  figures) that does not answer; another passage of the same document does;
- **parse**: the answering sentence is damaged text: glyph soup, unmapped glyphs, or a
  shifted alphabet (a font's broken encoding);
- **method**: a short answering paragraph inside a long document about something else,
  with other documents about the asked topic (late chunking's window can pull the
  vector away; the other methods read the chunk alone).

``build_casebook`` returns the markdown sources and the labelled queries, with each
query's constructed cause; ``measure`` scores a run's suggestions against it. A failure
counts for the cause it was built for, except that a *method* case counts only when the
method alone misses (every other method finds it), as the construction intends, and a
failure of another cause where only one method misses is left out (the reader would see
a method-specific miss there): both are reported apart, never silently dropped.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.diagnose.run_failures import diagnose_methods
from core.diagnose.terms import query_terms, terms_of
from core.evaluate import EvalConfig, run_eval
from core.evaluate.labels import Evidence, LabelledQuery
from core.formats import load_document
from core.methods import BENCHED, embedding_methods
from core.provenance.types import ChunkPolicy

CAUSES = ("context", "boundary", "vocabulary", "label", "parse", "method")
POLICY = ChunkPolicy(name="fixed", size=300, overlap=0)
# The first-look methods and every dense one (naive, late, bm25, contextual).
METHODS = tuple(dict.fromkeys((*BENCHED, *embedding_methods())))
KS = (1,)  # a failure: the gold chunk is not first (late rarely loses more than a few ranks)
DIGESTS = 2  # documents all about the asked quantity, per method case


@dataclass(frozen=True, slots=True)
class Fact:
    section: str
    aspect: str  # the query's words for what is asked
    sentence: str  # {ref} the subject as the sentence names it, {v} the figure, {w} a second
    unit: str
    low: int
    high: int
    paraphrase: str  # a query wording with none of the documents' words for the aspect


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    ref: str  # how a document says its subject without naming it
    subjects: tuple[tuple[str, str], ...]  # (name, code no document uses)
    title: str
    neutral_title: str
    intro: str
    facts: tuple[Fact, ...]
    filler: tuple[str, ...]
    other_topic: tuple[str, ...]  # long text about something else (method cases)
    # How this family words its constructions (the defaults: the tuned families' words).
    ask: str = "What is the {aspect} of {name}?"
    variants: tuple[str, str, str, str] = ("Lite", "Max", "Mini", "Pro")  # gold, asked, others
    variant_heading: str = "{section} of the {v} model"
    boundary: str = (
        "The {aspect} of {name}, as set out in the annex and confirmed by the last "
        "independent review of the figures, stands at {value} {unit}."
    )
    echo: str = "The {aspect} of {name} was confirmed at {value} {unit} in the last review."
    damage: tuple[int, ...] = ()  # ``_damage`` modes by case; () the tuned families' own
    held_out: bool = False  # never used to set a threshold (``HELD_OUT``)


FAMILIES: tuple[Family, ...] = (
    Family(
        name="device",
        ref="The unit",
        subjects=(
            ("Orvex Lumen", "OX-27Q"),
            ("Kelda Vantor", "KD-81T"),
            ("Braxil Sorrel", "BX-44M"),
            ("Temmo Quill", "TQ-19R"),
            ("Falmor Crest", "FC-63P"),
            ("Ulvane Petra", "UP-52K"),
        ),
        title="{name} datasheet",
        neutral_title="Product datasheet {n}",
        intro="This datasheet covers the {name}, a bench instrument for field laboratories.",
        facts=(
            Fact(
                "Weight",
                "weight",
                "{ref} weighs {v} kg without its carrying case.",
                "kg",
                2,
                19,
                "how heavy is the {code}",
            ),
            Fact(
                "Power",
                "power draw",
                "{ref} draws {v} W from the mains at full load.",
                "W",
                30,
                900,
                "what wattage does the {code} need",
            ),
            Fact(
                "Warranty",
                "warranty period",
                "{ref} carries a warranty of {v} months from the date of delivery.",
                "months",
                12,
                60,
                "how long is the {code} guaranteed",
            ),
            Fact(
                "Noise",
                "noise level",
                "{ref} emits {v} dB at one metre in normal use.",
                "dB",
                30,
                70,
                "how loud is the {code}",
            ),
        ),
        filler=(
            "Keep the vents clear of paper and cloth while the instrument runs.",
            "The front panel shows the state of each channel in green or amber.",
            "Service intervals depend on the dust level of the room.",
            "A printed quick guide ships in the box with every instrument.",
            "Firmware updates are installed from a memory stick on the rear port.",
            "The casing is made of recycled aluminium and can be wiped clean.",
            "Calibration certificates are kept by the supplier for ten years.",
            "Spare fuses are stored in a drawer behind the rear cover.",
        ),
        other_topic=(
            "The history of the workshop goes back to a small repair shop by the river.",
            "Apprentices spent their first year sorting screws and sweeping the floor.",
            "Every summer the staff rowed together on the lake behind the hall.",
            "The founder collected old clocks and kept them ticking in the canteen.",
            "A mural of the valley covers the wall of the meeting room.",
            "Visitors often ask about the bell that rings at the end of each shift.",
        ),
    ),
    Family(
        name="company",
        ref="The company",
        subjects=(
            ("Harrowgate Textiles", "HGT"),
            ("Pellucid Foods", "PLF"),
            ("Quarrin Shipping", "QSH"),
            ("Mervale Paper", "MVP"),
            ("Stellwick Glass", "SWG"),
            ("Dunmore Cables", "DMC"),
        ),
        title="{name} quarterly report",
        neutral_title="Quarterly report {n}",
        intro="This report presents the results of {name} for the third quarter.",
        facts=(
            Fact(
                "Revenue",
                "quarterly revenue",
                "{ref} reported revenue of {v} million dollars for the quarter.",
                "million",
                40,
                900,
                "what was the {code} turnover",
            ),
            Fact(
                "Restructuring",
                "restructuring charges",
                "{ref} recorded restructuring charges of {v} million dollars for plant closures.",
                "million",
                2,
                80,
                "what did {code} book for closing factories",
            ),
            Fact(
                "Headcount",
                "number of employees",
                "{ref} employed {v} people at the end of the quarter.",
                "people",
                300,
                9000,
                "how large is the {code} workforce",
            ),
            Fact(
                "Dividend",
                "dividend per share",
                "{ref} declared a dividend of {v} cents per share.",
                "cents",
                5,
                90,
                "what payout per stock unit did {code} announce",
            ),
        ),
        filler=(
            "Management reviews these figures with the audit committee each quarter.",
            "Amounts are unaudited and may be revised in the annual accounts.",
            "Exchange rates moved little over the period under review.",
            "Customer demand in the northern region remained steady.",
            "The board met four times during the period.",
            "Freight costs eased after the new depot opened.",
            "Comparative figures were restated for the sale of the printing arm.",
            "Investors may download the slides from the results page.",
        ),
        other_topic=(
            "The litigation with the former landlord concerns the lease of the old depot.",
            "Hearings were postponed twice at the request of the court.",
            "Counsel expects the matter to be heard again in the spring.",
            "The claim relates to repairs of the roof and the loading bays.",
            "Witness statements were filed by both parties in the autumn.",
            "The court appointed a surveyor to inspect the building.",
        ),
    ),
    Family(
        name="bylaw",
        ref="The town",
        subjects=(
            ("Ashcombe", "ASH-7"),
            ("Brindlemere", "BRM-2"),
            ("Coldharbour", "CDH-5"),
            ("Dunsford", "DNF-9"),
            ("Eastwold", "EWD-4"),
            ("Fenwick", "FNW-3"),
        ),
        title="{name} town bylaws",
        neutral_title="Municipal bylaws {n}",
        intro="These bylaws were adopted by the council of {name} after public consultation.",
        facts=(
            Fact(
                "Parking",
                "parking limit",
                "{ref} limits street parking in the centre to {v} minutes.",
                "minutes",
                20,
                240,
                "how long may cars stand in {code} streets",
            ),
            Fact(
                "Noise",
                "quiet hours start",
                "{ref} requires quiet from {v} o'clock in the evening.",
                "o'clock",
                8,
                11,
                "when must residents of {code} hush",
            ),
            Fact(
                "Waste",
                "waste collection fee",
                "{ref} charges a waste collection fee of {v} euros a year per household.",
                "euros",
                40,
                400,
                "what does {code} bill for bins",
            ),
            Fact(
                "Dogs",
                "dog licence fee",
                "{ref} sets the dog licence fee at {v} euros for each animal.",
                "euros",
                10,
                90,
                "what must {code} pet owners pay for hounds",
            ),
        ),
        filler=(
            "Residents may comment on proposed changes at the town hall.",
            "Wardens patrol the market square on weekdays.",
            "Signs at each entrance to the centre repeat the main rules.",
            "Exemptions may be granted for funerals and weddings.",
            "Fines are payable within thirty days of the notice.",
            "The council reviews these rules every second year.",
            "Notices are also published in the local newsletter.",
            "Disputes are heard by the licensing committee.",
        ),
        other_topic=(
            "The town fair began as a cattle market on the green.",
            "Old maps show the mill race running under the high street.",
            "The bell tower was rebuilt after a storm brought down its spire.",
            "Local choirs sing in the square on the longest evening of the year.",
            "The library holds the diaries of the first harbour master.",
            "Orchards once covered the hill where the school now stands.",
        ),
    ),
    Family(
        name="trial",
        ref="The study",
        subjects=(
            ("Corvatrel", "CVT-114"),
            ("Dalmerin", "DLM-207"),
            ("Estopane", "ESP-330"),
            ("Fibrazole", "FBZ-451"),
            ("Glendivir", "GDV-562"),
            ("Hexamorin", "HXM-675"),
        ),
        title="{name} study summary",
        neutral_title="Clinical study summary {n}",
        intro="This summary reports the phase two study of {name} in adult volunteers.",
        facts=(
            Fact(
                "Dose",
                "daily dose",
                "{ref} gave a daily dose of {v} milligrams with breakfast.",
                "mg",
                5,
                400,
                "how much of {code} did volunteers swallow each morning",
            ),
            Fact(
                "Enrollment",
                "number of participants",
                "{ref} enrolled {v} participants across four clinics.",
                "participants",
                40,
                900,
                "how many volunteers joined the {code} cohort",
            ),
            Fact(
                "Storage",
                "storage temperature",
                "{ref} kept the tablets at {v} degrees in locked cabinets.",
                "degrees",
                2,
                25,
                "how cold must {code} be kept",
            ),
            Fact(
                "Duration",
                "treatment duration",
                "{ref} treated each participant for {v} weeks.",
                "weeks",
                4,
                52,
                "for how long was {code} taken",
            ),
        ),
        filler=(
            "Each visit began with a short interview by a study nurse.",
            "Samples were labelled with a number, never with a name.",
            "An independent board reviewed safety every month.",
            "Participants could leave the study at any time.",
            "Travel costs were refunded at each visit.",
            "The protocol was approved by the ethics committee.",
            "Data were entered twice and compared for errors.",
            "Results will be shared with every participant by letter.",
        ),
        other_topic=(
            "The clinic building was once a school for sailors.",
            "Its garden is tended by volunteers from the village.",
            "A small museum on the ground floor shows old ship models.",
            "The canteen serves soup from vegetables grown on site.",
            "Every spring the staff paint the railings by the harbour.",
            "The car park was paved with stones from the old quay.",
        ),
    ),
)


# Held out: families no threshold was ever set on (other domains, other wordings of the
# queries, the variants, the cut sentence, and other damage: CID codes, reversed words,
# letter-spaced text), built with their own seed. Measure them before changing any rule.
HELD_OUT_SEED = 2804
HELD_OUT: tuple[Family, ...] = (
    Family(
        name="vessel",
        ref="The vessel",
        subjects=(
            ("Marisol Tern", "MRT-08"),
            ("Gannet Ardent", "GNA-17"),
            ("Kestrel Bay", "KSB-26"),
            ("Lorne Carrick", "LNC-35"),
            ("Sable Fenton", "SBF-44"),
            ("Wendle Osprey", "WDO-53"),
        ),
        title="{name} vessel particulars",
        neutral_title="Vessel particulars {n}",
        intro="These particulars describe the {name}, a coastal cargo ship entered on the "
        "flag registry last spring.",
        facts=(
            Fact(
                "Tonnage",
                "gross tonnage",
                "{ref} measures {v} gross tons on its current certificate.",
                "tons",
                900,
                9000,
                "how bulky is the {code}",
            ),
            Fact(
                "Crew",
                "crew complement",
                "{ref} sails with a complement of {v} seafarers.",
                "seafarers",
                6,
                40,
                "how many hands work aboard {code}",
            ),
            Fact(
                "Speed",
                "service speed",
                "{ref} makes {v} knots in calm water when laden.",
                "knots",
                9,
                24,
                "how swift is the {code}",
            ),
            Fact(
                "Bunkers",
                "bunker capacity",
                "{ref} holds {v} cubic metres of fuel oil in its tanks.",
                "cubic metres",
                80,
                900,
                "how much diesel fits inside {code}",
            ),
        ),
        filler=(
            "Lifeboats are inspected by the surveyor at every annual visit.",
            "The bridge was refitted with new radar two winters ago.",
            "Hatch covers fold hydraulically and seal against spray.",
            "Ballast water is treated before it is pumped overboard.",
            "The galley serves three meals a day to the people on watch.",
            "Charts are updated weekly from the hydrographic office.",
            "Deck cranes lift loose timber and steel coils.",
            "The hull was painted in the dry dock at the yard in June.",
        ),
        other_topic=(
            "The harbour pilots meet in a tavern that once sold rope and tar.",
            "A storm in the old days washed the lighthouse keeper's cottage away.",
            "Children race paper boats along the quay during the summer regatta.",
            "Fishermen mend their nets on the slipway by the chapel.",
            "The museum keeps a figurehead carved from a single oak trunk.",
            "Gulls nest every spring on the roof of the customs house.",
        ),
        ask="What {aspect} does {name} have?",
        variants=("Coaster", "Oceanic", "Riverine", "Harbourer"),
        variant_heading="{section}, {v} design",
        boundary=(
            "For {name}, the {aspect} recorded by the classification society in its most "
            "recent survey, after the sea trials off the northern cape, is {value} {unit}."
        ),
        echo="Surveyors noted the {aspect} of {name} as {value} {unit} at the last visit.",
        damage=(3, 4, 5),
        held_out=True,
    ),
    Family(
        name="software",
        ref="This release",
        subjects=(
            ("Nimbra Ledger", "NBL-4X"),
            ("Quillon Desk", "QLD-7V"),
            ("Sorvent Atlas", "SVA-2W"),
            ("Trellic Hub", "TLH-9Z"),
            ("Velmont Forms", "VMF-3Y"),
            ("Zandor Sync", "ZDS-6U"),
        ),
        title="{name} release notes",
        neutral_title="Release notes {n}",
        intro="These notes accompany the new version of {name}, a bookkeeping tool for "
        "small firms.",
        facts=(
            Fact(
                "Memory",
                "memory footprint",
                "{ref} needs {v} megabytes of working memory on a typical desktop.",
                "megabytes",
                120,
                4000,
                "how much RAM does {code} eat",
            ),
            Fact(
                "Accounts",
                "maximum number of users",
                "{ref} supports up to {v} concurrent accounts per installation.",
                "accounts",
                5,
                500,
                "how many people can sign into {code} together",
            ),
            Fact(
                "Licensing",
                "licence price",
                "{ref} costs {v} dollars per seat each year.",
                "dollars",
                20,
                600,
                "how expensive is a {code} subscription",
            ),
            Fact(
                "Support",
                "support period",
                "{ref} receives security fixes for {v} months after launch.",
                "months",
                6,
                60,
                "until when is {code} patched",
            ),
        ),
        filler=(
            "Back up your ledger before installing the new version.",
            "The installer checks for a previous copy and keeps its settings.",
            "Menus were reorganised after feedback from early testers.",
            "Keyboard shortcuts are listed in the help window.",
            "Reports can be exported as spreadsheets or printed.",
            "The dark theme now follows the system setting.",
            "Known issues are tracked on the public board.",
            "Translations were updated for six languages.",
        ),
        other_topic=(
            "The team moved into a converted warehouse near the station.",
            "Lunch is cooked on Fridays by whoever lost the chess game.",
            "A stray cat adopted the office and sleeps on the printer.",
            "The meeting rooms are named after mountain passes.",
            "Every winter the staff hold a quiz about old arcade games.",
            "Bicycles crowd the hallway on dry mornings.",
        ),
        ask="Tell me the {aspect} for {name}.",
        variants=("Starter", "Enterprise", "Team", "Cloud"),
        variant_heading="{section} ({v} edition)",
        boundary=(
            "The {aspect} for {name}, across the supported platforms listed in the appendix "
            "and once the optional modules are enabled, comes to {value} {unit}."
        ),
        echo="Testing put the {aspect} for {name} at {value} {unit} on the reference set.",
        damage=(4, 5, 3),
        held_out=True,
    ),
    Family(
        name="route",
        ref="The route",
        subjects=(
            ("Harlow Edge", "HWE-12"),
            ("Mossgill Way", "MGW-31"),
            ("Pennock Ridge", "PNR-45"),
            ("Wraybeck Trail", "WBT-58"),
            ("Tarnside Path", "TSP-67"),
            ("Oakhollow Walk", "OHW-73"),
        ),
        title="{name} walking guide",
        neutral_title="Walking guide {n}",
        intro="This guide describes {name}, a waymarked hill walk starting from the village "
        "car park.",
        facts=(
            Fact(
                "Distance",
                "total distance",
                "{ref} covers {v} kilometres from the gate to the summit cairn and back.",
                "kilometres",
                4,
                30,
                "how far is the {code} hike",
            ),
            Fact(
                "Ascent",
                "height gain",
                "{ref} climbs {v} metres in all, most of it in the first hour.",
                "metres",
                150,
                1400,
                "how much uphill on {code}",
            ),
            Fact(
                "Timing",
                "walking time",
                "{ref} takes about {v} hours at a steady pace.",
                "hours",
                2,
                9,
                "how lengthy an outing is {code}",
            ),
            Fact(
                "Shelter",
                "number of huts",
                "{ref} passes {v} mountain huts that open in summer.",
                "huts",
                2,
                9,
                "how many refuges line {code}",
            ),
        ),
        filler=(
            "Wear boots with a good grip after rain.",
            "Sheep graze on the open fell, so keep dogs on a lead.",
            "The waymarks are yellow arrows on wooden posts.",
            "Mobile signal is poor in the upper valley.",
            "A tea room by the bridge opens at weekends.",
            "Maps are sold at the visitor centre.",
            "Streams can rise quickly after a storm.",
            "Leave gates as you find them.",
        ),
        other_topic=(
            "The chapel in the valley was built by quarry workers.",
            "Legend says a giant threw the boulders across the moor.",
            "The old railway carried slate down to the coast.",
            "Otters have returned to the river below the mill.",
            "A poet lived for a year in the cottage by the ford.",
            "The village fete ends with a race up the church tower steps.",
        ),
        ask="{name}: what is its {aspect}?",
        variants=("short loop", "summit loop", "valley loop", "ridge loop"),
        variant_heading="{section} on the {v}",
        boundary=(
            "The {aspect} of {name}, measured on foot by the rangers with a wheel and "
            "checked against the survey map of the national park, is {value} {unit}."
        ),
        echo="Rangers give the {aspect} of {name} as {value} {unit} on the park's board.",
        damage=(5, 3, 4),
        held_out=True,
    ),
    Family(
        name="grant",
        ref="The programme",
        subjects=(
            ("Ardent Futures", "ADF-81"),
            ("Bellhaven Awards", "BHA-22"),
            ("Cindral Fellows", "CDF-36"),
            ("Dovecote Prize", "DCP-47"),
            ("Elmstead Bursary", "ESB-59"),
            ("Fallowmere Grants", "FMG-64"),
        ),
        title="{name} call for proposals",
        neutral_title="Call for proposals {n}",
        intro="This call invites applications to {name}, which supports early-career researchers.",
        facts=(
            Fact(
                "Amount",
                "maximum award",
                "{ref} awards at most {v} thousand pounds to each project.",
                "thousand",
                20,
                900,
                "what is the ceiling on {code} money",
            ),
            Fact(
                "Window",
                "application window",
                "{ref} stops accepting proposals {v} days after the launch event.",
                "days",
                14,
                90,
                "when is the cutoff for {code}",
            ),
            Fact(
                "Funding",
                "funding period",
                "{ref} funds each project for {v} months.",
                "months",
                6,
                48,
                "over what span does {code} pay out",
            ),
            Fact(
                "Awards",
                "number of awards",
                "{ref} expects to make {v} awards in this round.",
                "awards",
                3,
                60,
                "how many winners will {code} pick",
            ),
        ),
        filler=(
            "Applicants must hold a doctorate or expect one within a year.",
            "Proposals are read by two referees from outside the institution.",
            "Budgets must list equipment and travel separately.",
            "Shortlisted applicants are invited to a short interview.",
            "Part-time applicants are welcome.",
            "Letters of support should be signed and dated.",
            "Results are announced by email.",
            "Questions can be sent to the office by post.",
        ),
        other_topic=(
            "The foundation began with a bequest from a lighthouse keeper.",
            "Its first office was above a bakery in the old town.",
            "The archive holds letters from every early recipient.",
            "A portrait of the founder hangs in the reading room.",
            "The garden behind the building grows rare ferns.",
            "Each autumn the staff walk the coastal path together.",
        ),
        ask="Which {aspect} applies to {name}?",
        variants=("2021 round", "2024 round", "2022 round", "2023 round"),
        variant_heading="{section} in the {v}",
        boundary=(
            "The {aspect} of {name}, subject to the conditions of the trust deed and to the "
            "rules approved by the trustees this spring, is fixed at {value} {unit}."
        ),
        echo="The trustees fixed the {aspect} of {name} at {value} {unit} this spring.",
        damage=(3, 5, 4),
        held_out=True,
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BookQuery:
    """A labelled query and the cause its failure has by construction."""

    id: str
    cause: str
    family: str
    query: str
    doc: str
    gold: str  # the exact text the gold span holds (one occurrence in the document)
    subject: str = ""  # the query's words for its subject (a name, or a code)


@dataclass(frozen=True, slots=True, kw_only=True)
class Casebook:
    sources: Mapping[str, str]  # document name (``<name>.md``) -> markdown text
    queries: tuple[BookQuery, ...]


_FIRST = ("Or", "Kel", "Brax", "Tem", "Fal", "Ulv", "Mor", "Ves", "Dran", "Pel", "Quor", "Sil")
_SECOND = ("vex", "dane", "moril", "quist", "bera", "tonic", "varo", "lune", "sett", "drin")


def _subject(fam: Family, number: int, rng: random.Random) -> tuple[str, str]:
    """A subject name no other case of the family uses, and its code: the family's own
    subjects first, then invented ones."""
    if number <= len(fam.subjects):
        return fam.subjects[number - 1]
    first = _FIRST[(number + len(fam.name)) % len(_FIRST)]
    second = _SECOND[(number * 3 + len(fam.name)) % len(_SECOND)]
    name = f"{first}{second}"
    if fam.name in ("device", "company") or fam.held_out:
        name += " " + _SECOND[(number * 7) % len(_SECOND)].capitalize() + "ia"
    code = fam.subjects[(number - 1) % len(fam.subjects)][1]
    return name, f"{code[:2]}{chr(65 + number % 26)}-{number}{rng.randint(10, 99)}"


def _figure(rng: random.Random, fact: Fact) -> str:
    return str(rng.randint(fact.low, fact.high))


def _fill(rng: random.Random, pool: Sequence[str], n: int) -> str:
    return " ".join(rng.choice(pool) for _ in range(n))


def _section(fam: Family, fact: Fact, sentence: str, rng: random.Random) -> str:
    return (
        f"## {fact.section}\n\n{_fill(rng, fam.filler, 1)} {sentence} {_fill(rng, fam.filler, 1)}"
    )


def _doc(fam: Family, title: str, intro: str, sections: Sequence[str]) -> str:
    return f"# {title}\n\n{intro}\n\n" + "\n\n".join(sections) + "\n"


def _fact_sentence(fact: Fact, ref: str, value: str) -> str:
    return fact.sentence.format(ref=ref, v=value)


_SHIFT = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "defghijklmnopqrstuvwxyzabcDEFGHIJKLMNOPQRSTUVWXYZABC",
)
_SOUP = "#%&+<=>@^~|\\"


def _damage(text: str, how: int, rng: random.Random) -> str:
    """``text`` as a broken font encoding shows it: glyph soup (0), unmapped glyphs
    (private use code points, 1), a shifted alphabet (2); or as a broken extraction shows
    it: CID codes for every letter (3), each word's letters reversed (4: a mirrored text
    run), letters spaced apart (5: a font with no word spacing, set letter by letter)."""
    if how == 3:
        return "".join(f"(cid:{ord(ch) % 97 + 3})" if ch.isalpha() else ch for ch in text)
    if how == 4:
        return re.sub(r"[A-Za-z]+", lambda m: m.group()[::-1], text)
    if how == 5:
        return re.sub(r"[A-Za-z]+", lambda m: " ".join(m.group()), text)
    if how == 0:
        return "".join(rng.choice(_SOUP) if ch.isalnum() else ch for ch in text)
    if how == 1:
        return "".join(chr(0xE000 + ord(ch) % 200) if ch.isalpha() else ch for ch in text)
    return text.translate(_SHIFT)


def build_casebook(
    *,
    per_cause: int = 2,
    seed: int | None = None,
    families: Sequence[str] | None = None,
    held_out: bool = False,
) -> Casebook:
    """``per_cause`` queries per (family, cause): ``4 x 6 x per_cause`` in all (``families``:
    only those named), each on its own document, every document a distractor for the
    others; a method case brings a second document, all about the asked aspect.
    ``held_out``: the ``HELD_OUT`` families instead, by default with ``HELD_OUT_SEED``."""
    rng = random.Random(seed if seed is not None else HELD_OUT_SEED if held_out else 0)
    sources: dict[str, str] = {}
    queries: list[BookQuery] = []
    for fam in HELD_OUT if held_out else FAMILIES:
        if families is not None and fam.name not in families:
            continue
        number = 0
        for cause in CAUSES:
            for i in range(per_cause):
                number += 1
                name, code = _subject(fam, number, rng)
                fact = fam.facts[(i + CAUSES.index(cause)) % len(fam.facts)]
                doc = f"{fam.name}-{cause}-{i + 1}"
                built = _build(fam, cause, fact, name, code, number, i, rng)
                text, query, gold = built
                assert text.count(gold) == 1, (doc, gold)
                subject = code if cause == "vocabulary" else name
                subject += f" {fam.variants[1]}" if cause == "label" else ""
                sources[doc + ".md"] = text
                if cause == "method":
                    for j in range(DIGESTS):
                        sources[f"{fam.name}-digest-{i + 1}-{j + 1}.md"] = _digest(fam, fact, rng)
                queries.append(
                    BookQuery(id=f"{doc}", cause=cause, family=fam.name, query=query,
                              doc=doc, gold=gold, subject=subject)
                )  # fmt: skip
    _check_vocabulary(sources, queries)
    return Casebook(sources=sources, queries=tuple(queries))


def _build(
    fam: Family, cause: str, fact: Fact, name: str, code: str, number: int, i: int,
    rng: random.Random,
) -> tuple[str, str, str]:  # fmt: skip
    """``(markdown, query, gold text)`` of one case."""
    value = _figure(rng, fact)
    query = fam.ask.format(aspect=fact.aspect, name=name)
    others = [f for f in fam.facts if f is not fact]
    normal = [_section(fam, f, _fact_sentence(f, name, _figure(rng, f)), rng) for f in others]
    title = fam.title.format(name=name)
    intro = fam.intro.format(name=name)
    if cause == "context":
        gold = _fact_sentence(fact, fam.ref, value)
        sections = [_section(fam, f, _fact_sentence(f, fam.ref, _figure(rng, f)), rng)
                    for f in others]  # fmt: skip
        # two sections at least between the naming introduction and the answer: no chunk
        # of the policy holds both
        sections.insert(2 + i % (len(sections) - 1), _section(fam, fact, gold, rng))
        return _doc(fam, fam.neutral_title.format(n=number), intro, sections), query, gold
    if cause == "boundary":
        gold = fam.boundary.format(aspect=fact.aspect, name=name, value=value, unit=fact.unit)
        head = _doc(fam, title, intro, normal)
        # place the gold so that the policy's boundary falls in its middle
        cut = ((len(head) // POLICY.size) + 2) * POLICY.size
        pad = cut - len(head) - 2 - len(gold) // 2
        filler = ""
        while len(filler) < pad:
            filler += rng.choice(fam.other_topic) + " "
        filler = filler[: max(0, pad)].rsplit(" ", 1)[0] + " " if pad > 0 else ""
        tail = _fill(rng, fam.other_topic, 3)
        return head + f"\n{filler}{gold} {tail}\n", query, gold
    if cause == "vocabulary":
        gold = _fact_sentence(fact, name, value)
        sections = [*normal, _section(fam, fact, gold, rng)]
        question = fact.paraphrase.format(code=code) + "?"
        return _doc(fam, title, intro, sections), question[0].upper() + question[1:], gold
    if cause == "label":
        lite, asked, *rest = fam.variants
        twin = _fact_sentence(fact, f"{name} {lite}", _figure(rng, fact))
        answer = _fact_sentence(fact, f"{name} {asked}", value)
        variants = [
            f"## {fam.variant_heading.format(section=fact.section, v=v)}\n\n"
            f"{_fill(rng, fam.filler, 2)} "
            + _fact_sentence(fact, f"{name} {v}", _figure(rng, fact))
            for v in rest
        ]  # fmt: skip
        sections = [
            *normal[:1],
            _section(fam, fact, answer, rng),
            *variants,
            *normal[1:],
            f"## {fam.variant_heading.format(section=fact.section, v=lite)}\n\n"
            f"{_fill(rng, fam.filler, 2)} {twin}",
        ]
        query = fam.ask.format(aspect=fact.aspect, name=f"{name} {asked}")
        return _doc(fam, title, intro, sections), query, twin
    if cause == "parse":
        how = fam.damage[i % len(fam.damage)] if fam.damage else i % 3
        how = 2 if fam.name == "trial" else how
        gold = _damage(_fact_sentence(fact, name, value), how, rng)
        sections = [*normal, _section(fam, fact, gold, rng)]
        return _doc(fam, title, intro, sections), query, gold
    # method: a short answer inside a long text about something else
    gold = _fact_sentence(fact, name, value)
    echo = fam.echo.format(aspect=fact.aspect, name=name, value=value, unit=fact.unit)
    story = [f"## Notes {j + 1}\n\n{_fill(rng, fam.other_topic, 7)}" for j in range(4)]
    sections = [*story[:2], f"{gold} {echo}", *story[2:]]
    return _doc(fam, title, intro, sections), query, gold


def _digest(fam: Family, fact: Fact, rng: random.Random) -> str:
    """A document all about one aspect, naming no subject: where a vector pulled toward
    the aspect by its whole window lands (a method case's displacer)."""
    lines = [
        _fact_sentence(fact, ref, _figure(rng, fact)) + " " + _fill(rng, fam.filler, 1)
        for ref in (f"{fam.ref} in the first survey", f"{fam.ref} in the pilot",
                    f"{fam.ref} in the second survey", f"{fam.ref} in the last edition")
    ]  # fmt: skip
    return _doc(
        fam,
        f"{fact.section} across the {fam.name} survey",
        "",
        [f"## {fact.section} {j + 1}\n\n{line}" for j, line in enumerate(lines)],
    )


def _check_vocabulary(sources: Mapping[str, str], queries: Sequence[BookQuery]) -> None:
    """A vocabulary case's code for its subject stands in no document (its
    construction), checked by the lexical index's own terms."""
    every = set().union(*(terms_of(t) for t in sources.values()))
    for q in queries:
        if q.cause != "vocabulary":
            continue
        for term in query_terms(q.subject):
            if term in every and not term.isdigit():
                raise AssertionError(f"{q.id}: {q.subject} stands in a document")


# -- measuring --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Agreement:
    """The suggestions against the constructed causes: ``matrix[truth][suggested]``."""

    matrix: Mapping[str, Mapping[str, int]]
    confidence: Mapping[str, int] = field(default_factory=dict)  # strong/weak/unclear count
    not_failed: int = 0  # queries no method failed
    set_apart: int = 0  # failures whose construction did not hold (see the module docstring)

    @property
    def total(self) -> int:
        return sum(sum(row.values()) for row in self.matrix.values())

    @property
    def agreed(self) -> int:
        return sum(row.get(c, 0) for c, row in self.matrix.items())

    @property
    def overall(self) -> float:
        return self.agreed / self.total if self.total else 0.0

    def per_cause(self) -> dict[str, float | None]:
        return {
            c: (row.get(c, 0) / sum(row.values()) if sum(row.values()) else None)
            for c, row in self.matrix.items()
        }

    def table(self) -> str:
        """The confusion matrix as text: truth as rows, suggestions as columns."""
        cols = [*CAUSES, "other"]
        lines = ["truth \\ suggested".ljust(18) + "".join(f"{c[:10]:>11}" for c in cols)
                 + "      n  agree"]  # fmt: skip
        for truth in CAUSES:
            row = self.matrix.get(truth, {})
            n = sum(row.values())
            share = f"{row.get(truth, 0) / n:6.0%}" if n else "     -"
            lines.append(truth.ljust(18) + "".join(f"{row.get(c, 0):>11}" for c in cols)
                         + f"{n:>7} {share}")  # fmt: skip
        lines.append(f"overall {self.agreed} of {self.total} ({self.overall:.0%}); "
                     f"{self.not_failed} queries did not fail; {self.set_apart} failures set "
                     "apart")  # fmt: skip
        return "\n".join(lines)


def measure(book: Casebook, run: Any, diagnoses: Mapping[str, Mapping[str, Any]]) -> Agreement:
    """Score ``diagnoses`` (``{method: {query id: Diagnosis}}`` of ``run``) against the
    casebook's causes: every failure (query x failing method) is one judgement."""
    truth = {q.id: q.cause for q in book.queries}
    matrix: dict[str, dict[str, int]] = {c: {} for c in CAUSES}
    confidence: dict[str, int] = {}
    not_failed = set_apart = 0
    for record in run.queries:
        cause = truth.get(record.id)
        if cause is None:
            continue
        failing = [m for m in run.methods if record.failed.get(m)]
        if not failing:
            not_failed += 1
            continue
        alone = len(failing) == 1 and len(run.methods) >= 3
        for method in failing:
            if (cause == "method") != alone:
                set_apart += 1
                continue
            found = diagnoses.get(method, {}).get(record.id)
            if found is None:
                continue
            row = matrix[cause]
            row[found.suggested] = row.get(found.suggested, 0) + 1
            confidence[found.confidence] = confidence.get(found.confidence, 0) + 1
    return Agreement(matrix=matrix, confidence=confidence, not_failed=not_failed,
                     set_apart=set_apart)  # fmt: skip


def casebook_documents(book: Casebook) -> list[Any]:
    """The casebook's documents, read as any markdown file is (``core.ingest``)."""
    return [load_document(text.encode(), name=name) for name, text in book.sources.items()]


def casebook_queries(book: Casebook) -> list[Any]:
    return [
        LabelledQuery(id=q.id, query=q.query, doc=q.doc, evidence=(Evidence(text=q.gold),))
        for q in book.queries
    ]


def run_casebook(
    book: Casebook, encoder: Any, *, methods: Sequence[str] = METHODS, embed: Any = None
) -> tuple[Any, dict[str, dict[str, Any]], Agreement]:
    """Evaluate the casebook, diagnose every failure, measure the agreement."""
    docs = casebook_documents(book)
    config = EvalConfig(policy=POLICY, methods=tuple(methods), ks=KS, resamples=10)
    run = run_eval(casebook_queries(book), docs, config, encoder=encoder, embed=embed)
    found = diagnose_methods(run, {d.doc_id: d for d in docs}, encoder=encoder, embed=embed)
    return run, found, measure(book, run, found)
