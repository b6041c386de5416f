/* Compiled word scanners (``core.native.words`` loads them; each has a Python twin, a
   regular expression, that gives the same values and runs where this is not built):

   - scan_words(text, start, stop, marks, word_type, normalise): the words of
     ``core.align.words`` in ``text[start:stop]``, as ``Word`` tuples (char_start,
     char_end, norm). A word is a run of letters, digits and combining marks; a hyphen
     (``-``, soft hyphen, U+2010, U+2011) followed by whitespace or none, then such a
     run, joins the two. Exactly the matches of

         (?:[^\W_]|[marks])+(?:[-\u00ad\u2010\u2011]\s*(?:[^\W_]|[marks])+)*

     found by ``finditer(text, start, stop)``: ``[^\W_]`` is what the regular expression
     engine calls alphanumeric (``Py_UNICODE_ISALNUM``), ``\s`` its whitespace
     (``Py_UNICODE_ISSPACE``), and ``marks`` a bitmap (8,192 bytes) of the code points
     below U+10000 that count as combining marks. A word's comparison form is built here
     for an ASCII word (its letters and digits, lower-cased: what NFKC and casefolding
     leave of it) and by ``normalise(word)`` otherwise; words whose form is empty are
     left out.
   - word_ids, tight_window, best_matched: the steps of ``core.align.window``'s word
     alignment that walk a whole region word by word (a passage's vocabulary looked up
     for each region word; the tightest run holding enough of the passage's words; the
     best share any run of a given length holds), on plain integer arrays.
   - scan_terms(text): the words of ``core.methods.lexical`` (``\w+(?:['\u2019]\w+)*``,
     ``\w`` being alphanumeric or ``_``) as ``(start, end, lowered)`` tuples, ``lowered``
     being ``str.lower`` of the word.

   ``tests/test_native_words.py`` compares the scanners with their regular expressions on
   every text of the corpus and on random text, and the window steps with their Python
   twins on random ids. The GIL is held throughout.  */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

static int is_mark(const unsigned char *marks, Py_UCS4 ch)
{
    return ch < 0x10000 && (marks[ch >> 3] >> (ch & 7)) & 1;
}

static int is_piece(const unsigned char *marks, Py_UCS4 ch)
{
    return Py_UNICODE_ISALNUM(ch) || is_mark(marks, ch);
}

static int is_joiner(Py_UCS4 ch)
{
    return ch == '-' || ch == 0x00ad || ch == 0x2010 || ch == 0x2011;
}

/* A tuple of ``word_type`` (a subclass of tuple without fields of its own, as a named
   tuple is) holding the three values, as ``tuple.__new__(word_type, values)`` makes
   it, untracked by the cycle collector. The references are stolen, also on failure. */
static PyObject *typed_triple(PyTypeObject *word_type, PyObject *a, PyObject *b, PyObject *c)
{
    PyObject *made;
    if (word_type == &PyTuple_Type) {
        made = PyTuple_New(3);
    } else {
        made = word_type->tp_alloc(word_type, 3);
    }
    if (!made) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        Py_XDECREF(c);
        return NULL;
    }
    PyTuple_SET_ITEM(made, 0, a);
    PyTuple_SET_ITEM(made, 1, b);
    PyTuple_SET_ITEM(made, 2, c);
    /* Two integers and a string can close no reference cycle: the tuple is left out of
       the cycle collector's lists (as the collector itself does to such plain tuples,
       late). A document's words are made by the hundred thousand in a process that holds
       a model's objects; tracked, they set off full collections that walk all of those. */
    if (a && b && c && PyLong_CheckExact(a) && PyLong_CheckExact(b) && PyUnicode_CheckExact(c))
        PyObject_GC_UnTrack(made);
    return made;
}

/* ``found.append(word_type((a, b, text)))`` for a fresh ``text`` reference (stolen);
   0, or -1 with an exception set. */
static int append_triple(PyObject *found, PyTypeObject *word_type, Py_ssize_t a,
                         Py_ssize_t b, PyObject *text)
{
    PyObject *item = typed_triple(word_type, PyLong_FromSsize_t(a), PyLong_FromSsize_t(b), text);
    if (!item) return -1;
    if (!PyTuple_GET_ITEM(item, 0) || !PyTuple_GET_ITEM(item, 1)) {
        Py_DECREF(item);
        return -1;
    }
    int added = PyList_Append(found, item);
    Py_DECREF(item);
    return added;
}

/* ``*buf`` grown to hold at least ``need`` bytes; 0, or -1 with MemoryError set. */
static int grow(char **buf, Py_ssize_t *size, Py_ssize_t need)
{
    if (need <= *size) return 0;
    char *bigger = PyMem_Realloc(*buf, (size_t)need);
    if (!bigger) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = bigger;
    *size = need;
    return 0;
}

/* The ASCII comparison form of text[a:b] (letters and digits, lower-cased), or NULL
   with *ascii = 0 when the word holds a code point past ASCII. */
static PyObject *ascii_form(int kind, const void *data, Py_ssize_t a, Py_ssize_t b,
                            int *ascii, char *buf)
{
    Py_ssize_t n = 0;
    for (Py_ssize_t i = a; i < b; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch >= 0x80) {
            *ascii = 0;
            return NULL;
        }
        if (ch >= 'A' && ch <= 'Z') {
            buf[n++] = (char)(ch + 32);
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            buf[n++] = (char)ch;
        }
    }
    *ascii = 1;
    return PyUnicode_FromStringAndSize(buf, n);
}

static PyObject *scan_words(PyObject *self, PyObject *args)
{
    PyObject *text, *word_type_obj, *normalise;
    Py_ssize_t start, stop;
    Py_buffer marks;
    (void)self;
    if (!PyArg_ParseTuple(args, "Unny*OO", &text, &start, &stop, &marks, &word_type_obj,
                          &normalise))
        return NULL;
    if (marks.len != 0x10000 / 8) {
        PyBuffer_Release(&marks);
        PyErr_SetString(PyExc_ValueError, "marks must be a bitmap of 65,536 bits");
        return NULL;
    }
    if (!PyType_Check(word_type_obj) ||
        !PyType_IsSubtype((PyTypeObject *)word_type_obj, &PyTuple_Type)) {
        PyBuffer_Release(&marks);
        PyErr_SetString(PyExc_TypeError, "word_type must be a subclass of tuple");
        return NULL;
    }
    PyTypeObject *word_type = (PyTypeObject *)word_type_obj;
    const unsigned char *bits = (const unsigned char *)marks.buf;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (start < 0) start = 0;
    if (stop > length) stop = length;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *found = PyList_New(0);
    char *buf = NULL;
    Py_ssize_t buf_size = 0;
    if (!found) goto fail;
    Py_ssize_t i = start;
    while (i < stop) {
        if (!is_piece(bits, PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t a = i;
        while (i < stop && is_piece(bits, PyUnicode_READ(kind, data, i))) i++;
        while (i < stop && is_joiner(PyUnicode_READ(kind, data, i))) {
            Py_ssize_t j = i + 1;
            while (j < stop && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j))) j++;
            if (j >= stop || !is_piece(bits, PyUnicode_READ(kind, data, j))) break;
            i = j;
            while (i < stop && is_piece(bits, PyUnicode_READ(kind, data, i))) i++;
        }
        Py_ssize_t b = i;
        if (grow(&buf, &buf_size, b - a) < 0) goto fail;
        int ascii = 0;
        PyObject *norm = ascii_form(kind, data, a, b, &ascii, buf);
        if (!ascii) {
            PyObject *word = PyUnicode_Substring(text, a, b);
            if (!word) goto fail;
            norm = PyObject_CallOneArg(normalise, word);
            Py_DECREF(word);
        }
        if (!norm) goto fail;
        if (!PyUnicode_Check(norm)) {
            Py_DECREF(norm);
            PyErr_SetString(PyExc_TypeError, "normalise must return a str");
            goto fail;
        }
        if (PyUnicode_GET_LENGTH(norm) == 0) {
            Py_DECREF(norm);
            continue;
        }
        if (append_triple(found, word_type, a, b, norm) < 0) goto fail;
    }
    PyMem_Free(buf);
    PyBuffer_Release(&marks);
    return found;
fail:
    PyMem_Free(buf);
    PyBuffer_Release(&marks);
    Py_XDECREF(found);
    return NULL;
}

static int is_term_char(Py_UCS4 ch)
{
    return Py_UNICODE_ISALNUM(ch) || ch == '_';
}

static PyObject *scan_terms(PyObject *self, PyObject *args)
{
    PyObject *text;
    (void)self;
    if (!PyArg_ParseTuple(args, "U", &text)) return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *found = PyList_New(0);
    char *buf = NULL;
    Py_ssize_t buf_size = 0;
    if (!found) return NULL;
    Py_ssize_t i = 0;
    while (i < length) {
        if (!is_term_char(PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t a = i;
        while (i < length && is_term_char(PyUnicode_READ(kind, data, i))) i++;
        while (i + 1 < length) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, i);
            if ((ch != '\'' && ch != 0x2019) || !is_term_char(PyUnicode_READ(kind, data, i + 1)))
                break;
            i += 1;
            while (i < length && is_term_char(PyUnicode_READ(kind, data, i))) i++;
        }
        Py_ssize_t b = i;
        int ascii = 1;
        for (Py_ssize_t j = a; j < b; j++) {
            if (PyUnicode_READ(kind, data, j) >= 0x80) {
                ascii = 0;
                break;
            }
        }
        PyObject *lowered;
        if (ascii) {
            if (grow(&buf, &buf_size, b - a) < 0) goto fail;
            for (Py_ssize_t j = a; j < b; j++) {
                Py_UCS4 ch = PyUnicode_READ(kind, data, j);
                buf[j - a] = (char)((ch >= 'A' && ch <= 'Z') ? ch + 32 : ch);
            }
            lowered = PyUnicode_FromStringAndSize(buf, b - a);
        } else {
            PyObject *word = PyUnicode_Substring(text, a, b);
            if (!word) goto fail;
            lowered = PyObject_CallMethod(word, "lower", NULL);
            Py_DECREF(word);
        }
        if (!lowered) goto fail;
        if (append_triple(found, &PyTuple_Type, a, b, lowered) < 0) goto fail;
    }
    PyMem_Free(buf);
    return found;
fail:
    PyMem_Free(buf);
    Py_DECREF(found);
    return NULL;
}

/* ``[vocab.get(word[2], -1) for word in region]``: each word's index in the passage's
   vocabulary, -1 for a word the passage does not hold. */
static PyObject *word_ids(PyObject *self, PyObject *args)
{
    PyObject *region, *vocab;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &region, &PyDict_Type, &vocab)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(region);
    PyObject *ids = PyList_New(n);
    if (!ids) return NULL;
    PyObject *minus = PyLong_FromLong(-1);
    if (!minus) {
        Py_DECREF(ids);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *word = PyList_GET_ITEM(region, i);
        if (!PyTuple_Check(word) || PyTuple_GET_SIZE(word) < 3) {
            PyErr_SetString(PyExc_TypeError, "region must hold (start, end, norm) tuples");
            Py_DECREF(minus);
            Py_DECREF(ids);
            return NULL;
        }
        PyObject *found = PyDict_GetItemWithError(vocab, PyTuple_GET_ITEM(word, 2));
        if (!found && PyErr_Occurred()) {
            Py_DECREF(minus);
            Py_DECREF(ids);
            return NULL;
        }
        PyObject *value = found ? found : minus;
        Py_INCREF(value);
        PyList_SET_ITEM(ids, i, value);
    }
    Py_DECREF(minus);
    return ids;
}

/* The arguments of the window steps as C arrays: ``ids`` (-1, or an index below the
   wanted counts' length), the ``wanted`` counts, zeroed ``have`` counts, and the step's
   integer (``need`` or ``size``). */
typedef struct {
    long *ids;
    long *wanted;
    long *have;
    Py_ssize_t n;
    Py_ssize_t v;
    Py_ssize_t number;
} id_arrays;

static void free_ids(id_arrays *a)
{
    PyMem_Free(a->ids);
    PyMem_Free(a->wanted);
    PyMem_Free(a->have);
}

static int fill_ids(PyObject *args, id_arrays *a)
{
    PyObject *ids_list, *wanted_list;
    if (!PyArg_ParseTuple(args, "O!O!n", &PyList_Type, &ids_list, &PyList_Type, &wanted_list,
                          &a->number))
        return -1;
    a->n = PyList_GET_SIZE(ids_list);
    a->v = PyList_GET_SIZE(wanted_list);
    a->ids = PyMem_Malloc(sizeof(long) * (size_t)(a->n > 0 ? a->n : 1));
    a->wanted = PyMem_Malloc(sizeof(long) * (size_t)(a->v > 0 ? a->v : 1));
    a->have = PyMem_Calloc((size_t)(a->v > 0 ? a->v : 1), sizeof(long));
    if (!a->ids || !a->wanted || !a->have) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < a->v; i++) {
        a->wanted[i] = PyLong_AsLong(PyList_GET_ITEM(wanted_list, i));
        if (a->wanted[i] == -1 && PyErr_Occurred()) return -1;
    }
    for (Py_ssize_t i = 0; i < a->n; i++) {
        long id = PyLong_AsLong(PyList_GET_ITEM(ids_list, i));
        if (id == -1 && PyErr_Occurred()) return -1;
        if (id >= a->v) {
            PyErr_SetString(PyExc_ValueError, "an id past the wanted counts");
            return -1;
        }
        a->ids[i] = id < 0 ? -1 : id;
    }
    return 0;
}

/* 0 on success; -1 with an exception set and the arrays freed. */
static int read_ids(PyObject *args, id_arrays *a)
{
    if (fill_ids(args, a) == 0) return 0;
    free_ids(a);
    return -1;
}

/* ``core.align.window._tight_window``: the shortest [i, j] whose multiset overlap with
   the wanted counts reaches ``need`` (ties to the earliest), or None. */
static PyObject *tight_window(PyObject *self, PyObject *args)
{
    id_arrays a = {0};
    (void)self;
    if (read_ids(args, &a) < 0) return NULL;
    Py_ssize_t need = a.number, matched = 0, left = 0, best_left = -1, best_right = -1;
    for (Py_ssize_t right = 0; right < a.n; right++) {
        long word = a.ids[right];
        if (word >= 0) {
            if (a.have[word] < a.wanted[word]) matched++;
            a.have[word]++;
        }
        while (matched >= need) {
            if (best_left < 0 || right - left < best_right - best_left) {
                best_left = left;
                best_right = right;
            }
            if (left >= a.n) break;  /* need <= 0: every window qualifies */
            long gone = a.ids[left];
            if (gone >= 0) {
                a.have[gone]--;
                if (a.have[gone] < a.wanted[gone]) matched--;
            }
            left++;
        }
    }
    free_ids(&a);
    if (best_left < 0) return Py_NewRef(Py_None);
    return Py_BuildValue("(nn)", best_left, best_right);
}

/* ``core.align.window._best_coverage``'s count: the most wanted words any run of at
   most ``size`` words holds (as a multiset). */
static PyObject *best_matched(PyObject *self, PyObject *args)
{
    id_arrays a = {0};
    (void)self;
    if (read_ids(args, &a) < 0) return NULL;
    Py_ssize_t size = a.number, matched = 0, best = 0;
    for (Py_ssize_t right = 0; right < a.n; right++) {
        long word = a.ids[right];
        if (word >= 0) {
            matched += a.have[word] < a.wanted[word];
            a.have[word]++;
        }
        if (right >= size) {
            long gone = a.ids[right - size];
            if (gone >= 0) {
                a.have[gone]--;
                matched -= a.have[gone] < a.wanted[gone];
            }
        }
        if (matched > best) best = matched;
    }
    free_ids(&a);
    return PyLong_FromSsize_t(best);
}

/* ``(start, end, word)`` triples and a word -> stem mapping: each triple whose word has a
   stem, as ``(start, end, stem)`` (``grouped`` 0), or every stem with the ``(start,
   end)`` of its words in order, as a dict (``grouped`` 1). The two loops of
   ``core.methods.lexical``'s term spans. */
static PyObject *stemmed(PyObject *self, PyObject *args)
{
    PyObject *found, *stems;
    int grouped;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!p", &PyList_Type, &found, &PyDict_Type, &stems, &grouped))
        return NULL;
    PyObject *out = grouped ? PyDict_New() : PyList_New(0);
    if (!out) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(found);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *triple = PyList_GET_ITEM(found, i);
        if (!PyTuple_Check(triple) || PyTuple_GET_SIZE(triple) != 3) {
            PyErr_SetString(PyExc_TypeError, "found holds (start, end, word) tuples");
            goto fail;
        }
        PyObject *a = PyTuple_GET_ITEM(triple, 0), *b = PyTuple_GET_ITEM(triple, 1);
        PyObject *stem = PyDict_GetItemWithError(stems, PyTuple_GET_ITEM(triple, 2));
        if (!stem) {
            if (PyErr_Occurred()) goto fail;
            continue;
        }
        if (!grouped) {
            PyObject *item = PyTuple_Pack(3, a, b, stem);
            if (!item) goto fail;
            int bad = PyList_Append(out, item);
            Py_DECREF(item);
            if (bad < 0) goto fail;
            continue;
        }
        PyObject *span = PyTuple_Pack(2, a, b);
        if (!span) goto fail;
        PyObject *spans = PyDict_GetItemWithError(out, stem);
        int bad;
        if (spans) {
            bad = PyList_Append(spans, span);
        } else if (PyErr_Occurred()) {
            bad = -1;
        } else {
            PyObject *fresh = PyList_New(1);
            if (!fresh) {
                Py_DECREF(span);
                goto fail;
            }
            Py_INCREF(span);
            PyList_SET_ITEM(fresh, 0, span);
            bad = PyDict_SetItem(out, stem, fresh);
            Py_DECREF(fresh);
        }
        Py_DECREF(span);
        if (bad < 0) goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"scan_words", scan_words, METH_VARARGS,
     "The words of text[start:stop] with their comparison forms, as word_type tuples."},
    {"scan_terms", scan_terms, METH_VARARGS,
     "The lexical words of text as (start, end, lowered) tuples."},
    {"word_ids", word_ids, METH_VARARGS,
     "Each region word's index in the vocabulary, -1 when not in it."},
    {"tight_window", tight_window, METH_VARARGS,
     "The shortest run of ids holding need of the wanted counts, or None."},
    {"best_matched", best_matched, METH_VARARGS,
     "The most wanted words any run of at most size ids holds."},
    {"stemmed", stemmed, METH_VARARGS,
     "The (start, end, stem) of each found word with a stem, or each stem's spans (grouped)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_words", "Compiled word scanners.", -1, methods,
};

PyMODINIT_FUNC PyInit__words(void)
{
    return PyModule_Create(&module);
}
