"""Judge packets: every failure of a run with what a careful reader needs, and no cause.

python make_packets.py RUN.json FILINGS/ PACKETS/
"""

import json
import sys
from pathlib import Path

from core.chunk import chunk_document
from core.chunk.policy_registry import policy_from_dict
from core.evaluate.run_file import load_run
from core.formats import parse_document
from core.formats.loading import load_document

run = load_run(sys.argv[1])
setdir = Path(sys.argv[2])
out = Path(sys.argv[3])
(out / "docs").mkdir(parents=True, exist_ok=True)
docs = {}
for p in sorted(q for q in setdir.iterdir() if q.suffix.lower() in (".pdf", ".md", ".txt")):
    d = load_document(p)
    docs[d.doc_id] = d
policy = policy_from_dict(run.policy)
chunks = {}
for did, d in docs.items():
    chunks[did] = chunk_document(d, parse_document(d).blocks, policy)
    (out / "docs" / f"{did}.txt").write_text(d.text)
packets = []
for q in run.queries:
    d = docs[q.doc_id]
    for m in run.methods:
        if not q.failed.get(m):
            continue
        gold = [
            {
                "char_start": g.char_start,
                "char_end": g.char_end,
                "page": g.page,
                "text": d.text[g.char_start : g.char_end],
            }
            for g in q.gold
        ]
        over = [
            c
            for c in chunks[q.doc_id]
            if any(c.char_start < g.char_end and g.char_start < c.char_end for g in q.gold)
        ]
        top = []
        for h in q.top.get(m, ())[:5]:
            c = run.chunks[h.chunk_id]
            top.append(
                {
                    "rank": h.rank,
                    "char_start": c.char_start,
                    "char_end": c.char_end,
                    "pages": list(c.pages),
                    "text": c.quote,
                }
            )
        packets.append(
            {
                "case": f"{q.id}::{m}",
                "query_id": q.id,
                "query": q.query,
                "doc": q.doc_id,
                "method": m,
                "k": run.text_k,
                "gold_rank_full_depth": {mm: q.full_ranks.get(mm) for mm in run.methods},
                "chunks_ranked": q.scope_size,
                "gold": gold,
                "chunks_holding_gold": [
                    {
                        "char_start": c.char_start,
                        "char_end": c.char_end,
                        "text": d.text[c.char_start : c.char_end],
                    }
                    for c in over
                ],
                "top_hits_of_this_method": top,
            }
        )
(out / "packets.jsonl").write_text("".join(json.dumps(p) + "\n" for p in packets))
print(len(packets), "failures;", {m: sum(p["method"] == m for p in packets) for m in run.methods})
print("policy", dict(run.policy))
