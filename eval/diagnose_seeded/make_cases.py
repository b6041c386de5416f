"""Write ``candidates.json``: seeded failures, one true cause each, with a repaired twin.

Each case is one Markdown document, one query and its gold text, the cause seeded in it
and a twin: the same document, query or label with only that defect repaired. A case is
kept for measuring (``verify.py``) when the naive method fails on the case (the gold not
in the top 3 of its document's 300-character chunks) and succeeds on the twin; a method
case is kept when naive fails and bm25 ranks the gold in the top 3.

Causes seeded (parse is not: these are text documents, and its repair reads a PDF page):

- boundary: the answering sentence cut across a chunk boundary between the subject's name
  and the asked quantity, beside sibling models whose sentences stand whole; twin: the
  document padded so the sentence lies whole in one chunk.
- context: five models in five sections under headings naming them, each section saying
  "the unit's <quantity> is ..."; the gold never names its model; twin: it does.
- vocabulary: the query names the quantity in words the document never uses; twin: the
  gold says it in the query's words.
- label: the gold points at the sentence beside the answer, under a heading that holds
  the query's words; twin: the label points at the answering sentence.
- method: a short rare code inside a long passage about something else; twin: bm25.

Run: ``python eval/diagnose_seeded/make_cases.py`` (seed fixed; writes beside itself).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 3901
PER_CAUSE = 8
CHUNK = 300

NAMES = [
    "Corvane",
    "Halbrook",
    "Mistral",
    "Orlen",
    "Pexa",
    "Quillon",
    "Ravent",
    "Sorel",
    "Tamsin",
    "Ulvar",
    "Vektor",
    "Wendal",
    "Yarrow",
    "Zephra",
    "Brisk",
    "Calder",
]
MODELS = ["Lite", "Max", "Pro", "Mini", "Flex", "Prime", "Core", "Plus", "Air"]
QUANTITIES = [
    ("maximum operating temperature", "{n} degrees Celsius", (60, 95)),
    ("rated input voltage", "{n} volts", (12, 48)),
    ("standby power draw", "{n} watts", (1, 9)),
    ("net weight", "{n} kilograms", (3, 40)),
    ("maximum flow rate", "{n} litres per minute", (8, 60)),
    ("noise level at full load", "{n} decibels", (35, 70)),
    ("battery runtime", "{n} hours", (4, 30)),
    ("maximum payload", "{n} kilograms", (50, 400)),
]
# the same quantities in words no query uses (vocabulary cases)
OTHER_WORDS = {
    "maximum operating temperature": "tolerates ambient heat up to {v}",
    "rated input voltage": "draws its supply at {v}",
    "standby power draw": "consumes {v} while idle",
    "net weight": "tips the scales at {v}",
    "maximum flow rate": "moves up to {v} through its pump",
    "noise level at full load": "hums at {v} when pushed hard",
    "battery runtime": "keeps going for {v} on one charge",
    "maximum payload": "can carry up to {v} of goods",
}
FILLER = [
    "{S} units ship in recyclable cardboard with moulded pulp inserts.",
    "Installers should leave clear space around the housing for servicing.",
    "The housing is finished in a powder coat that resists scratches and fading.",
    "Replacement parts are stocked by regional distributors for ten years.",
    "Each unit is inspected by hand before it leaves the factory floor.",
    "Cleaning requires only a damp cloth; solvents may dull the finish.",
    "The control panel uses large buttons that can be pressed with gloves on.",
    "Mounting brackets for walls and benches are sold separately.",
    "Our support line answers questions on weekdays during business hours.",
    "Firmware releases are announced in the customer newsletter.",
    "The front label carries the serial number and the production week.",
    "Training sessions for new operators can be booked through dealers.",
    "Accessories include a carrying strap, a dust cover and spare feet.",
    "The product family was first introduced at a trade fair in Hanover.",
    "Design work took place in the company's studio near the harbour.",
    "Customers in colder regions often order the optional insulation kit.",
]


def chunk_spans(text: str) -> list[tuple[int, int]]:
    """The spans the measuring policy (fixed, 300 characters, no overlap) cuts ``text`` at."""
    import hashlib

    from core.chunk import chunk_document
    from core.chunk.policy_registry import policy_from_dict
    from core.provenance.types import Document

    doc = Document(
        doc_id="x",
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        source="x.md",
        kind="text",
        text=text,
        title="x",
    )
    policy = policy_from_dict({"name": "fixed", "size": CHUNK, "overlap": 0, "unit": "chars"})
    return [(c.char_start, c.char_end) for c in chunk_document(doc, [], policy)]


def settle(text: str, gold: str, cut: int | None = None) -> str:
    """``text`` with spaces before ``gold`` until one chunk holds it whole (``cut`` None),
    or until a chunk ends within 3 characters of ``cut`` characters into it."""
    at = text.index(gold)
    for n in range(CHUNK + 1):
        t = text[:at] + " " * n + text[at:]
        a, b = at + n, at + n + len(gold)
        spans = chunk_spans(t)
        if cut is None and any(s <= a and b <= e for s, e in spans):
            return t
        if cut is not None and any(abs(e - (a + cut)) <= 3 for s, e in spans):
            return t
    raise AssertionError(f"no placement for {gold[:40]!r}")


def whole(text: str, gold: str) -> bool:
    a = text.index(gold)
    return any(s <= a and a + len(gold) <= e for s, e in chunk_spans(text))


def filler(rng: random.Random, subject: str, n: int) -> str:
    return " ".join(s.format(S=subject) for s in rng.sample(FILLER, n))


def value(rng: random.Random, q: tuple[str, str, tuple[int, int]]) -> str:
    return q[1].format(n=rng.randint(*q[2]))


def pad_to(text: str, at: int) -> str:
    """``text`` with spaces so the next character falls just after offset ``at`` (a fixed
    chunk there starts at ``at`` or a character later: it skips the spaces)."""
    return text + " " * max(0, at + 3 - len(text))


def boundary(rng: random.Random, i: int) -> dict:
    brand = rng.choice(NAMES)
    q, *others = rng.sample(QUANTITIES, 4)
    head = f"# {brand} product family\n\n{filler(rng, brand, 3)}\n\n## Specifications\n\n"
    models = rng.sample(MODELS, 5)
    gold_model = models[0]
    parts = [
        f"The {brand} {m} has a {q[0]} of {value(rng, q)}. {filler(rng, brand, 2)}"
        for m in models[1:]
    ]
    parts += [
        f"The {brand} {gold_model} has a {o[0]} of {value(rng, o)}. {filler(rng, brand, 2)}"
        for o in others
    ]
    rng.shuffle(parts)
    lead = f"{filler(rng, brand, 1)} For the {brand} {gold_model}, the"
    tail = f" {q[0]} is {value(rng, q)}, as measured by the test house."
    gold = f"For the {brand} {gold_model}, the{tail}"

    def build(cut_inside: bool) -> str:
        out = head
        for part in parts[:3]:
            out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK) + part + "\n\n"
        boundary_at = (len(out) // CHUNK + 2) * CHUNK
        if cut_inside:  # the chunk boundary falls between the subject and the quantity
            out = pad_to(out, boundary_at - len(lead)) + lead + tail
        else:
            out = pad_to(out, boundary_at) + lead + tail
        out += " " + filler(rng, brand, 2) + "\n\n"
        for part in parts[3:]:
            out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK) + part + "\n\n"
        return out

    state = rng.getstate()
    defect = build(True)
    rng.setstate(state)
    twin = build(False)
    query = f"What is the {q[0]} of the {brand} {gold_model}?"
    cut = len(gold) - len(tail) + 1  # between "the" and the quantity
    return {
        "id": f"boundary-{i}",
        "cause": "boundary",
        "title": f"{brand} product family",
        "text": settle(defect, gold, cut),
        "query": query,
        "gold": gold,
        "twin": {"text": settle(twin, gold)},
    }


def context(rng: random.Random, i: int) -> dict:
    brand = rng.choice(NAMES)
    models = rng.sample(MODELS, 8)
    gold_model = models[2]
    q = rng.choice(QUANTITIES)
    sections = []
    gold = twin_gold = ""
    for m in models:
        v = value(rng, q)
        sentence = f"The unit's {q[0]} is {v}, measured by the test house."
        if m == gold_model:
            gold = sentence
            twin_gold = f"The {brand} {m}'s {q[0]} is {v}, measured by the test house."
        # heading, then filler long enough that the sentence sits in a later chunk
        sections.append((m, f"## The {brand} {m}\n\n{filler(rng, brand, 4)}\n\n", sentence))

    def build(replace: str) -> str:
        out = f"# Product notes\n\n{filler(rng, brand, 2)}\n\n"
        for m, intro, sentence in sections:
            out += intro
            # the sentence starts a chunk: whole in one chunk, away from its heading
            out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
            out += (replace if m == gold_model else sentence) + "\n\n"
        return out

    state = rng.getstate()
    text = build(gold)
    rng.setstate(state)
    twin = build(twin_gold)
    return {
        "id": f"context-{i}",
        "cause": "context",
        "title": "Product notes",
        "text": settle(text, gold),
        "query": f"What is the {q[0]} of the {brand} {gold_model}?",
        "gold": gold,
        "twin": {"text": settle(twin, twin_gold), "gold": twin_gold},
    }


def vocabulary(rng: random.Random, i: int) -> dict:
    brand = rng.choice(NAMES)
    models = rng.sample(MODELS, 9)
    gold_model = models[0]
    code = f"{brand[:2].upper()}-{rng.randint(100, 999)}"  # the query's name, no document's
    q = rng.choice(QUANTITIES)
    v = value(rng, q)
    gold = f"The {brand} {gold_model} has a {q[0]} of {v}."
    twin_gold = f"The {brand} {gold_model} ({code}) has a {q[0]} of {v}."

    def build(g: str) -> str:
        out = f"# {brand} range overview\n\n{filler(rng, brand, 2)}\n\n## Performance\n\n"
        lines = [f"The {brand} {m} has a {q[0]} of {value(rng, q)}." for m in models[1:]]
        lines.insert(2, g)
        for line in lines:
            out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
            out += line + " " + filler(rng, brand, 2) + "\n\n"
        return out

    state = rng.getstate()
    text = build(gold)
    rng.setstate(state)
    twin = build(twin_gold)
    return {
        "id": f"vocabulary-{i}",
        "cause": "vocabulary",
        "title": f"{brand} range overview",
        "text": settle(text, gold),
        "query": f"What is the {q[0]} of the {code}?",
        "gold": gold,
        "twin": {"text": settle(twin, twin_gold), "gold": twin_gold},
    }


def label(rng: random.Random, i: int) -> dict:
    brand = rng.choice(NAMES)
    model = rng.choice(MODELS)
    subject = f"{brand} {model}"
    asked, beside, *others = rng.sample(QUANTITIES, 5)
    answer = f"The {subject} has a {asked[0]} of {value(rng, asked)}."
    wrong = (
        f"Operators are advised to log the {beside[0]} reading, "
        f"{value(rng, beside)} when new, once a month."
    )
    out = f"# {subject} manual\n\n{filler(rng, brand, 2)}\n\n"
    for o in others:
        out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
        out += f"The {subject} has a {o[0]} of {value(rng, o)}. {filler(rng, brand, 2)}\n\n"
    out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
    # the heading above the wrong gold holds the query's words
    out += f"## {asked[0].capitalize()} of the {subject}\n\n{answer} {filler(rng, brand, 1)}\n\n"
    out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
    out += f"{wrong} {filler(rng, brand, 2)}\n\n"
    out += filler(rng, brand, 3) + "\n"
    out = settle(settle(out, answer), wrong)
    return {
        "id": f"label-{i}",
        "cause": "label",
        "title": f"{subject} manual",
        "text": out,
        "query": f"What is the {asked[0]} of the {subject}?",
        "gold": wrong,
        "twin": {"gold": answer},
    }


def method(rng: random.Random, i: int) -> dict:
    brand = rng.choice(NAMES)
    model = rng.choice(MODELS)
    subject = f"{brand} {model}"
    code = f"{rng.choice('EFHKR')}{rng.randint(1000, 9999)}"
    fault = rng.choice(
        [
            "a blocked intake filter",
            "a loose sensor cable",
            "a worn drive belt",
            "a failed fan bearing",
        ]
    )
    gold = (
        f"Routine care keeps it running. {filler(rng, brand, 1)} "
        f"A reading of {code} points to {fault}. {filler(rng, brand, 1)}"
    )
    out = f"# {subject} service guide\n\n{filler(rng, brand, 2)}\n\n## Display\n\n"
    for other in [
        "an overheated motor",
        "a low supply voltage",
        "a door left open",
        "an empty water tank",
        "a jammed outlet",
    ]:
        out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
        out += (
            f"The {subject} display shows a warning when it detects {other}; "
            f"it clears once the cause is corrected.\n\n"
        )
    out = pad_to(out, (len(out) // CHUNK + 1) * CHUNK)
    out += gold + "\n\n" + filler(rng, brand, 3) + "\n"
    return {
        "id": f"method-{i}",
        "cause": "method",
        "title": f"{subject} service guide",
        "text": settle(out, gold),
        "query": f"What does {code} mean on the display?",
        "gold": gold,
        "twin": {"method": "bm25"},
    }


def main() -> None:
    rng = random.Random(SEED)
    cases = []
    for make in (boundary, context, vocabulary, label, method):
        for i in range(PER_CAUSE):
            case = make(rng, i)
            assert case["gold"] in case["text"], case["id"]
            twin = case["twin"]
            assert twin.get("gold", case["gold"]) in twin.get("text", case["text"]), case["id"]
            assert whole(case["text"], case["gold"]) == (case["cause"] != "boundary"), case["id"]
            assert whole(twin.get("text", case["text"]), twin.get("gold", case["gold"]))
            cases.append(case)
    out = Path(__file__).with_name("candidates.json")
    out.write_text(
        json.dumps(
            {"seed": SEED, "chunk": CHUNK, "k": 3, "cases": cases}, indent=1, ensure_ascii=False
        )
        + "\n",
        "utf-8",
    )
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
