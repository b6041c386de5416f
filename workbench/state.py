"""Every session-state key of the workbench, declared once.

One class per area; a key's value is the string Streamlit stores it under (widget and
form keys included), so two areas never share one. A value ending in ``_`` (or ``.``) is
a prefix: the keys made per document, slot or run start with it, and only the function
below its class builds them, so a key's shape is spelled once too.
``tests/test_workbench_state_keys.py`` holds that no other module of the workbench or the
pages spells a ``cs_`` key itself, that no two values here are equal, and that no prefix
of one area starts a key of another.
"""

from __future__ import annotations


class Key:
    """Session-state keys (declared once; ``init_state`` gives each its default)."""

    DOCS = "cs_docs"  # dict[doc_id, Document] read in this session
    NOTES = "cs_notes"  # list[Note] about the latest uploads (shown while still uploaded)
    REMOVED = "cs_removed"  # one line about a removed document, shown once
    PENDING = "cs_pending"  # dict[file name, bytes] waiting for a password
    SEEN_UPLOADS = "cs_seen_uploads"  # set of uploader file ids already read
    PREVIOUS = "cs_previous"  # dict[doc_id, list[sha256]] replaced versions
    DOC = "cs_doc"  # selected doc_id (sidebar picker)
    DOC_VERSION = "cs_doc_version"  # bumped when the app picks a document itself
    PAGE = "cs_page"  # current 1-based page on Parse/Chunks
    FULL_WIDTH = "cs_full_width"  # Parse/Chunks draw a portrait page across the full width
    PARSER = "cs_parser"
    PARSE_TIMES = "cs_parse_times"  # dict[(doc_id, sha, parser), elapsed_s]
    STORE_KIND = "cs_store_kind"  # "folder" | "server"
    STORE_ADDR = "cs_store_addr"
    REDIRECT = "cs_redirect"  # (page path, query params) to open once app.py has run
    FRAMED = "cs_framed"  # True while app.py runs a page inside its frame
    OCR_READ = "cs_ocr_read"  # the OCR policy this session's uploads were last read under
    PAGE_WIDGET = "cs_w_page_"  # + doc_id: the page picker (its value lives under PAGE)
    FULL_WIDTH_WIDGET = "cs_w_full_width_"  # + "parse" | "chunks" (value under FULL_WIDTH)
    PARSER_WIDGET = "cs_w_parser"  # the Parse page's parser choice (value under PARSER)
    LAYOUT_LIMIT_S = "cs_layout_limit_s"  # an editor's time limit for the layout model (s)
    LAYOUT_LIMIT_WIDGET = "cs_w_layout_limit_s"  # its number input (value under LAYOUT_LIMIT_S)


def page_widget(doc_id: str) -> str:
    """The page picker of one document (Parse and Chunks share it)."""
    return f"{Key.PAGE_WIDGET}{doc_id}"


def full_width_widget(where: str) -> str:
    """The "Page at full width" toggle of one page (``where``: "parse" or "chunks")."""
    return f"{Key.FULL_WIDTH_WIDGET}{where}"


class FrameKey:
    """Keys of the sidebar every page shares (``workbench/frame/sidebar.py``,
    ``workbench/documents/scans.py``)."""

    LINKED_DOC = "cs_linked_doc"  # the last ?doc= of a deep link the sidebar followed
    DOC_WIDGET = "cs_w_doc_"  # + Key.DOC_VERSION: the document picker (value under Key.DOC)
    STORE_KIND_WIDGET = "cs_w_store_kind"
    STORE_ADDR_WIDGET = "cs_w_store_addr"
    OCR_WIDGET = "cs_w_ocr_policy"


def doc_widget(version: int) -> str:
    """The sidebar's document picker, new whenever the app picks a document itself."""
    return f"{FrameKey.DOC_WIDGET}{version}"


class RoleKey:
    """Keys of the editor sign-in (``workbench/frame/roles.py``)."""

    ROLE = "cs_role"  # an EditorGrant once this session signed in; absent: a viewer
    KEY_INPUT = "cs_editor_key"  # the sign-in form's password box, emptied on every submit
    SIGN_IN_NOTE = "cs_sign_in_note"  # one line about the last wrong key, shown once
    SIGN_IN_FORM = "cs_sign_in"


class LibraryKey:
    """Widget keys of the Library page."""

    UPLOADER = "cs_uploader"
    REMOVE_PICK = "cs_remove_pick"
    REMOVE_GO = "cs_remove_go"


class ImportKey:
    """Keys of the chunk-set import and its audit (``workbench/documents/chunk_sets.py``)."""

    SHOWN = "cs_import_shown"  # name of the set whose audit the Library shows
    FILE_FORM = "cs_import_file"
    UPLOAD = "cs_import_upload"
    CHROMA_FORM = "cs_import_chroma"
    CHROMA_NAME = "cs_import_cn"
    PICK = "cs_import_pick"
    EVERY_CHUNK = "cs_import_all_"  # + set name: the audit's "also the aligned chunks" toggle
    SPLITTER_TAKE = "cs_import_take_splitter_"  # + slot: "Run its splitter live"
    SPLITTER_FAILED = "cs_import_splitter_failed_"  # + slot: why the named one cannot run
    CHECK = "cs_import_check_"  # + set name: "Check the claims now" of a pending set
    OPEN = "cs_import_open"  # the Library's "Import chunks" expander, open or not
    SAID = "cs_import_said"  # (set name, line): the last import's line, above its audit
    CHECKED = "cs_import_checked"  # set name -> (level, line): how its claim check ended


def every_chunk_widget(set_name: str) -> str:
    """The audit's toggle that lists every chunk of one imported set."""
    return f"{ImportKey.EVERY_CHUNK}{set_name}"


class SourceKey:
    """Keys of the Source page (``workbench/source/source_views.py``)."""

    UNLOCK_FORM = "cs_src_unlock_"  # + sha256 of the kept encrypted document
    SPAN_FORM = "cs_pick_span"
    PAGE = "cs_src_page"
    ZOOM = "cs_src_zoom"


def unlock_form(sha256: str) -> str:
    """The password form of one kept encrypted document."""
    return f"{SourceKey.UNLOCK_FORM}{sha256}"


class ParseKey:
    """Widget keys of the Parse page made per document."""

    KINDS = "cs_kinds_"  # + doc_id_parser: the block kinds shown
    PART = "cs_parse_part_"  # + doc_id: the part of a reflowable text shown
    TABLE = "cs_parse_table_"  # + doc_id_page: the blocks table


def kinds_widget(doc_id: str, parser: str) -> str:
    return f"{ParseKey.KINDS}{doc_id}_{parser}"


def parse_part_widget(doc_id: str) -> str:
    return f"{ParseKey.PART}{doc_id}"


def parse_table_widget(doc_id: str, page: int) -> str:
    return f"{ParseKey.TABLE}{doc_id}_{page}"


class ChunksKey:
    """Widget keys of the Chunks page (``slot``: "a", or "b" for the second policy)."""

    COMPARE = "cs_compare"  # the "Compare two policies" toggle
    PART = "cs_chunks_part_"  # + slot_doc_id: the part of a reflowable text shown
    CITE = "cs_cite_"  # + slot_policy key_page: the chunk opened in Source
    EXPORT = "cs_export_"  # + slot_shape: a download of the chunks
    SIZES = "cs_hist_"  # + slot: the chunk size chart


def chunks_part_widget(slot: str, doc_id: str) -> str:
    return f"{ChunksKey.PART}{slot}_{doc_id}"


def cite_widget(slot: str, policy_key: str, page: int) -> str:
    return f"{ChunksKey.CITE}{slot}_{policy_key}_{page}"


def chunks_export_widget(slot: str, shape: str) -> str:
    return f"{ChunksKey.EXPORT}{slot}_{shape}"


def sizes_chart(slot: str) -> str:
    return f"{ChunksKey.SIZES}{slot}"


class PolicyKey:
    """Widget keys of the chunking policy controls (``workbench/widgets/controls.py``), one set
    per slot ("a", "b", "index", ...) and policy; the Tune page opens a cell on the Chunks
    page by writing the same keys, so both build them here."""

    POLICY = "cs_policy_"  # + slot
    UNIT = "cs_unit_"  # + slot_policy
    SIZE = "cs_size_"  # + slot_policy_unit
    OVERLAP = "cs_overlap_"  # + slot_policy_unit
    OPTION = "cs_opt_"  # + option suffix_slot_policy
    LIVE = "cs_live_policy_"  # + slot: the user's own splitter typed there (KIND:TARGET)


def policy_widget(slot: str) -> str:
    return f"{PolicyKey.POLICY}{slot}"


def live_policy_widget(slot: str) -> str:
    """The text input of a splitter of the user's own (``KIND:TARGET``) in ``slot``."""
    return f"{PolicyKey.LIVE}{slot}"


def unit_widget(slot: str, policy: str) -> str:
    return f"{PolicyKey.UNIT}{slot}_{policy}"


def size_widget(slot: str, policy: str, unit: str) -> str:
    return f"{PolicyKey.SIZE}{slot}_{policy}_{unit}"


def overlap_widget(slot: str, policy: str, unit: str) -> str:
    return f"{PolicyKey.OVERLAP}{slot}_{policy}_{unit}"


def option_widget(option_suffix: str, slot: str, policy: str) -> str:
    return f"{PolicyKey.OPTION}{option_suffix}_{slot}_{policy}"


class EngineKey:
    """Session-state keys of the Compare and Evaluate pages (defaults in ``init_state``)."""

    SCOPE = "cs_cmp_scope"  # doc_id or ALL
    POLICY = "cs_cmp_policy"  # a policy key present in the index
    METHODS = "cs_cmp_methods"
    QUERY = "cs_cmp_query"
    QUERY_WIDGET = "cs_w_cmp_query"  # the text box; the query itself lives under QUERY
    K = "cs_cmp_k"
    RERANK = "cs_cmp_rerank"  # second stage on/off
    RERANK_METHOD = "cs_cmp_rerank_method"
    WEIGHTS = "cs_cmp_weights_"  # + feature name: a rerank weight input
    SLOPE_CHART = "cs_cmp_slope"
    SELECTED = "cs_cmp_selected"  # chunk_id inspected
    JOB = "cs_index_job"  # IndexJob | None
    INDEX_DOCS = "cs_index_docs"
    INDEX_METHODS = "cs_index_methods"
    CUSTOM_METHODS = "cs_methods_custom"  # fusions added in this session (canonical names)


def weight_widget(feature: str) -> str:
    """The Compare page's rerank weight input of one feature."""
    return f"{EngineKey.WEIGHTS}{feature}"


class MapKey:
    """Session-state keys of the Map page (``workbench/map/map_layout.py``)."""

    METHODS = "cs_map_methods"  # the dense methods drawn, one panel each
    KIND = "cs_map_kind"  # "pca" | "umap"
    COLOUR = "cs_map_colour"  # "document" | "heading" | "run"
    PICKED = "cs_map_picked"  # chunk_id clicked on the map
    GOLD = "cs_map_gold"  # (doc_id, sha256 | None, ((start, end), ...)) from a link, or None
    LINKED = "cs_map_linked"  # the last link applied (applied once, then the page moves on)
    K = "cs_map_k"  # the top k ringed (at most the cards Compare shows)
    RUN = "cs_map_run"
    RUN_METHOD = "cs_map_run_method"
    CHART = "cs_map_chart"
    QUERY_WIDGET = "cs_w_map_query"  # the query itself lives under EngineKey.QUERY


class DepthKey:
    """Session-state keys of the depth panel (``workbench/widgets/full_depth.py``)."""

    MARKED = "cs_marked_queries"  # list[LabelledQuery] marked in this session
    FIND = "cs_depth_find"  # words to find a chunk by
    FOUND = "cs_depth_found"  # chunk_id picked among the found ones
    CLICKED = "cs_depth_clicked"  # (inspected chunk_id, chunk_id clicked on its page)
    PICK = "cs_depth_pick"  # the page picker's chart


class AttributionKey:
    """Session-state keys of the context attribution (``workbench/compare/attribution.py``)."""

    RESULTS = "cs_attribution"  # {(query, chunk_id): (late, contextual)}
    GO = "cs_attr_go"


class EvalKey:
    """Session-state keys of the Evaluate page (defaults in ``init_state``)."""

    RUN = "cs_eval_run"  # run_id shown
    RUN_DOCS = "cs_eval_docs"  # dict[run_id, dict[doc_id, Document]] of runs made here
    QUERY_ID = "cs_eval_query"  # query opened from the scatter
    SOURCE = "cs_eval_source"  # demo | shared | upload
    CORPORA = "cs_eval_corpora"
    LIMIT = "cs_eval_limit"
    UPLOAD = "cs_eval_upload"
    METHODS = "cs_eval_methods"
    KS = "cs_eval_ks"
    SCOPE = "cs_eval_scope"
    TRIAGE_METHOD = "cs_triage_method"
    TRIAGE_SEED = "cs_triage_seed"
    TRIAGE_POS = "cs_triage_pos"  # 0-based position in the sample; None: first untagged
    SCATTER = "cs_eval_scatter"
    DELTA_PAIR = "cs_eval_delta_pair"
    NOTE = "cs_note_"  # + run_id_query_id: the triage note of one failure
    TAG = "cs_tag_"  # + cause: a triage button
    EXPORT = "cs_export."  # + file extension: a download of the tagged set
    FAILS = "cs_fails_"  # + "method_" or "cause_" + run_id: the failure table's filters
    LINKED_RUN = "cs_eval_linked_run"  # the ?run= a link opened (once, then the picker moves)
    STARTED_ON = "cs_eval_started_on"  # the CHUNKSCOPE_OPEN_RUN this session was sent to


def failure_note_key(run_id: str, query_id: str, method: str) -> str:
    """The triage note of one failure (a query under a method) of one run (a text box's
    key and its value)."""
    return f"{EvalKey.NOTE}{run_id}_{query_id}_{method}"


def tag_widget(cause: str) -> str:
    """The triage button that tags the failure shown with ``cause``."""
    return f"{EvalKey.TAG}{cause}"


def tagged_export_widget(suffix: str) -> str:
    """The download of the tagged set as ``suffix`` (".jsonl" or ".csv")."""
    return f"{EvalKey.EXPORT}{suffix.removeprefix('.')}"


class WhyKey:
    """Session-state keys of the failure's why and rank panels (``workbench/evaluate/why.py``);
    ``anchor`` names the failure shown (run id:query id)."""

    CLICKED = "cs_why_clicked"  # (run id:query id, chunk_id clicked on the page)
    FIND = "cs_why_find_"  # + anchor: words to find a chunk of the failure's document by
    FOUND = "cs_why_found_"  # + anchor: the chunk picked among those found
    PICK = "cs_why_pick"  # the page picker's chart
    RANK_ON = "cs_why_rank_"  # + run_id: toggle, rank any chunk (re-embeds another's run)
    AMENDED = "cs_why_amended"  # dict[run_id, dict[query_id, LabelledQuery]]: second gold
    SEEN = "cs_why_seen"  # (run, docs) of the failure on screen, for the panel's actions
    ATTRIBUTION = "cs_why_attr_"  # + run_id_query_id_method: the attribution button
    SECOND_GOLD = "cs_why_second_"  # + run_id_query_id: "Mark it as a second gold span"
    DOWNLOAD = "cs_why_dl_"  # + run_id: the amended query set's download


def why_find_widget(anchor: str) -> str:
    return f"{WhyKey.FIND}{anchor}"


def why_found_widget(anchor: str) -> str:
    return f"{WhyKey.FOUND}{anchor}"


def rank_on_widget(run_id: str) -> str:
    return f"{WhyKey.RANK_ON}{run_id}"


def attribution_widget(run_id: str, query_id: str, method: str) -> str:
    return f"{WhyKey.ATTRIBUTION}{run_id}_{query_id}_{method}"


def second_gold_widget(run_id: str, query_id: str) -> str:
    return f"{WhyKey.SECOND_GOLD}{run_id}_{query_id}"


def amended_download_widget(run_id: str) -> str:
    return f"{WhyKey.DOWNLOAD}{run_id}"


class RunImportKey:
    """Keys of the form that imports another retriever's run
    (``workbench/evaluate/run_import.py``)."""

    FORM = "cs_run_import"
    TRACE = "cs_run_import_trace"
    LABELS = "cs_run_import_labels"
    CHUNK_SET = "cs_run_import_set"
    SHAPE = "cs_run_import_shape"
    NAME = "cs_run_import_name"
    METHODS = "cs_run_import_methods"


class TuneKey:
    """Session-state keys of the Tune page."""

    JOB = "cs_tune_job"
    SWEEP = "cs_tune_sweep"  # sweep_id shown
    POLICY = "cs_tune_policy"
    LIVE_POLICY = "cs_tune_live_policy"  # the user's own splitter (KIND:TARGET), if typed
    OVERLAPS = "cs_tune_overlaps"
    METHODS = "cs_tune_methods"
    METRIC = "cs_tune_metric"
    SHOWN_POLICY = "cs_tune_shown_policy"
    SHOWN_OVERLAP = "cs_tune_shown_overlap"
    COST = "cs_tune_cost"
    CELL = "cs_tune_cell"  # "policy key|method"
    CHART = "cs_tune_chart"
    DOC = "cs_tune_doc"  # the document whose boundaries the page shows
    UNIT_WIDGET = "cs_tune_unit_"  # + policy: the unit picker of one policy
    SIZES_WIDGET = "cs_tune_sizes_"  # + unit: the sizes swept
    POLICY_BESTS = "cs_tune_policy_bests"  # the table of each policy's best cell
    TAKE_NAMED = "cs_tune_take_named_"  # + set name: "Sweep its splitter"
    NAMED_FAILED = "cs_tune_named_failed"  # why the splitter a set names cannot run
    BESIDE = "cs_tune_beside"  # our policy swept beside the user's splitter
    OWN_SIZES_WIDGET = "cs_tune_own_sizes_"  # + unit: the user's splitter's sizes
    OWN_OVERLAPS_WIDGET = "cs_tune_own_overlaps_"  # + unit: its overlaps


def tune_unit_widget(policy: str) -> str:
    return f"{TuneKey.UNIT_WIDGET}{policy}"


def tune_sizes_widget(unit: str) -> str:
    return f"{TuneKey.SIZES_WIDGET}{unit}"


def tune_own_sizes_widget(unit: str) -> str:
    return f"{TuneKey.OWN_SIZES_WIDGET}{unit}"


def tune_own_overlaps_widget(unit: str) -> str:
    return f"{TuneKey.OWN_OVERLAPS_WIDGET}{unit}"


class QaKey:
    """Session-state keys of the column mapping (one uploader a page, so one set)."""

    QUESTION = "cs_qa_question"
    EVIDENCE = "cs_qa_evidence"
    DOC = "cs_qa_doc"
    ID = "cs_qa_id"
    PAGE = "cs_qa_page"
    PAGE_BASE = "cs_qa_page_base"
    FILE = "cs_qa_file"  # (name, size, sha256) of the file mapped
    PREFIX = "cs_qa_"  # every key above starts with it (a new file drops them all)
