"""Glue of the Tune page: the sweep form, the background job, saved sweeps, cell links.

- ``init_state``: the page's session-state keys (``workbench.state.TuneKey``) at their
  defaults, once;
- sweeps are saved in ``sweeps/`` beside the index (``core.tune.save_sweep``) after every
  point, so a stopped or interrupted sweep resumes from its file; vectors and late token
  states come from the one on-disk cache every page and command shares
  (``core.embed.cache.shared_cache``);
- ``open_failures``: a cell's run saved with the Evaluate page's runs and opened there on
  that method's failures; ``open_boundaries``: the Chunks page set to the cell's policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from core import defaults
from core.chunk import chunk_document
from core.errors import ChunkscopeError
from core.evaluate import EvalConfig, save_run
from core.evaluate.cost import EvalCost, add_costs, estimate_cost
from core.evaluate.scoring import EmbedFn
from core.provenance.types import Chunk, ChunkPolicy, Document
from core.tune import (
    Cell,
    Sweep,
    load_sweep,
    parse_grid,
    parse_overlaps,
    parse_sizes,
    save_sweep,
    store_sweeps_dir,
)
from core.tune.curves import BestCell, PolicyBest, cut_by_window, edge_note
from core.tune.job import SweepJob
from workbench.documents import chunk_sets, parse_cache
from workbench.engine import jobs, run_files
from workbench.engine import resources as eng
from workbench.frame import roles
from workbench.state import (
    EvalKey,
    Key,
    TuneKey,
    overlap_widget,
    policy_widget,
    size_widget,
    tune_own_overlaps_widget,
    tune_own_sizes_widget,
    tune_sizes_widget,
    tune_unit_widget,
    unit_widget,
)
from workbench.widgets import controls
from workbench.widgets.wording import md

SIZES = {"tokens": [32, 64, 128, 256, 512], "chars": [200, 400, 800, 1600, 3200],
         "sentences": [1, 2, 3, 5, 8, 12]}  # fmt: skip
OVERLAPS = ["0", "10%", "20%", "50%"]
OWN_DEFAULTS = {  # the user's splitter: sizes and overlaps it is typically run at
    "chars": ([400, 800, 1200], ["0", "100"]),
    "tokens": ([128, 256, 512], ["0", "20"]),
    "sentences": ([2, 3, 5], ["0", "1"]),
}
SHOWN_METRICS = ("hit@1", "hit@5", "hit@10", "recall@10", "mrr", "ndcg@10")


def init_state() -> None:
    run_files.init_state()
    for key, default in ((TuneKey.JOB, None), (TuneKey.SWEEP, None), (TuneKey.CELL, None)):
        st.session_state.setdefault(key, default)


def sweeps_dir() -> Path:
    return run_files.runs_dir().parent / "sweeps"


@st.cache_resource(max_entries=4, show_spinner=False)
def _load(path: str, mtime: float) -> Sweep:
    return load_sweep(path)


def sweep_folders() -> list[Path]:
    """Where sweeps are listed from: ``sweeps/`` beside this session's index, and the
    store folder's ``sweeps/`` where ``chunkscope sweep`` keeps every sweep it runs
    (``core.tune.store_sweeps_dir``; the same folder unless the sidebar names another)."""
    return list(dict.fromkeys(p.resolve() for p in (sweeps_dir(), store_sweeps_dir())))


def saved_sweeps() -> dict[str, Sweep]:
    """Every sweep of the store, newest first (one entry per sweep id); a file that is not
    a sweep is left out."""
    files = [p for folder in sweep_folders() for p in folder.glob("sweep-*.json")]
    found: dict[str, Sweep] = {}
    for path in sorted(files, key=lambda p: -p.stat().st_mtime):
        try:
            sweep = _load(str(path), path.stat().st_mtime)
        except (ChunkscopeError, OSError):
            continue
        found.setdefault(sweep.sweep_id, sweep)
    return found


def sweep_label(sweep: Sweep) -> str:
    when = sweep.created_at.replace("T", " ")[:16]
    n = sweep.points[0].run.n_queries if sweep.points else 0
    return f"{when} · {len(sweep.points)} points · {', '.join(sweep.methods)} · {n} queries"


# -- running a sweep ---------------------------------------------------------------------


def grid_controls() -> list:
    """Our policy's row (policy, unit, sizes, overlaps) and, when a splitter of the user's is
    typed, its own row swept beside ours (or alone); the grid's points (``PolicyError``
    if impossible)."""
    from core.chunk import policy_registry as registry

    cells = st.columns([1.8, 1, 1.8, 1.4])  # "structure" was clipped at 1.4
    sweepable = [
        n for n in registry.policy_names()
        if not registry.get(n).fixed_boundaries and not registry.get(n).live
    ]  # fmt: skip
    if any(registry.get(n).fixed_boundaries for n in registry.policy_names()):
        st.caption(
            "Imported chunk sets have one size, their own: evaluate them beside these "
            "policies on Evaluate & triage, or sweep the splitter that made them below."
        )
    name = cells[0].segmented_control(
        "Policy", sweepable, default=defaults.POLICY, key=TuneKey.POLICY, required=True
    )
    spec = registry.get(name)
    units = spec.units
    first = "tokens" if "tokens" in units else spec.unit  # what the model counts
    unit = cells[1].segmented_control(
        "Unit", units, default=first, key=tune_unit_widget(name), required=True
    )
    options = SIZES[unit]
    picked = cells[2].multiselect(
        f"Sizes ({unit})", options, default=options[1:4], key=tune_sizes_widget(unit),
        accept_new_options=True, help="Pick or type any whole number (above 512 too).",
    )  # fmt: skip
    sizes = parse_sizes(",".join(str(s) for s in picked)) if picked else ()
    overlaps = cells[3].multiselect("Overlaps", OVERLAPS, default=["0"], key=TuneKey.OVERLAPS)
    _named_offer()
    own = st.text_input(
        "Your own splitter, swept beside it", key=TuneKey.LIVE_POLICY,
        placeholder="langchain:RecursiveCharacterTextSplitter",
        help="langchain:CLASS, llamaindex:CLASS, chonkie:CLASS or py:package.module:factory: "
        "its chunk_size and chunk_overlap are its sizes and overlaps, in its own unit",
    ).strip()  # fmt: skip
    ours = bool(sizes and overlaps)
    if own:
        ours = ours and st.checkbox(f"Sweep {name} beside it", value=True, key=TuneKey.BESIDE)
    grid = parse_grid([name], sorted(set(sizes)), overlaps, unit) if ours else []
    swept: list[tuple[str, tuple[int, ...]]] = [(unit, sizes)] if ours else []
    if own:
        mine, mine_unit, mine_sizes = _own_grid(registry.get(own).name)
        grid += mine
        swept.append((mine_unit, mine_sizes))
    window = model_window()
    if window is not None and any(u == "tokens" and max(z) > window for u, z in swept if z):
        st.caption(
            f"Sizes past the model's window ({window:,} tokens) are cut when embedded: the "
            "chart shades them and the table marks them."
        )
    return grid


def _named_offer() -> None:
    """A stored set whose rows name their splitter: a button puts it in the splitter box,
    swept at half, once and twice the set's size, at its overlap."""
    if st.session_state.get(TuneKey.LIVE_POLICY):
        return
    for set_name, named in chunk_sets.named_splitters().items():
        setting = f" at chunk_size {named['size']:,}" if named.get("size") is not None else ""
        left, right = st.columns([3, 1.2], vertical_alignment="center")
        left.caption(
            f"The imported set {md(set_name)} names its splitter: {md(named['policy'])}{setting}."
        )
        right.button(
            "Sweep its splitter", key=f"{TuneKey.TAKE_NAMED}{set_name}",
            icon=":material/tune:", on_click=_take_named, args=(named,),
        )  # fmt: skip
        if said := st.session_state.get(TuneKey.NAMED_FAILED):
            st.error(md(said), icon=":material/error:")
        return  # one offer: the newest pipeline's splitter is what a user sweeps


def _take_named(named: dict) -> None:
    from core.chunk import policy_registry as registry

    st.session_state.pop(TuneKey.NAMED_FAILED, None)
    try:
        spec = registry.get(named["policy"])
    except ChunkscopeError as exc:
        st.session_state[TuneKey.NAMED_FAILED] = str(exc)
        return
    st.session_state[TuneKey.LIVE_POLICY] = spec.name
    if (size := named.get("size")) is not None:
        sizes = sorted({max(1, size // 2), size, size * 2})
        st.session_state[tune_own_sizes_widget(spec.unit)] = sizes
        overlap = int(named.get("overlap") or 0)
        asked = [str(overlap)] if overlap < sizes[0] else ["0"]
        st.session_state[tune_own_overlaps_widget(spec.unit)] = asked


def _own_grid(name: str) -> tuple[list, str, tuple[int, ...]]:
    """The row of the user's splitter ``name`` (already resolved): its unit, sizes and
    overlaps, in the splitter's own unit (defaults 400/800/1200 characters × 0/100)."""
    from core.chunk import policy_registry as registry

    spec = registry.get(name)
    st.caption(md(spec.summary))
    cells = st.columns([1, 1.8, 1.4])
    unit = spec.unit
    if len(spec.units) > 1:
        unit = cells[0].segmented_control(
            "Its unit", spec.units, default=spec.unit, key=tune_unit_widget(name), required=True
        )
    else:
        cells[0].caption(f"Its unit: {unit}")
    sizes_offered, overlaps_offered = OWN_DEFAULTS.get(unit, OWN_DEFAULTS["chars"])
    picked = cells[1].multiselect(
        f"Its sizes ({unit})", sorted({*SIZES[unit], *sizes_offered}), default=sizes_offered,
        key=tune_own_sizes_widget(unit), accept_new_options=True,
        help="Its chunk_size (or the like): pick or type any whole number.",
    )  # fmt: skip
    sizes = parse_sizes(",".join(str(s) for s in picked)) if picked else ()
    overlaps = cells[2].multiselect(
        "Its overlaps", list(dict.fromkeys([*overlaps_offered, *OVERLAPS])),
        default=overlaps_offered, key=tune_own_overlaps_widget(unit), accept_new_options=True,
        help="Its chunk_overlap: a count in its unit (100) or a share of the size (20%).",
    )  # fmt: skip
    if not sizes or not overlaps:
        return [], unit, sizes
    return (
        parse_grid([name], sorted(set(sizes)), parse_overlaps(",".join(overlaps)), unit),
        unit,
        sizes,
    )


def model_window() -> int | None:
    """The model's content tokens (``max_seq_length`` less its special tokens), which a
    chunk must fit to be embedded whole; None for an encoder that does not say."""
    window = getattr(eng.encoder(), "content_tokens", None)
    return window if isinstance(window, int) else None


def embed_step() -> EmbedFn | None:
    """The index step of the sweep's methods (None: each method's registered one); the
    seam tests replace with a fake."""
    return None


@st.cache_resource(max_entries=8, ttl=600, show_spinner="Counting what is left to embed…")
def _cost(
    shas: tuple[str, ...],
    keys: tuple[str, ...],
    cached: int,
    _docs: Sequence[Document],
    _configs: Sequence[EvalConfig],
) -> EvalCost:
    counted: set[tuple[str, str]] = set()  # a sweep passes a document through late once
    costs = []
    for config in _configs:

        def chunker(doc: Document, policy: ChunkPolicy = config.policy) -> list[Chunk]:
            # the sweep's own chunking: no tokenizer
            return chunk_document(doc, parse_cache.parsed(doc, "fast", quiet=True).blocks, policy)

        costs.append(
            estimate_cost(
                _docs,
                config,
                encoder=eng.encoder(),
                cache=eng.vector_cache(),
                chunker=chunker,
                states_counted=counted,
            )  # fmt: skip
        )
    return add_costs(costs)


def sweep_cost(docs: list, grid: list, methods: list[str]) -> EvalCost | None:
    """What the sweep will embed over all its points, and about how long it takes."""
    try:
        configs = [EvalConfig(policy=g.policy, methods=tuple(methods)) for g in grid]
        keys = tuple(f"{c.policy.key}|{','.join(c.methods)}" for c in configs)
        cached = len(eng.vector_cache())
        return _cost(tuple(d.sha256 for d in docs), keys, cached, docs, configs)
    except (ChunkscopeError, ValueError):
        return None


def best_rows(
    best: dict[str, BestCell], sweep: Sweep, window: int | None = None
) -> list[dict[str, object]]:
    """Per metric, the best cell and its interval, and a verdict that never overstates: "no
    size is better than another at this sample" when a cell at another size reaches its
    interval; a note at an end of the sizes tried only for a clear best; a size past the
    model's window marked."""
    rows = []
    for metric, b in best.items():
        c = b.cell
        note = edge_note(sweep, c, window) if b.clear else None
        rows.append({
            "metric": metric, "best": round(float(c.metrics[metric] or 0.0), 3),
            "95% interval": f"{b.low:.3f}-{b.high:.3f}", "verdict": b.verdict(),
            "policy": c.policy.key, "method": c.method,
            "past window": "yes" if cut_by_window(c, window) else "",
            "note": note or "", "vectors": c.cost.vectors, "index s": round(c.cost.seconds, 2),
        })  # fmt: skip
    return rows


def policy_rows(bests: Sequence[PolicyBest], window: int | None = None) -> list[dict[str, object]]:
    """Each policy's best cell of one metric, side by side (highest mean first)."""
    rows = []
    for item in bests:
        b, c = item.best, item.best.cell
        rows.append({
            "policy": c.policy.name, "best cell": f"{c.policy.size:,} {c.policy.unit}, "
            f"overlap {c.overlap_asked}, {c.method}",
            b.metric: round(float(c.metrics[b.metric] or 0.0), 3),
            "95% interval": f"{b.low:.3f}-{b.high:.3f}",
            "apart from the others": "yes" if item.apart else "no: intervals overlap",
            "past window": "yes" if cut_by_window(c, window) else "",
        })  # fmt: skip
    return rows


def start_sweep(queries: list, docs: list, grid: list, methods: list[str]) -> None:
    """Start the sweep in the background; a saved sweep of the same inputs is resumed."""
    if not roles.require_editor("run sweeps"):
        return
    template = EvalConfig(policy=grid[0].policy, methods=tuple(methods), ks=defaults.KS)
    folder = sweeps_dir()
    folder.mkdir(parents=True, exist_ok=True)
    arguments = {
        "queries": queries, "docs": docs, "grid": grid, "template": template,
        "encoder": eng.encoder(), "cache": eng.vector_cache(),
        "resume": _resumable(folder), "embed": embed_step(),
    }  # fmt: skip

    def keep(sweep: Sweep) -> None:
        save_sweep(sweep, folder / f"{sweep.sweep_id}.json")

    job = SweepJob(arguments=arguments, on_point=keep)
    job.start()
    st.session_state[TuneKey.JOB] = job
    eng.register(docs)


def _resumable(folder: Path) -> Sweep | None:
    """The newest saved sweep: ``run_sweep`` keeps its points only if its identity matches."""
    files = sorted(folder.glob("sweep-*.json"), key=lambda p: -p.stat().st_mtime)
    return _load(str(files[0]), files[0].stat().st_mtime) if files else None


def job_panel() -> None:
    """Progress bar (real counts, time left) and a Stop button, polled twice a second;
    a finished sweep with points becomes the one shown."""
    job: SweepJob | None = st.session_state[TuneKey.JOB]
    jobs.job_panel(job, stop_label="Stop the sweep", on_done=_show_finished)


def _show_finished(job: SweepJob) -> None:
    done = job.result or job.stopped
    if done is not None and done.points:
        st.session_state[TuneKey.SWEEP] = done.sweep_id


# -- reading a sweep ---------------------------------------------------------------------


def cell_key(cell: Cell) -> str:
    return f"{cell.policy.key}|{cell.method}"


def take_click(event: object) -> None:
    """A clicked marker (``customdata = [policy key, method]``) selects its cell."""
    points = getattr(getattr(event, "selection", None), "points", None) or []
    for point in points:
        data = point.get("customdata") if isinstance(point, dict) else None
        if data and len(data) == 2:
            st.session_state[TuneKey.CELL] = f"{data[0]}|{data[1]}"
            return


def run_saved(sweep: Sweep, cell: Cell) -> bool:
    """Whether the cell's run is already among the Evaluate page's runs."""
    return (run_files.runs_dir() / f"{sweep.point(cell.policy.key).run.run_id}.json").is_file()


def open_failures(sweep: Sweep, cell: Cell) -> None:
    """Save the cell's run with the Evaluate page's runs and open it on that method (a
    viewer opens only a run an editor saved: saving writes beside the index)."""
    run = sweep.point(cell.policy.key).run
    folder = run_files.runs_dir()
    if not run_saved(sweep, cell):
        if not roles.require_editor("save a cell's run for the Evaluate page"):
            return
        folder.mkdir(parents=True, exist_ok=True)
        save_run(run, folder / f"{run.run_id}.json")
    st.session_state[EvalKey.RUN] = run.run_id
    st.session_state[EvalKey.TRIAGE_METHOD] = cell.method
    st.session_state[EvalKey.TRIAGE_POS] = None
    st.switch_page("pages/evaluate.py")


def open_boundaries(sweep: Sweep, cell: Cell, doc_id: str) -> None:
    """The Chunks page on ``doc_id`` with the cell's policy in its first panel."""
    p = cell.policy
    docs = run_files.documents_for(dict(sweep.identity["corpus"]))
    eng.register(list(docs.values()))
    low, high, _ = controls.UNIT_RANGES[p.unit]
    size = min(max(p.size, low), high)
    st.session_state[policy_widget("a")] = p.name
    st.session_state[unit_widget("a", p.name)] = p.unit
    st.session_state[size_widget("a", p.name, p.unit)] = size
    st.session_state[overlap_widget("a", p.name, p.unit)] = min(
        p.overlap, controls.overlap_limit(p.unit, size)[0]
    )
    st.session_state[Key.DOC] = doc_id
    st.switch_page("pages/chunks.py")
