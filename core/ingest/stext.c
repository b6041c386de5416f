/* The text lines of a MuPDF structured-text page, read without building rawdict.

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
   calling thread's ``fz_context`` (``core.ingest.stext_native`` passes them). The
   three flags are PyMuPDF's settings of the same names, read by the caller. The GIL
   is held throughout.  */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
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

   The cells of ``core.ingest.ruled._cells(_intersections(edges, tol_x, tol_y))``, in
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
    crossing *cr = NULL;
    point *pts = NULL;
    Py_ssize_t *row_order = NULL, *row_pos = NULL, *row_end = NULL, *col_end = NULL;
    Py_ssize_t ncr = 0, cap = 0, npts = 0;
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
    goto done;
none:
    out = Py_None;
    Py_INCREF(out);
done:
    PyMem_Free(V);
    PyMem_Free(H);
    PyMem_Free(v_ids);
    PyMem_Free(h_ids);
    PyMem_Free(cr);
    PyMem_Free(pts);
    PyMem_Free(row_order);
    PyMem_Free(row_pos);
    PyMem_Free(row_end);
    PyMem_Free(col_end);
    return out;
}

static PyMethodDef methods[] = {
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
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "FZ_VERSION", FZ_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
