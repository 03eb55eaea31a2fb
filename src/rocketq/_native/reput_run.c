/* reput_run.c: a dispatch run straight from the commitlog's bytes (issue 22, the dispatch run).
 *
 *   dispatch_direct(view, pos, limit, file_from_offset, queues, index_file, index_view,
 *                   stop_topics[, arrivals]) -> (pos, count, last_store_timestamp)
 *
 * The compiled twin, for the records it can take, of ReputMessageService._do_reput's round
 * (rocketq/store/reput.py): CommitLog.read_dispatch_requests' decode, then
 * MessageStore.dispatch_batch (each record's consume queue unit,
 * ConsumeQueue.put_message_position_infos) and IndexService.build_index (its UNIQ_KEY and KEYS
 * words), without a DispatchRequest, a properties dict or a str a key. The Python round stays
 * the reference (ROCKETQ_NATIVE=0) and takes every record this one stops at.
 *
 * From view[pos:] (the commitlog file whose first byte is file_from_offset), each record that
 * ends at or below limit is dispatched in commitlog order, until the first record that is not
 * one this function takes; pos then is that record's start (the caller's Python round takes
 * it). It stops at (and leaves to Python): anything but a message record that parses (a blank,
 * a bad or cut record: Python reports or rolls), a topic or properties that are not UTF-8, a
 * prepared or rolled-back transaction record, a topic of stop_topics (the schedule and timer
 * topics: their tags code and wheel), a queue not in queues (dict topic -> dict queue_id ->
 * ConsumeQueue: Python creates it), a unit that does not continue its queue's last file exactly
 * (no file, a full file, a skip of a record already in, a gap: put_message_position_info_wrapper
 * handles those), more queues than one call keeps, and a record with keys when the index needs
 * a new file (index_file None, or not room for every key of the record). index_file False: no
 * index (messageIndexEnable off).
 *
 * A queue's unit is written at its last file's write position, then the file's wrote_position
 * and the queue's max_physic_offset are set (when the call returns, or fails: what was written
 * is what they say). Keys are put as dispatch.c's index_puts puts them; the index file's header
 * and fields are written when the call returns. Every field of a record is read and checked
 * before its first byte is written.
 *
 * arrivals (a list, or None/absent): each record taken gets, before its unit is written, the
 * tuple (topic, queue_id, queue_offset, tags_code, store_timestamp, commitlog_offset, size)
 * appended: what the arrival listener of a held pull or a parked POP is told of it (the
 * properties are read again from the record only when a waiter's filter asks for them).
 */
#include "record.h"

#define CQ_UNIT 20
#define TRAN_MASK 0xC
#define TRAN_PREPARED 0x4
#define TRAN_ROLLBACK 0xC
#define MAX_QUEUES 16

static PyObject *A_MAX_PHY, *A_MFQ, *A_MAPPED_FILES, *A_WROTE, *A_FILE_SIZE, *A_FILE_FROM,
    *A_VIEW;

int reput_run_setup(void) {
    A_MAX_PHY = PyUnicode_InternFromString("max_physic_offset");
    A_MFQ = PyUnicode_InternFromString("mapped_file_queue");
    A_MAPPED_FILES = PyUnicode_InternFromString("mapped_files");
    A_WROTE = PyUnicode_InternFromString("wrote_position");
    A_FILE_SIZE = PyUnicode_InternFromString("file_size");
    A_FILE_FROM = PyUnicode_InternFromString("file_from_offset");
    A_VIEW = PyUnicode_InternFromString("view");
    return A_MAX_PHY && A_MFQ && A_MAPPED_FILES && A_WROTE && A_FILE_SIZE && A_FILE_FROM && A_VIEW
               ? 0
               : -1;
}

/* a consume queue's last file while the call writes into it */
typedef struct {
    PyObject *cq, *mf; /* owned */
    Py_buffer buf;
    int64_t max_phy, wrote, file_size, file_from;
    int dirty;
} Queue;

static int set_i64(PyObject *obj, PyObject *name, int64_t value) {
    PyObject *v = PyLong_FromLongLong(value);
    if (v == NULL) return -1;
    int rc = PyObject_SetAttr(obj, name, v);
    Py_DECREF(v);
    return rc;
}

/* the queue's state loaded into q: 1, 0 when it has no file (Python creates it), -1 error */
static int load_queue(PyObject *cq, Queue *q) {
    memset(q, 0, sizeof *q);
    if (attr_i64(cq, A_MAX_PHY, &q->max_phy) < 0) return -1;
    PyObject *mfq = PyObject_GetAttr(cq, A_MFQ);
    if (mfq == NULL) return -1;
    PyObject *files = PyObject_GetAttr(mfq, A_MAPPED_FILES);
    Py_DECREF(mfq);
    if (files == NULL) return -1;
    Py_ssize_t n = PySequence_Size(files);
    if (n <= 0) {
        Py_DECREF(files);
        return n < 0 ? -1 : 0;
    }
    PyObject *mf = PySequence_GetItem(files, n - 1);
    Py_DECREF(files);
    if (mf == NULL) return -1;
    PyObject *view = NULL;
    if (attr_i64(mf, A_WROTE, &q->wrote) < 0 || attr_i64(mf, A_FILE_SIZE, &q->file_size) < 0 ||
        attr_i64(mf, A_FILE_FROM, &q->file_from) < 0 || (view = PyObject_GetAttr(mf, A_VIEW)) == NULL ||
        PyObject_GetBuffer(view, &q->buf, PyBUF_WRITABLE) < 0) {
        Py_XDECREF(view);
        Py_DECREF(mf);
        return -1;
    }
    Py_DECREF(view);
    if (q->wrote < 0 || q->wrote > q->file_size || q->file_from < 0 ||
        q->file_from > INT64_MAX - q->file_size || q->max_phy > INT64_MAX - INT32_MAX) {
        PyBuffer_Release(&q->buf);
        Py_DECREF(mf);
        return 0; /* positions this call does not take: Python's wrapper */
    }
    Py_INCREF(cq);
    q->cq = cq;
    q->mf = mf;
    return 1;
}

/* the positions written back and the queue released; -1 when a set failed */
static int release_queue(Queue *q) {
    int rc = 0;
    if (q->dirty) {
        if (set_i64(q->mf, A_WROTE, q->wrote) < 0) rc = -1;
        if (set_i64(q->cq, A_MAX_PHY, q->max_phy) < 0) rc = -1;
    }
    PyBuffer_Release(&q->buf);
    Py_DECREF(q->mf);
    Py_DECREF(q->cq);
    return rc;
}

/* Java's String.hashCode step over the UTF-16 code units of valid UTF-8 bytes (properties.c's
 * java_hash_units over the str those bytes decode to) */
static uint32_t hash_utf8(uint32_t h, const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        uint32_t c = s[i];
        if (c < 0x80) {
            i += 1;
        } else if (c < 0xE0) {
            c = (c & 0x1F) << 6 | (s[i + 1] & 0x3F);
            i += 2;
        } else if (c < 0xF0) {
            c = (c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            i += 3;
        } else {
            c = (c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
                (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
            i += 4;
        }
        h = java_hash_step(h, c);
    }
    return h;
}

typedef struct {
    const unsigned char *p;
    Py_ssize_t n; /* 0: absent (decode_properties keeps no empty value) */
} Span;

static int span_is(const unsigned char *p, Py_ssize_t n, const char *name) {
    size_t len = strlen(name);
    return (size_t)n == len && memcmp(p, name, len) == 0;
}

/* decode_properties' pairs named TAGS, KEYS and UNIQ_KEY (the last of each wins, as in its
 * dict): split on 0x02, a name up to the first 0x01, both parts non-empty */
static void find_props(const unsigned char *p, Py_ssize_t n, Span *tags, Span *keys, Span *uniq) {
    const unsigned char *end = p + n;
    while (p < end) {
        const unsigned char *seg_end = memchr(p, 0x02, (size_t)(end - p));
        if (seg_end == NULL) seg_end = end;
        const unsigned char *sep = memchr(p, 0x01, (size_t)(seg_end - p));
        if (sep != NULL && sep > p && sep + 1 < seg_end) {
            Span v = {sep + 1, seg_end - sep - 1};
            if (span_is(p, sep - p, "TAGS")) *tags = v;
            else if (span_is(p, sep - p, "KEYS")) *keys = v;
            else if (span_is(p, sep - p, "UNIQ_KEY")) *uniq = v;
        }
        p = seg_end + 1;
    }
}

/* how many keys a record puts: its UNIQ_KEY, then each non-empty word of KEYS */
static int64_t count_keys(const Span *keys, const Span *uniq) {
    int64_t k = uniq->n > 0;
    Py_ssize_t from = 0;
    for (Py_ssize_t i = 0; i <= keys->n; i++) {
        if (i < keys->n && keys->p[i] != ' ') continue;
        if (i > from) k++;
        from = i + 1;
    }
    return k;
}

static void put_keys(IndexState *st, const Record *r, const Span *keys, const Span *uniq) {
    uint32_t prefix = hash_utf8(0, r->topic, r->topic_len);
    prefix = 31 * prefix + '#';
    if (uniq->n > 0) index_put_key(st, hash_utf8(prefix, uniq->p, uniq->n), r->phy, r->store_ts);
    Py_ssize_t from = 0;
    for (Py_ssize_t i = 0; i <= keys->n; i++) {
        if (i < keys->n && keys->p[i] != ' ') continue;
        if (i > from)
            index_put_key(st, hash_utf8(prefix, keys->p + from, i - from), r->phy, r->store_ts);
        from = i + 1;
    }
}

/* the record's arrival appended to arrivals: 0, -1 on an error */
static int add_arrival(PyObject *arrivals, TopicCache *tc, const Record *r, int32_t tags_code) {
    PyObject *t = PyTuple_New(7);
    if (t == NULL) return -1;
    PyObject *items[7] = {
        cached_topic(tc, r->topic, r->topic_len),
        PyLong_FromLong(r->queue_id),
        PyLong_FromLongLong(r->queue_offset),
        PyLong_FromLong(tags_code),
        PyLong_FromLongLong(r->store_ts),
        PyLong_FromLongLong(r->phy),
        PyLong_FromLong(r->total),
    };
    int bad = 0;
    for (int i = 0; i < 7; i++) {
        if (items[i] == NULL) bad = 1;
        PyTuple_SET_ITEM(t, i, items[i]); /* a NULL slot is skipped by the tuple's dealloc */
    }
    int rc = bad ? -1 : PyList_Append(arrivals, t);
    Py_DECREF(t);
    return rc;
}

static int is_stop_topic(PyObject *stop_topics, const Record *r) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stop_topics); i++) {
        PyObject *t = PyTuple_GET_ITEM(stop_topics, i);
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(t, &n);
        if (s == NULL) return -1;
        if (n == r->topic_len && memcmp(s, r->topic, (size_t)n) == 0) return 1;
    }
    return 0;
}

/* the queue of the record, from the call's queues or loaded: its index in qs, -2 when Python
 * must take the record, -1 on an error */
static int find_queue(PyObject *queues, TopicCache *tc, const Record *r, Queue *qs, int *nq) {
    PyObject *topic = cached_topic(tc, r->topic, r->topic_len);
    if (topic == NULL) return -1;
    PyObject *by_id = PyDict_GetItemWithError(queues, topic); /* borrowed */
    Py_DECREF(topic);
    if (by_id == NULL) return PyErr_Occurred() ? -1 : -2;
    if (!PyDict_Check(by_id)) {
        PyErr_SetString(PyExc_TypeError, "dispatch_direct: queues must map topics to dicts");
        return -1;
    }
    PyObject *qid = PyLong_FromLong(r->queue_id);
    if (qid == NULL) return -1;
    PyObject *cq = PyDict_GetItemWithError(by_id, qid); /* borrowed */
    Py_DECREF(qid);
    if (cq == NULL) return PyErr_Occurred() ? -1 : -2;
    for (int i = 0; i < *nq; i++)
        if (qs[i].cq == cq) return i;
    if (*nq >= MAX_QUEUES) return -2; /* the next call takes it */
    int rc = load_queue(cq, &qs[*nq]);
    if (rc <= 0) return rc < 0 ? -1 : -2;
    return (*nq)++;
}

PyObject *dispatch_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8 && nargs != 9) {
        PyErr_SetString(PyExc_TypeError,
                        "dispatch_direct(view, pos, limit, file_from_offset, queues, index_file, "
                        "index_view, stop_topics[, arrivals])");
        return NULL;
    }
    PyObject *arrivals = nargs == 9 && args[8] != Py_None ? args[8] : NULL;
    if (arrivals != NULL && !PyList_Check(arrivals)) {
        PyErr_SetString(PyExc_TypeError, "dispatch_direct: arrivals must be a list or None");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t limit = PyLong_AsSsize_t(args[2]);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    long long file_from = PyLong_AsLongLong(args[3]);
    if (file_from == -1 && PyErr_Occurred()) return NULL;
    PyObject *queues = args[4], *index_file = args[5], *stop_topics = args[7];
    if (!PyDict_Check(queues) || !PyTuple_Check(stop_topics)) {
        PyErr_SetString(PyExc_TypeError, "dispatch_direct: queues a dict, stop_topics a tuple");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stop_topics); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(stop_topics, i))) {
            PyErr_SetString(PyExc_TypeError, "dispatch_direct: stop_topics must hold str");
            return NULL;
        }
    }
    int index_on = index_file != Py_False, have_file = index_on && index_file != Py_None;
    Py_buffer view, index_buf = {0};
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    IndexState st = {0};
    if (have_file) {
        if (PyObject_GetBuffer(args[6], &index_buf, PyBUF_WRITABLE) < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
        if (index_read_state(index_file, &index_buf, &st) < 0) {
            PyBuffer_Release(&index_buf);
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    Queue qs[MAX_QUEUES];
    int nq = 0, failed = 0;
    Py_ssize_t count = 0;
    int64_t last_ts = -1;
    TopicCache tc = {NULL, 0, NULL};
    if (pos < 0 || limit < pos || limit > view.len || file_from < 0 ||
        file_from > INT64_MAX - INT32_MAX - view.len) {
        PyErr_SetString(PyExc_ValueError, "dispatch_direct: bounds outside the buffer");
        failed = 1;
        goto done;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    while (limit - pos >= MIN_RECORD_SIZE) {
        uint32_t magic = rd_u32(b + pos + 4);
        Record r;
        if ((magic != MAGIC_V1 && magic != MAGIC_V2) || parse_record(b, pos, limit, &r) < 0 ||
            r.phy != file_from + pos)
            break;
        int32_t tran = r.sys_flag & TRAN_MASK;
        if (tran == TRAN_PREPARED || tran == TRAN_ROLLBACK) break;
        if (!utf8_valid(r.topic, r.topic_len) || !utf8_valid(r.props, r.props_len)) break;
        int stop = is_stop_topic(stop_topics, &r);
        if (stop != 0) {
            failed = stop < 0;
            break;
        }
        int qi = find_queue(queues, &tc, &r, qs, &nq);
        if (qi < 0) {
            failed = qi == -1;
            break;
        }
        Queue *q = &qs[qi];
        if (q->wrote >= q->file_size || r.phy + r.total <= q->max_phy ||
            r.queue_offset > INT64_MAX / CQ_UNIT || r.queue_offset < 0 ||
            r.queue_offset * CQ_UNIT != q->file_from + q->wrote ||
            q->wrote + CQ_UNIT > q->file_size || q->wrote + CQ_UNIT > (int64_t)q->buf.len)
            break; /* not a unit that continues the queue's file: Python's wrapper */
        Span tags = {NULL, 0}, keys = {NULL, 0}, uniq = {NULL, 0};
        find_props(r.props, r.props_len, &tags, &keys, &uniq);
        int index_it = 0;
        if (index_on && (uniq.n > 0 || keys.n > 0)) {
            if (!have_file || st.index_count >= st.index_num) break; /* a new file: Python */
            if (r.phy >= st.end_phy) { /* else indexed before (a re-dispatch) */
                if (count_keys(&keys, &uniq) > st.index_num - st.index_count) break;
                index_it = 1;
            }
        }
        int32_t tags_code = tags.n > 0 ? (int32_t)hash_utf8(0, tags.p, tags.n) : 0;
        if (arrivals != NULL && add_arrival(arrivals, &tc, &r, tags_code) < 0) {
            failed = 1;
            break;
        }
        unsigned char *u = (unsigned char *)q->buf.buf + q->wrote;
        wr_u64(u, (uint64_t)r.phy);
        wr_u32(u + 8, (uint32_t)r.total);
        wr_u64(u + 12, (uint64_t)(int64_t)tags_code);
        q->wrote += CQ_UNIT;
        q->max_phy = r.phy + r.total;
        q->dirty = 1;
        if (index_it) put_keys(&st, &r, &keys, &uniq);
        last_ts = r.store_ts;
        count++;
        pos += r.total;
    }
done:
    Py_XDECREF(tc.str);
    {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        for (int i = 0; i < nq; i++)
            if (release_queue(&qs[i]) < 0) failed = 1;
        if (have_file) {
            if (index_write_state(index_file, &st) < 0) failed = 1;
            PyBuffer_Release(&index_buf);
        }
        if (type != NULL) PyErr_Restore(type, value, tb);
        else if (!failed) PyErr_Clear();
    }
    PyBuffer_Release(&view);
    if (failed || PyErr_Occurred()) return NULL;
    return Py_BuildValue("(nnL)", pos, count, (long long)last_ts);
}
