/* Compiled steps of the PDF reader (``core.native.stext`` loads them; each has a
   Python twin that gives the same values and runs where this is not built):

   - page_lines: a structured-text page's lines, as rawdict would give them;
   - box_rows, bounds: a list of box tuples packed into an array, and their union;
   - table_cells, ruled_cells: the ruled-table finder's edges, merged edges and cells
     (``core.tables.ruled`` / ``core.tables.ruled_edges``).

   The text lines of a MuPDF structured-text page, read without building rawdict.

   page_lines(textpage, context, skip_quad_corrections, small_glyph_heights,
              subset_fontnames) returns the page's text blocks in order, each a list
   of lines, each line a tuple

       (text, boxes, bbox, horizontal, font, size, flags)

   holding exactly what PyMuPDF's ``get_text("rawdict")`` says of that line: the
   characters of its spans in order, one box tuple (x0, y0, x1, y1) per character,
   the line's bbox, whether its direction is (1, 0), and the font name, size and flags
   of its first span with the most characters. Blocks, lines, characters and spans
   are kept and dropped by the rules of rawdict (characters whose box misses the text
   page's media box are left out, a line's last span with an empty box is left out
   with its characters), and every box is computed as rawdict computes it, so the two
   readings are equal value for value (``tests/test_stext_native.py`` compares them
   on every page of the corpus). A line without characters is left out; a block
   without lines too.

   ``textpage`` and ``context`` are the addresses of the ``fz_stext_page`` and of the
   calling thread's ``fz_context`` (``core.native.stext`` passes them). The
   three flags are PyMuPDF's settings of the same names, read by the caller. The GIL
   is held throughout.  */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <mupdf/fitz.h>

#define FONT_SUPERSCRIPT 1
#define FONT_ITALIC 2
#define FONT_SERIFED 4
#define FONT_MONOSPACED 8
#define FONT_BOLD 16

typedef struct {
    int skip_quads;
    int small_glyphs;
    int subset_names;
} settings;

typedef struct {
    Py_UCS4 *codes;
    fz_rect *rects;
    Py_ssize_t size;
    Py_ssize_t cap;
} char_buffer;

static int reserve(char_buffer *buf, Py_ssize_t need)
{
    if (need <= buf->cap) return 0;
    Py_ssize_t cap = buf->cap ? buf->cap : 256;
    while (cap < need) cap *= 2;
    Py_UCS4 *codes = PyMem_Realloc(buf->codes, cap * sizeof(Py_UCS4));
    if (!codes) return -1;
    buf->codes = codes;
    fz_rect *rects = PyMem_Realloc(buf->rects, cap * sizeof(fz_rect));
    if (!rects) return -1;
    buf->rects = rects;
    buf->cap = cap;
    return 0;
}

static int overlap(fz_rect a, fz_rect b)
{
    return !(a.x0 >= b.x1 || a.y0 >= b.y1 || a.x1 <= b.x0 || a.y1 <= b.y0);
}

static const char *font_name(fz_context *ctx, fz_font *font, const settings *s)
{
    const char *name = fz_font_name(ctx, font);
    const char *plus = strchr(name, '+');
    if (s->subset_names || !plus || plus - name != 6) return name;
    return plus + 1;
}

static float ascender(fz_context *ctx, fz_font *font, const settings *s)
{
    return s->skip_quads ? 0.8f : fz_font_ascender(ctx, font);
}

static float descender(fz_context *ctx, fz_font *font, const settings *s)
{
    return s->skip_quads ? -0.2f : fz_font_descender(ctx, font);
}

/* The character's quad, corrected as PyMuPDF corrects it when the font's ascender and
   descender make no sense. */
static fz_quad char_quad(fz_context *ctx, fz_stext_line *line, fz_stext_char *ch,
                         const settings *s)
{
    if (s->skip_quads || line->wmode) return ch->quad;
    fz_font *font = ch->font;
    float asc = ascender(ctx, font, s);
    float dsc = descender(ctx, font, s);
    float fsize = ch->size;
    float asc_dsc = asc - dsc + FLT_EPSILON;
    if (asc_dsc >= 1 && s->small_glyphs == 0) return ch->quad;
    if (asc < 1e-3) {
        dsc = -0.1f;
        asc = 0.9f;
        asc_dsc = 1.0f;
    }
    if (s->small_glyphs || asc_dsc < 1) {
        dsc = dsc / asc_dsc;
        asc = asc / asc_dsc;
    }
    asc_dsc = asc - dsc;
    asc = asc * fsize / asc_dsc;
    dsc = dsc * fsize / asc_dsc;

    float c = line->dir.x, sn = line->dir.y;
    fz_matrix trm1 = {c, -sn, sn, c, 0, 0};
    fz_matrix trm2 = {c, sn, -sn, c, 0, 0};
    if (c == -1) {
        trm1.d = 1;
        trm2.d = 1;
    }
    fz_matrix xlate1 = {1, 0, 0, 1, -ch->origin.x, -ch->origin.y};
    fz_matrix xlate2 = {1, 0, 0, 1, ch->origin.x, ch->origin.y};
    fz_quad quad = fz_transform_quad(ch->quad, xlate1);
    quad = fz_transform_quad(quad, trm1);
    if (c == 1 && quad.ul.y > 0) {
        quad.ul.y = asc;
        quad.ur.y = asc;
        quad.ll.y = dsc;
        quad.lr.y = dsc;
    } else {
        quad.ul.y = -asc;
        quad.ur.y = -asc;
        quad.ll.y = -dsc;
        quad.lr.y = -dsc;
    }
    if (quad.ll.x < 0) {
        quad.ll.x = 0;
        quad.ul.x = 0;
    }
    float cwidth = quad.lr.x - quad.ll.x;
    if (cwidth < FLT_EPSILON) {
        int glyph = 0;
        float fwidth = 0;
        fz_try(ctx) {
            glyph = fz_encode_character(ctx, font, ch->c);
            if (glyph) fwidth = fz_advance_glyph(ctx, font, glyph, line->wmode);
        }
        fz_catch(ctx) {
            glyph = 0;
        }
        if (glyph) {
            quad.lr.x = quad.ll.x + fwidth * fsize;
            quad.ur.x = quad.lr.x;
        }
    }
    quad = fz_transform_quad(quad, trm2);
    return fz_transform_quad(quad, xlate2);
}

static fz_rect char_bbox(fz_context *ctx, fz_stext_line *line, fz_stext_char *ch,
                         const settings *s)
{
    fz_rect r = fz_rect_from_quad(char_quad(ctx, line, ch, s));
    if (line->wmode && r.y1 < r.y0 + ch->size) r.y0 = r.y1 - ch->size;
    return r;
}

static int font_flags(fz_context *ctx, fz_stext_line *line, fz_stext_char *ch)
{
    int flags = 0;
    if (line->wmode == 0 && line->dir.x == 1 && line->dir.y == 0)
        flags = ch->origin.y < line->first_char->origin.y - ch->size * 0.1f;
    fz_font *font = ch->font;
    flags += fz_font_is_italic(ctx, font) * FONT_ITALIC;
    flags += fz_font_is_serif(ctx, font) * FONT_SERIFED;
    flags += fz_font_is_monospaced(ctx, font) * FONT_MONOSPACED;
    flags += fz_font_is_bold(ctx, font) * FONT_BOLD;
    return flags;
}

static PyObject *rect_tuple(fz_rect r)
{
    PyObject *t = PyTuple_New(4);
    if (!t) return NULL;
    float v[4] = {r.x0, r.y0, r.x1, r.y1};
    for (int i = 0; i < 4; i++) {
        PyObject *f = PyFloat_FromDouble((double) v[i]);
        if (!f) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, f);
    }
    return t;
}

typedef struct {
    float size;
    int flags;
    unsigned char_flags;
    unsigned argb;
    const char *font;
} style;

/* One line as (text, boxes, bbox, horizontal, font, size, flags), or None. */
static PyObject *line_tuple(fz_context *ctx, fz_stext_line *line, fz_rect tp_rect,
                            int infinite, const settings *s, char_buffer *buf)
{
    buf->size = 0;
    fz_rect line_rect = fz_empty_rect, span_rect = fz_empty_rect;
    style old = {-1, 0, 0, 0, ""}, cur;
    Py_ssize_t span_start = 0;
    /* the main span: the first with the most characters */
    Py_ssize_t best_count = -1;
    style best = old;
    int open = 0;
    for (fz_stext_char *ch = line->first_char; ch; ch = ch->next) {
        fz_rect r = char_bbox(ctx, line, ch, s);
        if (!overlap(tp_rect, r) && !infinite) continue;
        cur.size = ch->size;
        cur.flags = font_flags(ctx, line, ch);
        cur.char_flags = ch->flags & ~FZ_STEXT_SYNTHETIC;
        cur.font = font_name(ctx, ch->font, s);
        cur.argb = ch->argb;
        if (cur.size != old.size || cur.flags != old.flags || cur.char_flags != old.char_flags
            || cur.argb != old.argb || strcmp(cur.font, old.font) != 0) {
            if (open) {
                line_rect = fz_union_rect(line_rect, span_rect);
                if (buf->size - span_start > best_count) {
                    best_count = buf->size - span_start;
                    best = old;
                }
            }
            old = cur;
            span_rect = r;
            span_start = buf->size;
            open = 1;
        }
        span_rect = fz_union_rect(span_rect, r);
        if (reserve(buf, buf->size + 1) < 0) {
            PyErr_NoMemory();
            return NULL;
        }
        int c = ch->c;
        buf->codes[buf->size] = (c < 0 || c > 0x10FFFF) ? 0xFFFD : (Py_UCS4) c;
        buf->rects[buf->size] = r;
        buf->size++;
    }
    if (open) {
        if (!fz_is_empty_rect(span_rect)) {
            line_rect = fz_union_rect(line_rect, span_rect);
            if (buf->size - span_start > best_count) {
                best_count = buf->size - span_start;
                best = old;
            }
        } else {
            buf->size = span_start;  /* the last span is dropped with its characters */
        }
    }
    if (buf->size == 0 || best_count < 0) Py_RETURN_NONE;

    PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf->codes, buf->size);
    PyObject *boxes = PyList_New(buf->size);
    PyObject *bbox = rect_tuple(line_rect);
    PyObject *font = PyUnicode_DecodeRawUnicodeEscape(best.font, (Py_ssize_t) strlen(best.font),
                                                      "replace");
    if (!font) {
        PyErr_Clear();
        font = PyUnicode_FromString("");
    }
    if (!text || !boxes || !bbox || !font) goto fail;
    for (Py_ssize_t i = 0; i < buf->size; i++) {
        PyObject *box = rect_tuple(buf->rects[i]);
        if (!box) goto fail;
        PyList_SET_ITEM(boxes, i, box);
    }
    int horizontal = line->dir.x == 1 && line->dir.y == 0;
    PyObject *out = Py_BuildValue("(NNNONdi)", text, boxes, bbox,
                                  horizontal ? Py_True : Py_False, font,
                                  (double) best.size, best.flags);
    return out;
fail:
    Py_XDECREF(text);
    Py_XDECREF(boxes);
    Py_XDECREF(bbox);
    Py_XDECREF(font);
    return NULL;
}

static PyObject *page_lines(PyObject *self, PyObject *args)
{
    unsigned long long page_address, context_address;
    settings s;
    if (!PyArg_ParseTuple(args, "KKppp", &page_address, &context_address, &s.skip_quads,
                          &s.small_glyphs, &s.subset_names))
        return NULL;
    if (!page_address || !context_address) {
        PyErr_SetString(PyExc_ValueError, "page_lines needs a text page and a context");
        return NULL;
    }
    fz_stext_page *tp = (fz_stext_page *) (uintptr_t) page_address;
    fz_context *ctx = (fz_context *) (uintptr_t) context_address;
    fz_rect tp_rect = tp->mediabox;
    int infinite = fz_is_infinite_rect(tp_rect);
    char_buffer buf = {NULL, NULL, 0, 0};
    PyObject *blocks = PyList_New(0);
    if (!blocks) return NULL;
    for (fz_stext_block *block = tp->first_block; block; block = block->next) {
        if (block->type != FZ_STEXT_BLOCK_TEXT) continue;
        if (!overlap(tp_rect, block->bbox) && !infinite) continue;
        PyObject *lines = PyList_New(0);
        if (!lines) goto fail;
        for (fz_stext_line *line = block->u.t.first_line; line; line = line->next) {
            if (fz_is_empty_rect(fz_intersect_rect(tp_rect, line->bbox)) && !infinite) continue;
            PyObject *item = line_tuple(ctx, line, tp_rect, infinite, &s, &buf);
            if (!item) {
                Py_DECREF(lines);
                goto fail;
            }
            if (item != Py_None && PyList_Append(lines, item) < 0) {
                Py_DECREF(item);
                Py_DECREF(lines);
                goto fail;
            }
            Py_DECREF(item);
        }
        if (PyList_GET_SIZE(lines) && PyList_Append(blocks, lines) < 0) {
            Py_DECREF(lines);
            goto fail;
        }
        Py_DECREF(lines);
    }
    PyMem_Free(buf.codes);
    PyMem_Free(buf.rects);
    return blocks;
fail:
    PyMem_Free(buf.codes);
    PyMem_Free(buf.rects);
    Py_DECREF(blocks);
    return NULL;
}

/* box_rows(lists, double) -> bytearray: the boxes of every list in ``lists`` (each a list
   of 4-tuples of floats), in order, as packed float32 (or float64) rows (a bytearray, so an array over it is writable). */
static PyObject *box_rows(PyObject *self, PyObject *args)
{
    PyObject *lists;
    int wide;
    if (!PyArg_ParseTuple(args, "O!p", &PyList_Type, &lists, &wide)) return NULL;
    Py_ssize_t total = 0, n = PyList_GET_SIZE(lists);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *boxes = PyList_GET_ITEM(lists, i);
        if (!PyList_Check(boxes)) {
            PyErr_SetString(PyExc_TypeError, "box_rows takes a list of lists of boxes");
            return NULL;
        }
        total += PyList_GET_SIZE(boxes);
    }
    size_t item = wide ? sizeof(double) : sizeof(float);
    PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t) (total * 4 * item));
    if (!out) return NULL;
    char *dst = PyByteArray_AS_STRING(out);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *boxes = PyList_GET_ITEM(lists, i);
        Py_ssize_t m = PyList_GET_SIZE(boxes);
        for (Py_ssize_t j = 0; j < m; j++, k++) {
            PyObject *box = PyList_GET_ITEM(boxes, j);
            if (!PyTuple_Check(box) || PyTuple_GET_SIZE(box) != 4) {
                Py_DECREF(out);
                PyErr_SetString(PyExc_TypeError, "a box is a tuple of four floats");
                return NULL;
            }
            for (int c = 0; c < 4; c++) {
                double v = PyFloat_AsDouble(PyTuple_GET_ITEM(box, c));
                if (v == -1.0 && PyErr_Occurred()) {
                    Py_DECREF(out);
                    return NULL;
                }
                if (wide)
                    ((double *) dst)[4 * k + c] = v;
                else
                    ((float *) dst)[4 * k + c] = (float) v;
            }
        }
    }
    return out;
}

/* ------------------------------------------------------------------------------------
   table_cells(vertical, horizontal, v_ids, h_ids, tol_x, tol_y, slack) -> list | None

   The cells of ``core.tables.ruled._cells(_intersections(edges, tol_x, tol_y))``, in
   its order, with its float operations: ``vertical`` holds the vertical edges as
   (x0, top, bottom) sorted by (x0, top), ``horizontal`` the horizontal ones as
   (top, x0, x1) sorted by (top, x0); ``v_ids``/``h_ids`` number each edge's box (equal
   boxes, equal numbers), which is what two points' edge sets are compared by. None
   when a value is NaN (the Python steps then decide). */

typedef struct {
    double x, y;
    Py_ssize_t v, h, order;
} crossing;

typedef struct {
    double x, y;
    Py_ssize_t start, end; /* its crossings, in crossing order */
} point;

static int by_xy(const void *a, const void *b)
{
    const crossing *p = a, *q = b;
    if (p->x < q->x) return -1;
    if (p->x > q->x) return 1;
    if (p->y < q->y) return -1;
    if (p->y > q->y) return 1;
    return (p->order > q->order) - (p->order < q->order);
}

static const point *row_points;
static int by_yx(const void *a, const void *b)
{
    const point *p = &row_points[*(const Py_ssize_t *) a];
    const point *q = &row_points[*(const Py_ssize_t *) b];
    if (p->y < q->y) return -1;
    if (p->y > q->y) return 1;
    if (p->x < q->x) return -1;
    if (p->x > q->x) return 1;
    Py_ssize_t i = *(const Py_ssize_t *) a, j = *(const Py_ssize_t *) b;
    return (i > j) - (i < j);
}

static int read_triples(PyObject *list, double *out, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            PyErr_SetString(PyExc_TypeError, "an edge is a tuple of three floats");
            return -1;
        }
        for (int c = 0; c < 3; c++) {
            double v = PyFloat_AsDouble(PyTuple_GET_ITEM(t, c));
            if (v == -1.0 && PyErr_Occurred()) return -1;
            out[3 * i + c] = v;
        }
    }
    return 0;
}

static int read_ids(PyObject *list, Py_ssize_t *out, Py_ssize_t n)
{
    if (PyList_GET_SIZE(list) != n) {
        PyErr_SetString(PyExc_ValueError, "one box number per edge");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyLong_AsSsize_t(PyList_GET_ITEM(list, i));
        if (out[i] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* The first index in [0, n) whose value is >= (left) or > (right) ``key``. */
static Py_ssize_t bisect(const double *values, Py_ssize_t stride, Py_ssize_t n, double key,
                         int right)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        double v = values[mid * stride];
        if (right ? !(key < v) : v < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct {
    const point *points;
    const crossing *crossings;
    const Py_ssize_t *v_ids, *h_ids;
} cell_state;

static int share(const cell_state *st, Py_ssize_t a, Py_ssize_t b, int vertical)
{
    const point *p = &st->points[a], *q = &st->points[b];
    const Py_ssize_t *ids = vertical ? st->v_ids : st->h_ids;
    for (Py_ssize_t i = p->start; i < p->end; i++) {
        Py_ssize_t id = ids[vertical ? st->crossings[i].v : st->crossings[i].h];
        for (Py_ssize_t j = q->start; j < q->end; j++)
            if (ids[vertical ? st->crossings[j].v : st->crossings[j].h] == id) return 1;
    }
    return 0;
}

static Py_ssize_t find_point(const point *points, Py_ssize_t n, double x, double y)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        const point *p = &points[mid];
        if (p->x < x || (p->x == x && p->y < y))
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && points[lo].x == x && points[lo].y == y) ? lo : -1;
}

/* The cells of sorted edges given as arrays: V rows (x0, top, bottom), H rows
   (top, x0, x1), box numbers per edge; no NaN among them. A new list, or NULL. */
static PyObject *cells_of(const double *V, Py_ssize_t nv, const double *H, Py_ssize_t nh,
                          const Py_ssize_t *v_ids, const Py_ssize_t *h_ids, double tol_x,
                          double tol_y, double slack)
{
    PyObject *out = NULL;
    crossing *cr = NULL;
    point *pts = NULL;
    Py_ssize_t *row_order = NULL, *row_pos = NULL, *row_end = NULL, *col_end = NULL;
    Py_ssize_t ncr = 0, cap = 0, npts = 0;

    /* the crossings, in the order the Python loop finds them */
    for (Py_ssize_t i = 0; i < nv; i++) {
        double x = V[3 * i], top = V[3 * i + 1], bottom = V[3 * i + 2];
        Py_ssize_t lo = bisect(H, 3, nh, top - tol_y - slack, 0);
        Py_ssize_t hi = bisect(H, 3, nh, bottom + tol_y + slack, 1);
        for (Py_ssize_t j = lo; j < hi; j++) {
            double htop = H[3 * j], hx0 = H[3 * j + 1], hx1 = H[3 * j + 2];
            int meets = top <= htop + tol_y && bottom >= htop - tol_y;
            if (!(meets && hx0 - tol_x <= x && x <= hx1 + tol_x)) continue;
            if (ncr == cap) {
                cap = cap ? 2 * cap : 256;
                crossing *grown = PyMem_Realloc(cr, cap * sizeof(crossing));
                if (!grown) {
                    PyErr_NoMemory();
                    goto done;
                }
                cr = grown;
            }
            cr[ncr] = (crossing){x, htop, i, j, ncr};
            ncr++;
        }
    }
    out = PyList_New(0);
    if (!out || ncr == 0) goto done;
    qsort(cr, ncr, sizeof(crossing), by_xy);

    /* the points, sorted by (x, y); a point keeps its first crossing's coordinates */
    pts = PyMem_Malloc(ncr * sizeof(point));
    row_order = PyMem_Malloc(ncr * sizeof(Py_ssize_t));
    row_pos = PyMem_Malloc(ncr * sizeof(Py_ssize_t));
    row_end = PyMem_Malloc(ncr * sizeof(Py_ssize_t));
    col_end = PyMem_Malloc(ncr * sizeof(Py_ssize_t));
    if (!pts || !row_order || !row_pos || !row_end || !col_end) {
        PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    for (Py_ssize_t k = 0; k < ncr;) {
        Py_ssize_t e = k + 1;
        while (e < ncr && cr[e].x == cr[k].x && cr[e].y == cr[k].y) e++;
        /* the representation the dict keeps: the crossing found first */
        Py_ssize_t first = k;
        for (Py_ssize_t m = k + 1; m < e; m++)
            if (cr[m].order < cr[first].order) first = m;
        pts[npts++] = (point){cr[first].x, cr[first].y, k, e};
        k = e;
    }
    for (Py_ssize_t k = npts; k-- > 0;)
        col_end[k] = (k + 1 < npts && pts[k + 1].x == pts[k].x) ? col_end[k + 1] : k + 1;
    for (Py_ssize_t k = 0; k < npts; k++) row_order[k] = k;
    row_points = pts;
    qsort(row_order, npts, sizeof(Py_ssize_t), by_yx);
    for (Py_ssize_t r = npts; r-- > 0;) {
        row_pos[row_order[r]] = r;
        int same = r + 1 < npts && pts[row_order[r + 1]].y == pts[row_order[r]].y;
        row_end[r] = same ? row_end[r + 1] : r + 1;
    }

    cell_state st = {pts, cr, v_ids, h_ids};
    for (Py_ssize_t k = 0; k + 1 < npts; k++) {
        int found = 0;
        for (Py_ssize_t d = k + 1; d < col_end[k] && !found; d++) {
            if (!share(&st, k, d, 1)) continue;
            for (Py_ssize_t r = row_pos[k] + 1; r < row_end[row_pos[k]]; r++) {
                Py_ssize_t right = row_order[r];
                if (!share(&st, k, right, 0)) continue;
                double cx = pts[right].x, cy = pts[d].y;
                Py_ssize_t corner = find_point(pts, npts, cx, cy);
                if (corner < 0 || !share(&st, corner, right, 1) || !share(&st, corner, d, 0))
                    continue;
                PyObject *cell = Py_BuildValue("(dddd)", pts[k].x, pts[k].y, cx, cy);
                if (!cell || PyList_Append(out, cell) < 0) {
                    Py_XDECREF(cell);
                    Py_CLEAR(out);
                    goto done;
                }
                Py_DECREF(cell);
                found = 1;
                break;
            }
        }
    }
done:
    PyMem_Free(cr);
    PyMem_Free(pts);
    PyMem_Free(row_order);
    PyMem_Free(row_pos);
    PyMem_Free(row_end);
    PyMem_Free(col_end);
    return out;
}

static PyObject *table_cells(PyObject *self, PyObject *args)
{
    PyObject *vlist, *hlist, *vid_list, *hid_list;
    double tol_x, tol_y, slack;
    if (!PyArg_ParseTuple(args, "O!O!O!O!ddd", &PyList_Type, &vlist, &PyList_Type, &hlist,
                          &PyList_Type, &vid_list, &PyList_Type, &hid_list, &tol_x, &tol_y,
                          &slack))
        return NULL;
    Py_ssize_t nv = PyList_GET_SIZE(vlist), nh = PyList_GET_SIZE(hlist);
    PyObject *out = NULL;
    double *V = PyMem_Malloc((3 * nv + 1) * sizeof(double));
    double *H = PyMem_Malloc((3 * nh + 1) * sizeof(double));
    Py_ssize_t *v_ids = PyMem_Malloc((nv + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *h_ids = PyMem_Malloc((nh + 1) * sizeof(Py_ssize_t));
    if (!V || !H || !v_ids || !h_ids) {
        PyErr_NoMemory();
        goto done;
    }
    if (read_triples(vlist, V, nv) < 0 || read_triples(hlist, H, nh) < 0) goto done;
    if (read_ids(vid_list, v_ids, nv) < 0 || read_ids(hid_list, h_ids, nh) < 0) goto done;
    for (Py_ssize_t i = 0; i < 3 * nv; i++)
        if (V[i] != V[i]) goto none;
    for (Py_ssize_t i = 0; i < 3 * nh; i++)
        if (H[i] != H[i]) goto none;
    out = cells_of(V, nv, H, nh, v_ids, h_ids, tol_x, tol_y, slack);
    goto done;
none:
    out = Py_None;
    Py_INCREF(out);
done:
    PyMem_Free(V);
    PyMem_Free(H);
    PyMem_Free(v_ids);
    PyMem_Free(h_ids);
    return out;
}

/* ------------------------------------------------------------------------------------
   ruled_cells(paths, boxes, clip, snap_x, snap_y, join_x, join_y, min_length,
               tol_x, tol_y, slack) -> list | None

   ``core.tables.ruled``'s path from a page's drawings to the finder's cells in one call:
   the edge records of ``ruled_edges.drawing_edges`` (``paths``: ``get_cdrawings()``;
   ``boxes``: the joined drawing boxes that hold a character, which that function
   computes first; ``clip``: the page rect), ``ruled_edges.merged_edges`` on them, then
   ``table_cells``. Each step keeps the Python steps' order and float operations. None
   when a drawing is not in the expected shape or a value is NaN (the Python steps then
   decide). */

typedef struct {
    double x0, x1, top, bottom, width, height;
    int h;
} edge;

typedef struct {
    edge *e;
    Py_ssize_t n, cap;
    double cx0, cy0, cx1, cy1, snap_x, snap_y;
    int failed;
} edge_list;

static double py_min(double a, double b) { return b < a ? b : a; }
static double py_max(double a, double b) { return b > a ? b : a; }

static void add_edge(edge_list *l, double p1x, double p1y, double p2x, double p2y)
{
    if (!(fabs(p1x - p2x) <= l->snap_x || fabs(p1y - p2y) <= l->snap_y)) return;
    double x0 = py_min(p1x, p2x), x1 = py_max(p1x, p2x);
    double y0 = py_min(p1y, p2y), y1 = py_max(p1y, p2y);
    if (x0 > l->cx1 || x1 < l->cx0 || y0 > l->cy1 || y1 < l->cy0) return;
    x0 = py_max(x0, l->cx0);
    x1 = py_min(x1, l->cx1);
    y0 = py_max(y0, l->cy0);
    y1 = py_min(y1, l->cy1);
    double width = x1 - x0, height = y1 - y0;
    if (width == height && height == 0) return;
    if (l->n == l->cap) {
        Py_ssize_t cap = l->cap ? 2 * l->cap : 256;
        edge *grown = PyMem_Realloc(l->e, cap * sizeof(edge));
        if (!grown) {
            l->failed = 1;
            return;
        }
        l->e = grown;
        l->cap = cap;
    }
    l->e[l->n++] = (edge){x0, x1, y0, y1, width, height, y0 == y1};
}

static void rect_edges(edge_list *l, double x0, double y0, double x1, double y1,
                       double min_length)
{
    if (x1 < x0) {
        double t = x0;
        x0 = x1;
        x1 = t;
    }
    if (y1 < y0) {
        double t = y0;
        y0 = y1;
        y1 = t;
    }
    double width = x1 - x0, height = y1 - y0;
    if ((width <= min_length && width < height) || (height <= min_length && height < width)) {
        if (width < height) {
            double x = fabs(x1 + x0) / 2;
            add_edge(l, x, y0, x, y1);
        } else {
            double y = fabs(y1 + y0) / 2;
            add_edge(l, x0, y, x1, y);
        }
        return;
    }
    add_edge(l, x0, y0, x0, y1);
    add_edge(l, x0, y1, x1, y1);
    add_edge(l, x1, y1, x1, y0);
    add_edge(l, x1, y0, x0, y0);
}

/* Doubles out of a tuple of ``n`` numbers; 0 on success. */
static int numbers(PyObject *t, double *out, Py_ssize_t n)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < n) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(t, i));
        if (out[i] == -1.0 && PyErr_Occurred()) return -1;
        if (out[i] != out[i]) return -1;
    }
    return 0;
}

static int point_of(PyObject *t, double *xy) { return numbers(t, xy, 2); }

static int kind_is(PyObject *item, const char *kind)
{
    PyObject *k = PyTuple_GET_ITEM(item, 0);
    return PyUnicode_Check(k) && PyUnicode_CompareWithASCIIString(k, kind) == 0;
}

/* The edge records of one path, in ``drawing_edges``' order; -1 when its shape is
   unexpected. */
static int path_edges(edge_list *l, PyObject *path, double min_length)
{
    if (!PyDict_Check(path)) return -1;
    PyObject *items = PyDict_GetItemString(path, "items");
    if (!items) return 0;
    PyObject *seq = PySequence_Fast(items, "items");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **it = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyTuple_Check(it[i]) || PyTuple_GET_SIZE(it[i]) < 2) goto bad;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = it[i];
        if (kind_is(item, "l")) {
            double a[2], b[2];
            if (PyTuple_GET_SIZE(item) < 3 || point_of(PyTuple_GET_ITEM(item, 1), a) < 0
                || point_of(PyTuple_GET_ITEM(item, 2), b) < 0)
                goto bad;
            add_edge(l, a[0], a[1], b[0], b[1]);
        } else if (kind_is(item, "re")) {
            double r[4];
            if (numbers(PyTuple_GET_ITEM(item, 1), r, 4) < 0) goto bad;
            rect_edges(l, r[0], r[1], r[2], r[3], min_length);
        } else if (kind_is(item, "qu")) {
            PyObject *q = PyTuple_GET_ITEM(item, 1);
            double c[4][2];
            if (!PyTuple_Check(q) || PyTuple_GET_SIZE(q) < 4) goto bad;
            for (int k = 0; k < 4; k++)
                if (point_of(PyTuple_GET_ITEM(q, k), c[k]) < 0) goto bad;
            /* ul, ur, ll, lr: (ul, ll), (ll, lr), (lr, ur), (ur, ul) */
            add_edge(l, c[0][0], c[0][1], c[2][0], c[2][1]);
            add_edge(l, c[2][0], c[2][1], c[3][0], c[3][1]);
            add_edge(l, c[3][0], c[3][1], c[1][0], c[1][1]);
            add_edge(l, c[1][0], c[1][1], c[0][0], c[0][1]);
        }
    }
    PyObject *closed = PyDict_GetItemString(path, "closePath");
    int close = closed ? PyObject_IsTrue(closed) : 0;
    if (close < 0) goto bad;
    if (close && n && kind_is(it[0], "l") && kind_is(it[n - 1], "l")) {
        double a[2], b[2];
        if (PyTuple_GET_SIZE(it[n - 1]) < 3 || point_of(PyTuple_GET_ITEM(it[n - 1], 2), a) < 0
            || point_of(PyTuple_GET_ITEM(it[0], 1), b) < 0)
            goto bad;
        add_edge(l, a[0], a[1], b[0], b[1]);
    }
    Py_DECREF(seq);
    return 0;
bad:
    Py_DECREF(seq);
    return -1;
}

/* ``_snapped``: positions clustered where consecutive distinct values lie within
   ``tol``; each edge moved by its cluster's average minus its own position. ``low`` and
   ``high`` pick x0/x1 (vertical) or top/bottom (horizontal). Edges come out cluster by
   cluster, in input order within one. */
static double *low_of(edge *e, int vertical) { return vertical ? &e->x0 : &e->top; }
static double *high_of(edge *e, int vertical) { return vertical ? &e->x1 : &e->bottom; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static Py_ssize_t find_value(const double *values, Py_ssize_t n, double v)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (values[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* builtins.sum, taken when the module is imported */
static PyObject *builtin_sum;

/* The sum of ``n`` values in order, by the running interpreter's own ``sum()``: from
   Python 3.12 it adds floats with a compensation term (Neumaier), before that left to
   right, and the Python steps take their averages with it. 0, or -1 with an exception
   set. */
static int python_sum(const double *v, Py_ssize_t n, double *out)
{
    PyObject *values = PyTuple_New(n);
    if (!values) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyFloat_FromDouble(v[i]);
        if (!x) {
            Py_DECREF(values);
            return -1;
        }
        PyTuple_SET_ITEM(values, i, x);
    }
    PyObject *total = PyObject_CallOneArg(builtin_sum, values);
    Py_DECREF(values);
    if (!total) return -1;
    *out = PyFloat_AsDouble(total);
    Py_DECREF(total);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* 0, or -1 with an exception set. */
static int snapped(edge *e, Py_ssize_t n, int vertical, double tol, edge *out)
{
    if (n == 0) return 0;
    double *values = PyMem_Malloc(n * sizeof(double));
    Py_ssize_t *cluster = PyMem_Malloc(n * sizeof(Py_ssize_t));
    Py_ssize_t *count = PyMem_Calloc(n, sizeof(Py_ssize_t));
    double *sum = PyMem_Calloc(n, sizeof(double));
    double *grouped = PyMem_Malloc(n * sizeof(double));
    Py_ssize_t *start = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *fill = PyMem_Malloc(n * sizeof(Py_ssize_t));
    Py_ssize_t *of_value = PyMem_Malloc(n * sizeof(Py_ssize_t));
    int rc = -1;
    if (!values || !cluster || !count || !sum || !grouped || !start || !fill || !of_value) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) values[i] = *low_of(&e[i], vertical);
    qsort(values, n, sizeof(double), cmp_double);
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (distinct == 0 || values[i] != values[distinct - 1]) values[distinct++] = values[i];
    Py_ssize_t k = -1;
    for (Py_ssize_t i = 0; i < distinct; i++) {
        if (i == 0 || !(values[i] <= values[i - 1] + tol)) k++;
        of_value[i] = k;
    }
    Py_ssize_t clusters = k + 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        cluster[i] = of_value[find_value(values, distinct, *low_of(&e[i], vertical))];
        count[cluster[i]]++;
    }
    start[0] = 0;
    for (Py_ssize_t c = 0; c < clusters; c++) start[c + 1] = start[c] + count[c];
    /* each cluster's positions in input order, summed as Python's sum() adds them */
    for (Py_ssize_t c = 0; c < clusters; c++) fill[c] = start[c];
    for (Py_ssize_t i = 0; i < n; i++) grouped[fill[cluster[i]]++] = *low_of(&e[i], vertical);
    for (Py_ssize_t c = 0; c < clusters; c++)
        if (python_sum(grouped + start[c], count[c], &sum[c]) < 0) goto done;
    for (Py_ssize_t c = 0; c < clusters; c++) fill[c] = start[c];
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t c = cluster[i];
        double average = sum[c] / (double) count[c];
        edge moved = e[i];
        double shift = average - *low_of(&e[i], vertical);
        *low_of(&moved, vertical) = *low_of(&e[i], vertical) + shift;
        *high_of(&moved, vertical) = *high_of(&e[i], vertical) + shift;
        out[fill[c]++] = moved;
    }
    rc = 0;
done:
    PyMem_Free(values);
    PyMem_Free(cluster);
    PyMem_Free(count);
    PyMem_Free(sum);
    PyMem_Free(grouped);
    PyMem_Free(start);
    PyMem_Free(fill);
    PyMem_Free(of_value);
    return rc;
}

static const edge *sort_edges;

/* Keys u and v compared in order, then the indices: a stable order for qsort. */
static int ordered(const double *u, const double *v, int n, Py_ssize_t i, Py_ssize_t j)
{
    for (int k = 0; k < n; k++)
        if (u[k] != v[k]) return u[k] < v[k] ? -1 : 1;
    return (i > j) - (i < j);
}

#define EDGE_ORDER(name, n, ...)                                                     \
    static int name(const void *a, const void *b)                                    \
    {                                                                                \
        Py_ssize_t i = *(const Py_ssize_t *) a, j = *(const Py_ssize_t *) b;         \
        const edge *e = &sort_edges[i];                                              \
        double u[n] = {__VA_ARGS__};                                                 \
        e = &sort_edges[j];                                                          \
        double v[n] = {__VA_ARGS__};                                                 \
        return ordered(u, v, n, i, j);                                               \
    }

/* ("h", top) before ("v", x0), as ``_group_of`` sorts */
EDGE_ORDER(by_group, 2, e->h ? 0.0 : 1.0, e->h ? e->top : e->x0)
/* an edge's start along its line: x0 across, top down */
EDGE_ORDER(by_low, 1, e->h ? e->x0 : e->top)
EDGE_ORDER(by_x_top, 2, e->x0, e->top)
EDGE_ORDER(by_top_x, 2, e->top, e->x0)

/* Box numbers of edges[order[0..n)] (equal boxes, equal numbers), in that order. */
static const Py_ssize_t *box_order;
static int by_box_at(const void *a, const void *b)
{
    Py_ssize_t i = *(const Py_ssize_t *) a, j = *(const Py_ssize_t *) b;
    const edge *p = &sort_edges[box_order[i]], *q = &sort_edges[box_order[j]];
    double u[4] = {p->x0, p->top, p->x1, p->bottom}, v[4] = {q->x0, q->top, q->x1, q->bottom};
    return ordered(u, v, 4, i, j);
}

static int same_box(const edge *p, const edge *q)
{
    return p->x0 == q->x0 && p->top == q->top && p->x1 == q->x1 && p->bottom == q->bottom;
}

static int box_numbers(const edge *edges, const Py_ssize_t *order, Py_ssize_t n,
                       Py_ssize_t *ids)
{
    Py_ssize_t *at = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    if (!at) return -1;
    for (Py_ssize_t i = 0; i < n; i++) at[i] = i;
    sort_edges = edges;
    box_order = order;
    qsort(at, n, sizeof(Py_ssize_t), by_box_at);
    Py_ssize_t run = -1;
    for (Py_ssize_t r = 0; r < n; r++) {
        if (r == 0 || !same_box(&edges[order[at[r - 1]]], &edges[order[at[r]]])) run++;
        ids[at[r]] = run;
    }
    PyMem_Free(at);
    return 0;
}

/* ``merged_edges``: the kept, snapped, joined and filtered edges, into ``out`` (room for
   ``n``); their count, or -1 with an exception set. */
static Py_ssize_t merged(edge *e, Py_ssize_t n, double snap_x, double snap_y, double join_x,
                         double join_y, double min_length, edge *out)
{
    Py_ssize_t rc = -1, nv = 0, nh = 0, m = 0;
    edge *both = PyMem_Malloc((n + 1) * sizeof(edge));
    edge *tmp = PyMem_Malloc((n + 1) * sizeof(edge));
    Py_ssize_t *idx = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *grp = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    if (!both || !tmp || !idx || !grp) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!e[i].h && e[i].height >= 1) tmp[nv++] = e[i];
    for (Py_ssize_t i = 0; i < n; i++)
        if (e[i].h && e[i].width >= 1) tmp[nv + nh++] = e[i];
    if (snap_x > 0 || snap_y > 0) {
        if (snapped(tmp, nv, 1, snap_x, both) < 0) goto done;
        if (snapped(tmp + nv, nh, 0, snap_y, both + nv) < 0) goto done;
    } else {
        memcpy(both, tmp, (nv + nh) * sizeof(edge));
    }
    Py_ssize_t total = nv + nh;
    for (Py_ssize_t i = 0; i < total; i++) idx[i] = i;
    sort_edges = both;
    qsort(idx, total, sizeof(Py_ssize_t), by_group);
    for (Py_ssize_t g = 0; g < total;) {
        const edge *first = &both[idx[g]];
        double key = first->h ? first->top : first->x0;
        Py_ssize_t end = g + 1;
        while (end < total) {
            const edge *x = &both[idx[end]];
            if (x->h != first->h || (x->h ? x->top : x->x0) != key) break;
            end++;
        }
        Py_ssize_t size = end - g;
        for (Py_ssize_t k = 0; k < size; k++) grp[k] = idx[g + k];
        sort_edges = both;
        qsort(grp, size, sizeof(Py_ssize_t), by_low);
        int h = first->h;
        double tol = h ? join_x : join_y;
        out[m++] = both[grp[0]];
        for (Py_ssize_t k = 1; k < size; k++) {
            const edge *x = &both[grp[k]];
            edge *last = &out[m - 1];
            double xlow = h ? x->x0 : x->top, xhigh = h ? x->x1 : x->bottom;
            double lhigh = h ? last->x1 : last->bottom;
            if (xlow <= lhigh + tol) {
                if (xhigh > lhigh) {
                    double grown = xhigh;
                    if (h) {
                        last->width = grown - last->x0;
                        last->x1 = grown;
                    } else {
                        last->height = last->height + (grown - last->bottom);
                        last->bottom = grown;
                    }
                }
            } else {
                out[m++] = *x;
            }
        }
        g = end;
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < m; i++)
        if ((out[i].h ? out[i].width : out[i].height) >= min_length) out[kept++] = out[i];
    rc = kept;
done:
    PyMem_Free(both);
    PyMem_Free(tmp);
    PyMem_Free(idx);
    PyMem_Free(grp);
    return rc;
}

static PyObject *ruled_cells(PyObject *self, PyObject *args)
{
    PyObject *paths, *boxes;
    double clip[4], snap_x, snap_y, join_x, join_y, min_length, tol_x, tol_y, slack;
    if (!PyArg_ParseTuple(args, "O!O!(dddd)ddddd" "ddd", &PyList_Type, &paths, &PyList_Type,
                          &boxes, &clip[0], &clip[1], &clip[2], &clip[3], &snap_x, &snap_y,
                          &join_x, &join_y, &min_length, &tol_x, &tol_y, &slack))
        return NULL;
    edge_list l = {NULL, 0, 0, clip[0], clip[1], clip[2], clip[3], snap_x, snap_y, 0};
    PyObject *out = NULL;
    edge *joined = NULL;
    double *V = NULL, *H = NULL;
    Py_ssize_t *vo = NULL, *ho = NULL, *vid = NULL, *hid = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(paths); i++)
        if (path_edges(&l, PyList_GET_ITEM(paths, i), min_length) < 0) goto none;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(boxes); i++) {
        double b[4];
        if (numbers(PyList_GET_ITEM(boxes, i), b, 4) < 0) goto none;
        add_edge(&l, b[0], b[1], b[2], b[1]);
        add_edge(&l, b[0], b[3], b[2], b[3]);
        add_edge(&l, b[0], b[1], b[0], b[3]);
        add_edge(&l, b[2], b[1], b[2], b[3]);
    }
    if (l.failed) {
        PyErr_NoMemory();
        goto done;
    }
    joined = PyMem_Malloc((l.n + 1) * sizeof(edge));
    if (!joined) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t m = merged(l.e, l.n, snap_x, snap_y, join_x, join_y, min_length, joined);
    if (m < 0) goto done;
    vo = PyMem_Malloc((m + 1) * sizeof(Py_ssize_t));
    ho = PyMem_Malloc((m + 1) * sizeof(Py_ssize_t));
    vid = PyMem_Malloc((m + 1) * sizeof(Py_ssize_t));
    hid = PyMem_Malloc((m + 1) * sizeof(Py_ssize_t));
    V = PyMem_Malloc((3 * m + 1) * sizeof(double));
    H = PyMem_Malloc((3 * m + 1) * sizeof(double));
    if (!vo || !ho || !vid || !hid || !V || !H) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t nv = 0, nh = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        if (joined[i].h)
            ho[nh++] = i;
        else
            vo[nv++] = i;
    }
    sort_edges = joined;
    qsort(vo, nv, sizeof(Py_ssize_t), by_x_top);
    qsort(ho, nh, sizeof(Py_ssize_t), by_top_x);
    if (box_numbers(joined, vo, nv, vid) < 0 || box_numbers(joined, ho, nh, hid) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nv; i++) {
        const edge *x = &joined[vo[i]];
        V[3 * i] = x->x0;
        V[3 * i + 1] = x->top;
        V[3 * i + 2] = x->bottom;
    }
    for (Py_ssize_t i = 0; i < nh; i++) {
        const edge *x = &joined[ho[i]];
        H[3 * i] = x->top;
        H[3 * i + 1] = x->x0;
        H[3 * i + 2] = x->x1;
    }
    out = cells_of(V, nv, H, nh, vid, hid, tol_x, tol_y, slack);
    goto done;
none:
    PyErr_Clear();
    out = Py_None;
    Py_INCREF(out);
done:
    PyMem_Free(l.e);
    PyMem_Free(joined);
    PyMem_Free(V);
    PyMem_Free(H);
    PyMem_Free(vo);
    PyMem_Free(ho);
    PyMem_Free(vid);
    PyMem_Free(hid);
    return out;
}

/* bounds(boxes) -> tuple | None: ``core.provenance.geometry.union_of`` of a list of
   4-tuples (boxes whose x0 is NaN skipped, the first of equal values kept). */
static PyObject *bounds(PyObject *self, PyObject *list)
{
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "bounds takes a list of boxes");
        return NULL;
    }
    double r[4] = {0, 0, 0, 0};
    int found = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *box = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(box) || PyTuple_GET_SIZE(box) != 4) {
            PyErr_SetString(PyExc_TypeError, "a box is a tuple of four floats");
            return NULL;
        }
        double b[4];
        for (int c = 0; c < 4; c++) {
            b[c] = PyFloat_AsDouble(PyTuple_GET_ITEM(box, c));
            if (b[c] == -1.0 && PyErr_Occurred()) return NULL;
        }
        if (b[0] != b[0]) continue;
        if (!found) {
            memcpy(r, b, sizeof(r));
            found = 1;
            continue;
        }
        if (b[0] < r[0]) r[0] = b[0];
        if (b[1] < r[1]) r[1] = b[1];
        if (b[2] > r[2]) r[2] = b[2];
        if (b[3] > r[3]) r[3] = b[3];
    }
    if (!found) Py_RETURN_NONE;
    return Py_BuildValue("(dddd)", r[0], r[1], r[2], r[3]);
}

static PyMethodDef methods[] = {
    {"bounds", bounds, METH_O, "The union of a list of boxes (NaN boxes skipped)."},
    {"ruled_cells", ruled_cells, METH_VARARGS,
     "The table finder's cells of a page's drawings: edges, merged edges, cells."},
    {"table_cells", table_cells, METH_VARARGS,
     "The cells of a page's merged ruling edges, as the table finder's steps find them."},
    {"box_rows", box_rows, METH_VARARGS,
     "The boxes of a list of lists of 4-tuples as packed float32 or float64 rows."},
    {"page_lines", page_lines, METH_VARARGS,
     "The text blocks of a structured-text page as lists of line tuples."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_stext", "The lines of a MuPDF structured-text page.", -1, methods,
};

PyMODINIT_FUNC PyInit__stext(void)
{
    if (!builtin_sum) {
        PyObject *builtins = PyImport_ImportModule("builtins");
        if (!builtins) return NULL;
        builtin_sum = PyObject_GetAttrString(builtins, "sum");  /* kept for the process */
        Py_DECREF(builtins);
        if (!builtin_sum) return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "FZ_VERSION", FZ_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
