/*
 * collect_messages: the unit walk of DefaultMessageStore#getMessage in one call (issue 22,
 * lever 1, PULL_MESSAGE from memory).
 *
 * The twin of rocketq/store/message_reader.py's MessageReader._collect, which stays the
 * reference: the same walk over the consume queue's 20-byte units (commitlog offset int64,
 * size int32, tags code int64, big-endian: ConsumeQueue.CQ_STORE_UNIT_SIZE), the same stops
 * (maxMsgNums, maxTransferBytesOnMessageInMemory, the scan limit, a unit not written yet)
 * and the same statuses, with a TAG filter's code set as ExpressionMessageFilter applies it
 * (the unit's tags code as int32 in the set). The records found are copied once, straight
 * from the commitlog's mapped files into the reply body (one bytes object): no Python
 * object per message.
 *
 * The files come in as the MappedFileQueues' tuples (``mapped_files``); a file's buffer is taken from its
 * ``_view`` slot and held until the call ends. Only slot reads happen while buffers are held
 * (no Python code runs, so no other thread runs and none can close a mapping under us). The
 * call declines (returns None, nothing changed) wherever the Python walk would go somewhere
 * this one does not follow: a view already released (a file the clean service deleted), a
 * negative record size, a commitlog offset of 0 that falls before the first file (the
 * Python lookup's return-first rule), an attribute of an unexpected type, or, when asked
 * (``resident_only``), a record whose pages are not all in the page cache (mincore): such a
 * pull goes to a thread on the Python path, as RocketMQ reads a backlog off the hot path.
 */
#include "record.h"

#include <sys/mman.h>
#include <unistd.h>

enum { GM_NO_MATCHED = 0, GM_FOUND = 1, GM_REMOVING = 2, GM_FOUND_NULL = 3 };
#define CQ_UNIT 20

typedef struct {
    Py_ssize_t index; /* the file's index in its queue's list; -1: slot unused */
    Py_buffer buf;
    long long from;
    long long wrote;
    Py_ssize_t lo, hi; /* the span of this file copied from (commitlog files) */
} FileSlot;

typedef struct {
    FileSlot *slots;
    Py_ssize_t n, cap;
} Files;

typedef struct {
    const unsigned char *p;
    Py_ssize_t size;
} Piece;

static void files_release(Files *f) {
    for (Py_ssize_t i = 0; i < f->n; i++) PyBuffer_Release(&f->slots[i].buf);
    PyMem_Free(f->slots);
    f->slots = NULL;
    f->n = f->cap = 0;
}

static int read_ll(PyObject *obj, const char *name, long long *out) {
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL) return -1;
    if (!PyLong_CheckExact(v)) {
        Py_DECREF(v);
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* The slot of file ``index`` of ``list`` (opened on first use); NULL: decline. */
static FileSlot *file_at(Files *f, PyObject *list, Py_ssize_t index) {
    for (Py_ssize_t i = f->n - 1; i >= 0; i--)
        if (f->slots[i].index == index) return &f->slots[i];
    if (f->n == f->cap) {
        Py_ssize_t cap = f->cap ? f->cap * 2 : 4;
        FileSlot *grown = PyMem_Realloc(f->slots, (size_t)cap * sizeof(FileSlot));
        if (grown == NULL) return NULL;
        f->slots = grown;
        f->cap = cap;
    }
    PyObject *mf = PySequence_Fast_GET_ITEM(list, index);
    FileSlot *s = &f->slots[f->n];
    s->index = index;
    s->lo = PY_SSIZE_T_MAX;
    s->hi = 0;
    if (read_ll(mf, "file_from_offset", &s->from) < 0 || read_ll(mf, "wrote_position", &s->wrote) < 0)
        return NULL;
    PyObject *view = PyObject_GetAttrString(mf, "_view");
    if (view == NULL) return NULL;
    int rc = PyObject_GetBuffer(view, &s->buf, PyBUF_SIMPLE);
    Py_DECREF(view);
    if (rc < 0) return NULL;
    f->n++;
    return s;
}

/* MappedFileQueue.find_mapped_file_by_offset (without the return-first rule): the slot of
 * the file holding ``offset``, else NULL with *missing set (or NULL with an error pending). */
static FileSlot *find_file(Files *f, PyObject *list, long long file_size, long long offset,
                           int *missing) {
    *missing = 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
    if (n == 0) {
        *missing = 1;
        return NULL;
    }
    long long first_from;
    if (read_ll(PySequence_Fast_GET_ITEM(list, 0), "file_from_offset", &first_from) < 0) return NULL;
    long long diff = offset - first_from;
    long long index = diff >= 0 ? diff / file_size : -((-diff + file_size - 1) / file_size);
    if (offset < first_from || index < 0 || index >= n) {
        *missing = 1;
        return NULL;
    }
    FileSlot *s = file_at(f, list, (Py_ssize_t)index);
    if (s == NULL) return NULL;
    if (!(s->from <= offset && offset < s->from + file_size)) {
        *missing = 1;
        return NULL;
    }
    return s;
}

/* The code set as int32s; codes outside int32 match no unit (to_int32 of a tags code is an
 * int32) and are left out. None: no filter (*n = -1). */
static int codes_of(PyObject *codes, int32_t **out, Py_ssize_t *n) {
    *out = NULL;
    *n = -1;
    if (codes == Py_None) return 0;
    if (!PyTuple_CheckExact(codes)) return -1;
    Py_ssize_t size = PyTuple_GET_SIZE(codes);
    *out = PyMem_Malloc(((size_t)size + 1) * sizeof(int32_t));
    if (*out == NULL) return -1;
    *n = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(codes, i), &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (!overflow && v >= INT32_MIN && v <= INT32_MAX) (*out)[(*n)++] = (int32_t)v;
    }
    return 0;
}

static int code_matches(const int32_t *codes, Py_ssize_t n, int64_t tags) {
    if (n < 0) return 1;
    int32_t t = (int32_t)(uint32_t)(uint64_t)tags; /* to_int32 */
    for (Py_ssize_t i = 0; i < n; i++)
        if (codes[i] == t) return 1;
    return 0;
}

/* Whether every page of [lo, hi) of the slot's mapping is in the page cache. */
static int resident(const FileSlot *s) {
    if (s->hi <= s->lo) return 1;
    static long page = 0;
    if (page == 0) page = sysconf(_SC_PAGESIZE);
    uintptr_t base = (uintptr_t)s->buf.buf + (uintptr_t)s->lo;
    uintptr_t start = base & ~((uintptr_t)page - 1);
    size_t len = (size_t)((uintptr_t)s->buf.buf + (uintptr_t)s->hi - start);
    size_t pages = (len + (size_t)page - 1) / (size_t)page;
    unsigned char stack[256];
    unsigned char *vec = pages <= sizeof stack ? stack : PyMem_Malloc(pages);
    if (vec == NULL) return 0;
    int ok = mincore((void *)start, len, vec) == 0;
    for (size_t i = 0; ok && i < pages; i++) ok = vec[i] & 1;
    if (vec != stack) PyMem_Free(vec);
    return ok;
}

typedef struct {
    long long cq_file_size, min_logic, cl_file_size, min_phy;
    long long offset, max_offset, scan_limit, max_msgs, max_bytes;
} Walk;

/* The walk (MessageReader._collect); 1 done, 0 decline, -1 error. */
static int walk(const Walk *w, PyObject *cq_list, PyObject *cl_list, Files *cqf, Files *clf,
                const int32_t *codes, Py_ssize_t ncodes, Piece **pieces, Py_ssize_t *cap,
                Py_ssize_t *count, long long *total, long long *next, int *status,
                long long *max_phy) {
    long long per_file = w->cq_file_size / CQ_UNIT;
    long long i = w->offset;
    *status = GM_NO_MATCHED;
    *max_phy = -1;
    while (i < w->max_offset && i - w->offset < w->scan_limit) {
        long long pos = i * CQ_UNIT;
        int missing = 1;
        FileSlot *q = NULL;
        if (pos >= w->min_logic) {
            q = find_file(cqf, cq_list, w->cq_file_size, pos, &missing);
            if (q == NULL && !missing) return 0;
            if (q != NULL && (pos - q->from + CQ_UNIT > q->wrote ||
                              pos - q->from + CQ_UNIT > q->buf.len))
                q = NULL;
        }
        if (q == NULL) {
            if (*count == 0) {
                *status = GM_FOUND_NULL;
                if (per_file <= 0) return 0;
                i += per_file - ((i % per_file) + per_file) % per_file;
            }
            break;
        }
        const unsigned char *u = (const unsigned char *)q->buf.buf + (pos - q->from);
        int64_t phy = rd_i64(u);
        int32_t size = rd_i32(u + 8);
        int64_t tags = rd_i64(u + 12);
        *max_phy = phy;
        if (*count && (*count >= w->max_msgs || *total + size > w->max_bytes)) break;
        i++;
        if (phy < w->min_phy) {
            if (*count == 0) *status = GM_REMOVING;
            continue;
        }
        if (!code_matches(codes, ncodes, tags)) continue;
        if (size < 0) return 0;
        FileSlot *c = find_file(clf, cl_list, w->cl_file_size, phy, &missing);
        if (c == NULL && !missing) return 0;
        if (c == NULL && phy == 0) return 0; /* the return-first rule: Python's */
        long long at = c != NULL ? phy - c->from : 0; /* find_file: in [0, file size) */
        if (c == NULL || at + size > c->wrote) {
            if (*count == 0) *status = GM_REMOVING;
            continue;
        }
        if (at + size > c->buf.len) return 0;
        if (*count == *cap) {
            Py_ssize_t grown_cap = *cap ? *cap * 2 : 32;
            Piece *grown = PyMem_Realloc(*pieces, (size_t)grown_cap * sizeof(Piece));
            if (grown == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            *pieces = grown;
            *cap = grown_cap;
        }
        (*pieces)[*count].p = (const unsigned char *)c->buf.buf + at;
        (*pieces)[*count].size = size;
        if (at < c->lo) c->lo = (Py_ssize_t)at;
        if (at + size > c->hi) c->hi = (Py_ssize_t)(at + size);
        (*count)++;
        *total += size;
        *status = GM_FOUND;
    }
    *next = i;
    return 1;
}

PyObject *collect_messages(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 13) {
        PyErr_SetString(PyExc_TypeError, "collect_messages takes 13 arguments");
        return NULL;
    }
    PyObject *cq_list = args[0], *cl_list = args[3];
    if (!(PyTuple_CheckExact(cq_list) || PyList_CheckExact(cq_list)) ||
        !(PyTuple_CheckExact(cl_list) || PyList_CheckExact(cl_list))) {
        PyErr_SetString(PyExc_TypeError, "collect_messages: the files must be tuples or lists");
        return NULL;
    }
    Walk w;
    long long *dst[] = {NULL,         &w.cq_file_size, &w.min_logic,  NULL,
                        &w.cl_file_size, &w.min_phy,   &w.offset,     &w.max_offset,
                        &w.scan_limit, &w.max_msgs,    &w.max_bytes};
    for (int k = 1; k <= 10; k++) {
        if (dst[k] == NULL) continue;
        *dst[k] = PyLong_AsLongLong(args[k]);
        if (*dst[k] == -1 && PyErr_Occurred()) return NULL;
    }
    if (w.cq_file_size <= 0 || w.cl_file_size <= 0) {
        PyErr_SetString(PyExc_ValueError, "collect_messages: file sizes must be positive");
        return NULL;
    }
    int resident_only = PyObject_IsTrue(args[12]);
    if (resident_only < 0) return NULL;
    int32_t *codes = NULL;
    Py_ssize_t ncodes;
    if (codes_of(args[11], &codes, &ncodes) < 0) {
        PyMem_Free(codes);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "codes: a tuple of ints or None");
        return NULL;
    }
    Files cqf = {0}, clf = {0};
    Piece *pieces = NULL;
    Py_ssize_t cap = 0, count = 0;
    long long total = 0, next = 0, max_phy = -1;
    int status = GM_NO_MATCHED;
    int rc = walk(&w, cq_list, cl_list, &cqf, &clf, codes, ncodes, &pieces, &cap, &count, &total,
                  &next, &status, &max_phy);
    PyObject *body = NULL;
    if (rc > 0 && resident_only)
        for (Py_ssize_t k = 0; k < clf.n && rc > 0; k++) rc = resident(&clf.slots[k]);
    if (rc > 0) {
        body = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total); /* not GC-tracked */
        if (body != NULL) {
            char *out = PyBytes_AS_STRING(body);
            for (Py_ssize_t k = 0; k < count; k++) {
                memcpy(out, pieces[k].p, (size_t)pieces[k].size);
                out += pieces[k].size;
            }
        }
    }
    /* the buffers go before anything that may collect garbage (a finalizer is Python code,
     * and another thread could then run and close a mapping we still export) */
    files_release(&cqf);
    files_release(&clf);
    PyMem_Free(pieces);
    PyMem_Free(codes);
    if (rc > 0)
        return body == NULL ? NULL : Py_BuildValue("(iLNnL)", status, next, body, count, max_phy);
    if (rc < 0) return NULL;
    PyErr_Clear(); /* a decline: the Python walk answers (and words any error) */
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ the pull's answer head */

#define PULL_HEAD_VALUES 8 /* at most this many numbers between the pieces */
#define PULL_HEAD_DIGITS 20 /* a long long's decimal, its sign included */

/* an int in the signed 64-bit range into *out (0), else 1 with no error set */
static int reply_long(PyObject *v, long long *out) {
    if (!PyLong_Check(v)) return 1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    if (overflow) return 1;
    *out = x;
    return 0;
}

/* x's decimal text at w (as Python's str(int)); its length */
static Py_ssize_t decimal(char *w, long long x) {
    char tmp[PULL_HEAD_DIGITS];
    Py_ssize_t n = 0, len = 0;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u != 0);
    if (x < 0) w[len++] = '-';
    while (n > 0) w[len++] = tmp[--n];
    return len;
}

/*
 * pull_reply_head(pieces, values, body_length): the frame head of a pull's answer (issue 22,
 * the woken pull answered without a RemotingCommand): the 4-byte frame length, the header
 * word (JSON, the header's length) and the header, which is pieces[0], values[0] in decimal,
 * pieces[1], ... pieces[n]. The pieces are cut by the caller from the Python encoder's
 * header of a sample answer (rocketq/broker/processors/pull_answer.py), so the text around
 * the numbers is the reference's byte for byte. Nothing here reads network bytes: the
 * numbers are the store's and the request's, already ints.
 *
 * None (the caller answers through RemotingCommand) when the shapes do not fit: not a tuple
 * of bytes one longer than the ints' tuple, a value not an int in the signed 64-bit range, or
 * a frame over 2^31 - 1 bytes.
 */
PyObject *pull_reply_head(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "pull_reply_head takes 3 arguments");
        return NULL;
    }
    PyObject *pieces = args[0], *values = args[1];
    if (!PyTuple_Check(pieces) || !PyTuple_Check(values)) Py_RETURN_NONE;
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    if (n > PULL_HEAD_VALUES || PyTuple_GET_SIZE(pieces) != n + 1) Py_RETURN_NONE;
    long long body_length = 0;
    if (reply_long(args[2], &body_length) || body_length < 0 || body_length > INT32_MAX)
        Py_RETURN_NONE;
    long long numbers[PULL_HEAD_VALUES];
    Py_ssize_t header = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, i);
        if (!PyBytes_Check(piece)) Py_RETURN_NONE;
        header += PyBytes_GET_SIZE(piece);
        if (i < n) {
            if (reply_long(PyTuple_GET_ITEM(values, i), &numbers[i])) Py_RETURN_NONE;
            header += PULL_HEAD_DIGITS;
        }
    }
    if (header > INT32_MAX - 4 - body_length) Py_RETURN_NONE; /* an upper bound: exact below */
    PyObject *out = PyBytes_FromStringAndSize(NULL, 8 + header);
    if (out == NULL) return NULL;
    char *w = PyBytes_AS_STRING(out) + 8, *start = w;
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, i);
        Py_ssize_t size = PyBytes_GET_SIZE(piece);
        memcpy(w, PyBytes_AS_STRING(piece), (size_t)size);
        w += size;
        if (i < n) w += decimal(w, numbers[i]);
    }
    Py_ssize_t length = w - start;
    unsigned char *head = (unsigned char *)PyBytes_AS_STRING(out);
    uint32_t frame = (uint32_t)(4 + length + body_length), word = (uint32_t)length; /* JSON: 0 */
    for (int k = 0; k < 4; k++) {
        head[k] = (unsigned char)(frame >> (24 - 8 * k));
        head[4 + k] = (unsigned char)(word >> (24 - 8 * k));
    }
    if (_PyBytes_Resize(&out, 8 + length) < 0) return NULL;
    return out;
}
