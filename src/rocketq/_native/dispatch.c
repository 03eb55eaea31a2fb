/* dispatch.c: a dispatch run's consume queue units and index entries (issue 22, batch 32).
 *
 *   dispatch_runs(requests) -> dict[(topic, queue_id), list[DispatchRequest]]
 *   cq_units(view, pos, limit, requests, start) -> (stop, physic_end)
 *   index_puts(index_file, view, requests, start, done) -> (stop, done)
 *
 * The compiled twins, over a whole run of DispatchRequests (rocketq/store/commitlog.py), of
 * rocketq/store/message_store.py's MessageStore.dispatch_batch (the requests of each queue,
 * RocketMQ's CommitLogDispatcherBuildConsumeQueue), consume_queue.py's
 * ConsumeQueue.put_message_position_infos (the units of a stretch that continues a queue:
 * ConsumeQueue.putMessagePositionInfo) and index_service.py's IndexService.build_index with
 * index_file.py's IndexFile.put_key (CommitLogDispatcherBuildIndex, IndexService.buildIndex,
 * IndexFile.putKey). The Python code stays the reference (ROCKETQ_NATIVE=0) and keeps
 * everything these do not: a queue's first unit checks, blanks and new files, a new index
 * file when one fills.
 *
 * dispatch_runs: the requests with a consume queue unit (not a prepared or rolled-back
 * transaction record), by (topic, queue_id) in first-seen order, each list in commitlog order.
 *
 * cq_units: the units (COMMITLOG_OFFSET i8 | SIZE i4 | TAGS_CODE i8, big-endian) of
 * requests[start:stop] written at view[pos:], where stop ends the run of consecutive consume
 * queue offsets from start and the room below min(limit, len(view)). The caller checked
 * requests[start] (it continues the queue, is not written yet). Every field is read and
 * checked before the first byte is written: a failed read writes nothing (a unit past the
 * file's write position would look valid to recovery).
 *
 * index_puts: IndexService.build_index for requests[start:], each key of a request (its
 * UNIQ_KEY, then each non-empty word of KEYS) put as IndexFile.put_key does, into index_file
 * (its mapped view is view). It stops where a new index file is needed: index_file None or
 * full at a request with keys (done 0: the new file checks that request again), or full inside
 * a request's keys (done: how many of its keys are in; the rest go to the new file). When a
 * key was put, the file's header fields are written to the view and set on index_file on
 * return, an error's included (a query during the call reads the fields of before it: a slot
 * already pointing past that index_count reads as empty, as between put_key's slot write and
 * its count update; queries see the call's entries once it returns). Key
 * hashes are Java's String.hashCode of "topic#key" over UTF-16 code units (common/hashing.py).
 */
#include "record.h"

#define CQ_UNIT 20
#define INDEX_HEADER 40
#define INDEX_SLOT 4
#define INDEX_ENTRY 20
#define TRAN_MASK 0xC
#define TRAN_PREPARED 0x4
#define TRAN_ROLLBACK 0xC
#define KEY_SEPARATOR ' '
#define INDEX_MAX_COUNT (((int64_t)1) << 40)

static PyObject *A_TOPIC, *A_QUEUE_ID, *A_PHY, *A_SIZE, *A_TAGS, *A_STORE_TS, *A_CQ_OFFSET,
    *A_KEYS, *A_UNIQ, *A_SYS_FLAG;
static PyObject *A_SLOT_NUM, *A_INDEX_NUM, *A_BEGIN_TS, *A_END_TS, *A_BEGIN_PHY, *A_END_PHY,
    *A_SLOT_COUNT, *A_INDEX_COUNT;

int dispatch_setup(void) {
    struct {
        PyObject **slot;
        const char *name;
    } names[] = {
        {&A_TOPIC, "topic"},
        {&A_QUEUE_ID, "queue_id"},
        {&A_PHY, "commit_log_offset"},
        {&A_SIZE, "msg_size"},
        {&A_TAGS, "tags_code"},
        {&A_STORE_TS, "store_timestamp"},
        {&A_CQ_OFFSET, "consume_queue_offset"},
        {&A_KEYS, "keys"},
        {&A_UNIQ, "uniq_key"},
        {&A_SYS_FLAG, "sys_flag"},
        {&A_SLOT_NUM, "hash_slot_num"},
        {&A_INDEX_NUM, "index_num"},
        {&A_BEGIN_TS, "begin_timestamp"},
        {&A_END_TS, "end_timestamp"},
        {&A_BEGIN_PHY, "begin_phy_offset"},
        {&A_END_PHY, "end_phy_offset"},
        {&A_SLOT_COUNT, "hash_slot_count"},
        {&A_INDEX_COUNT, "index_count"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *names[i].slot = PyUnicode_InternFromString(names[i].name);
        if (*names[i].slot == NULL) return -1;
    }
    return 0;
}

int attr_i64(PyObject *obj, PyObject *name, int64_t *out) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = (int64_t)x;
    return 0;
}

/* ------------------------------------------------------------------ dispatch_runs */

PyObject *dispatch_runs(PyObject *self, PyObject *requests) {
    if (!PyList_Check(requests)) {
        PyErr_SetString(PyExc_TypeError, "dispatch_runs: requests must be a list");
        return NULL;
    }
    PyObject *runs = PyDict_New();
    if (runs == NULL) return NULL;
    PyObject *last_topic = NULL, *last_qid = NULL, *last_run = NULL; /* owned */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(requests); i++) {
        PyObject *req = PyList_GET_ITEM(requests, i);
        Py_INCREF(req);
        int64_t sys_flag;
        PyObject *topic = NULL, *qid = NULL, *run = NULL;
        if (attr_i64(req, A_SYS_FLAG, &sys_flag) < 0) goto fail_req;
        int64_t tran = sys_flag & TRAN_MASK;
        if (tran == TRAN_PREPARED || tran == TRAN_ROLLBACK) {
            Py_DECREF(req);
            continue;
        }
        topic = PyObject_GetAttr(req, A_TOPIC);
        if (topic == NULL) goto fail_req;
        qid = PyObject_GetAttr(req, A_QUEUE_ID);
        if (qid == NULL) goto fail_req;
        int same = 0;
        if (last_run != NULL) {
            same = PyObject_RichCompareBool(topic, last_topic, Py_EQ);
            if (same > 0) same = PyObject_RichCompareBool(qid, last_qid, Py_EQ);
            if (same < 0) goto fail_req;
        }
        if (same) {
            run = last_run;
            Py_INCREF(run);
        } else {
            PyObject *key = PyTuple_Pack(2, topic, qid);
            if (key == NULL) goto fail_req;
            run = PyDict_GetItemWithError(runs, key);
            if (run != NULL) {
                Py_INCREF(run);
            } else if (PyErr_Occurred() || (run = PyList_New(0)) == NULL ||
                       PyDict_SetItem(runs, key, run) < 0) {
                Py_DECREF(key);
                goto fail_req;
            }
            Py_DECREF(key);
            Py_XSETREF(last_topic, topic);
            Py_XSETREF(last_qid, qid);
            Py_INCREF(topic);
            Py_INCREF(qid);
            Py_XSETREF(last_run, run);
            Py_INCREF(run);
        }
        if (PyList_Append(run, req) < 0) goto fail_req;
        Py_DECREF(run);
        Py_DECREF(topic);
        Py_DECREF(qid);
        Py_DECREF(req);
        continue;
    fail_req:
        Py_XDECREF(run);
        Py_XDECREF(topic);
        Py_XDECREF(qid);
        Py_DECREF(req);
        Py_XDECREF(last_topic);
        Py_XDECREF(last_qid);
        Py_XDECREF(last_run);
        Py_DECREF(runs);
        return NULL;
    }
    Py_XDECREF(last_topic);
    Py_XDECREF(last_qid);
    Py_XDECREF(last_run);
    return runs;
}

/* ------------------------------------------------------------------ cq_units */

typedef struct {
    int64_t phy, tags, cq_offset;
    int32_t size;
} Unit;

static int read_unit(PyObject *req, Unit *u) {
    int64_t size;
    if (attr_i64(req, A_PHY, &u->phy) < 0 || attr_i64(req, A_SIZE, &size) < 0 ||
        attr_i64(req, A_TAGS, &u->tags) < 0 || attr_i64(req, A_CQ_OFFSET, &u->cq_offset) < 0)
        return -1;
    if (size < INT32_MIN || size > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "msg_size %lld does not fit a unit", (long long)size);
        return -1;
    }
    u->size = (int32_t)size;
    return 0;
}

PyObject *cq_units(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "cq_units(view, pos, limit, requests, start)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t limit = PyLong_AsSsize_t(args[2]);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    PyObject *requests = args[3];
    if (!PyList_Check(requests)) {
        PyErr_SetString(PyExc_TypeError, "cq_units: requests must be a list");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[4]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_WRITABLE) < 0) return NULL;
    PyObject *out = NULL;
    Unit *units = NULL;
    Py_ssize_t n = PyList_GET_SIZE(requests);
    if (limit > buf.len) limit = buf.len;
    if (pos < 0 || start < 0 || start >= n || pos > limit || limit - pos < CQ_UNIT) {
        PyErr_SetString(PyExc_ValueError, "cq_units: no unit fits, or no request at start");
        goto done;
    }
    Py_ssize_t room = (limit - pos) / CQ_UNIT;
    Py_ssize_t want = n - start < room ? n - start : room;
    units = PyMem_Malloc((size_t)want * sizeof(Unit));
    if (units == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t count = 0;
    while (count < want && start + count < PyList_GET_SIZE(requests)) {
        PyObject *req = PyList_GET_ITEM(requests, start + count);
        Py_INCREF(req);
        int bad = read_unit(req, &units[count]);
        Py_DECREF(req);
        if (bad < 0) goto done;
        if (count > 0 && (units[count - 1].cq_offset == INT64_MAX ||
                          units[count].cq_offset != units[count - 1].cq_offset + 1))
            break; /* the run of consecutive queue offsets ends */
        count++;
    }
    if (count == 0) {
        PyErr_SetString(PyExc_ValueError, "cq_units: the requests changed under the call");
        goto done;
    }
    unsigned char *p = (unsigned char *)buf.buf + pos;
    for (Py_ssize_t k = 0; k < count; k++, p += CQ_UNIT) {
        wr_u64(p, (uint64_t)units[k].phy);
        wr_u32(p + 8, (uint32_t)units[k].size);
        wr_u64(p + 12, (uint64_t)units[k].tags);
    }
    Unit *tail = &units[count - 1];
    PyObject *phy = PyLong_FromLongLong(tail->phy), *size = PyLong_FromLong(tail->size);
    PyObject *end = phy != NULL && size != NULL ? PyNumber_Add(phy, size) : NULL;
    Py_XDECREF(phy);
    Py_XDECREF(size);
    if (end != NULL) out = Py_BuildValue("(nN)", start + count, end);
done:
    PyMem_Free(units);
    PyBuffer_Release(&buf);
    return out;
}

/* ------------------------------------------------------------------ index_puts */


static int index_full(const IndexState *st) { return st->index_count >= st->index_num; }

/* IndexFile.put_key of a key whose "topic#key" hash is h; the file is not full */
void index_put_key(IndexState *st, uint32_t h, int64_t phy, int64_t store_ts) {
    int32_t hs = (int32_t)h;
    int64_t key_hash = hs == INT32_MIN ? 0 : (hs < 0 ? -(int64_t)hs : hs);
    unsigned char *slot = st->base + INDEX_HEADER + INDEX_SLOT * (key_hash % st->slot_num);
    int64_t slot_value = rd_i32(slot);
    if (slot_value <= 0 || slot_value > st->index_count) slot_value = 0;
    int64_t time_diff = 0;
    if (st->begin_ts > 0 && store_ts > st->begin_ts) {
        uint64_t d = ((uint64_t)store_ts - (uint64_t)st->begin_ts) / 1000;
        time_diff = d > INT32_MAX ? INT32_MAX : (int64_t)d;
    }
    unsigned char *e =
        st->base + INDEX_HEADER + INDEX_SLOT * st->slot_num + INDEX_ENTRY * st->index_count;
    wr_u32(e, (uint32_t)key_hash);
    wr_u64(e + 4, (uint64_t)phy);
    wr_u32(e + 12, (uint32_t)time_diff);
    wr_u32(e + 16, (uint32_t)slot_value);
    wr_u32(slot, (uint32_t)st->index_count); /* after the entry it points at */
    if (st->index_count <= 1) {
        st->begin_phy = phy;
        st->begin_ts = store_ts;
    }
    if (slot_value == 0) st->slot_count++;
    st->index_count++;
    st->end_phy = phy;
    st->end_ts = store_ts;
    st->dirty = 1;
}

int index_read_state(PyObject *f, Py_buffer *buf, IndexState *st) {
    if (attr_i64(f, A_SLOT_NUM, &st->slot_num) < 0 || attr_i64(f, A_INDEX_NUM, &st->index_num) < 0 ||
        attr_i64(f, A_BEGIN_TS, &st->begin_ts) < 0 || attr_i64(f, A_END_TS, &st->end_ts) < 0 ||
        attr_i64(f, A_BEGIN_PHY, &st->begin_phy) < 0 || attr_i64(f, A_END_PHY, &st->end_phy) < 0 ||
        attr_i64(f, A_SLOT_COUNT, &st->slot_count) < 0 ||
        attr_i64(f, A_INDEX_COUNT, &st->index_count) < 0)
        return -1;
    if (st->slot_num <= 0 || st->slot_num > INDEX_MAX_COUNT || st->index_num <= 0 ||
        st->index_num > INDEX_MAX_COUNT || st->index_count < 1 ||
        INDEX_HEADER + INDEX_SLOT * st->slot_num + INDEX_ENTRY * st->index_num > (int64_t)buf->len) {
        PyErr_SetString(PyExc_ValueError, "index_puts: the index file's fields do not fit its view");
        return -1;
    }
    st->base = buf->buf;
    return 0;
}

/* the header into the view (IndexFile._write_header) and the fields onto the object, when
 * a key was put (as put_key writes the header with each key, and nothing else does) */
int index_write_state(PyObject *f, const IndexState *st) {
    if (!st->dirty) return 0;
    unsigned char *h = st->base;
    wr_u64(h, (uint64_t)st->begin_ts);
    wr_u64(h + 8, (uint64_t)st->end_ts);
    wr_u64(h + 16, (uint64_t)st->begin_phy);
    wr_u64(h + 24, (uint64_t)st->end_phy);
    wr_u32(h + 32, (uint32_t)st->slot_count);
    wr_u32(h + 36, (uint32_t)st->index_count);
    struct {
        PyObject *name;
        int64_t value;
    } fields[] = {
        {A_BEGIN_TS, st->begin_ts},   {A_END_TS, st->end_ts},
        {A_BEGIN_PHY, st->begin_phy}, {A_END_PHY, st->end_phy},
        {A_SLOT_COUNT, st->slot_count}, {A_INDEX_COUNT, st->index_count},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        PyObject *v = PyLong_FromLongLong(fields[i].value);
        if (v == NULL) return -1;
        int bad = PyObject_SetAttr(f, fields[i].name, v);
        Py_DECREF(v);
        if (bad < 0) return -1;
    }
    return 0;
}

/* the keys of one request from key number done on; 1: all in, 0: the file filled at key
 * *stop_at, -1: an error */
static int put_keys(IndexState *st, PyObject *topic, PyObject *uniq, PyObject *keys, int64_t phy,
                    int64_t store_ts, Py_ssize_t done, Py_ssize_t *stop_at) {
    uint32_t prefix = java_hash_units(0, topic, 0, PyUnicode_GET_LENGTH(topic));
    prefix = 31 * prefix + '#';
    Py_ssize_t k = 0;
    if (uniq != NULL) {
        if (k >= done) {
            if (index_full(st)) {
                *stop_at = k;
                return 0;
            }
            uint32_t h = java_hash_units(prefix, uniq, 0, PyUnicode_GET_LENGTH(uniq));
            index_put_key(st, h, phy, store_ts);
        }
        k++;
    }
    if (keys != NULL) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(keys), from = 0;
        int kind = PyUnicode_KIND(keys);
        const void *data = PyUnicode_DATA(keys);
        for (Py_ssize_t i = 0; i <= n; i++) {
            if (i < n && PyUnicode_READ(kind, data, i) != KEY_SEPARATOR) continue;
            if (i > from) { /* a non-empty word */
                if (k >= done) {
                    if (index_full(st)) {
                        *stop_at = k;
                        return 0;
                    }
                    index_put_key(st, java_hash_units(prefix, keys, from, i), phy, store_ts);
                }
                k++;
            }
            from = i + 1;
        }
    }
    return 1;
}

static int str_or_error(PyObject *v, const char *what) {
    if (PyUnicode_Check(v)) return 0;
    PyErr_Format(PyExc_TypeError, "index_puts: %s must be a str", what);
    return -1;
}

PyObject *index_puts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "index_puts(index_file, view, requests, start, done)");
        return NULL;
    }
    PyObject *f = args[0], *requests = args[2];
    if (!PyList_Check(requests)) {
        PyErr_SetString(PyExc_TypeError, "index_puts: requests must be a list");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[3]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t done = PyLong_AsSsize_t(args[4]);
    if (done == -1 && PyErr_Occurred()) return NULL;
    if (start < 0 || done < 0) {
        PyErr_SetString(PyExc_ValueError, "index_puts: start and done must not be negative");
        return NULL;
    }
    int have_file = f != Py_None;
    Py_buffer buf = {0};
    IndexState st = {0};
    if (have_file) {
        if (PyObject_GetBuffer(args[1], &buf, PyBUF_WRITABLE) < 0) return NULL;
        if (index_read_state(f, &buf, &st) < 0) {
            PyBuffer_Release(&buf);
            return NULL;
        }
    }
    int failed = 0;
    Py_ssize_t i = start, stop_at = 0;
    for (; i < PyList_GET_SIZE(requests); i++, done = 0) {
        PyObject *req = PyList_GET_ITEM(requests, i);
        Py_INCREF(req);
        PyObject *uniq = NULL, *keys = NULL, *topic = NULL;
        int64_t sys_flag, phy, store_ts;
        int has_uniq = 0, has_keys = 0, r = 1;
        if (attr_i64(req, A_SYS_FLAG, &sys_flag) < 0) goto fail_req;
        if ((sys_flag & TRAN_MASK) == TRAN_ROLLBACK) goto next;
        if ((uniq = PyObject_GetAttr(req, A_UNIQ)) == NULL) goto fail_req;
        if ((keys = PyObject_GetAttr(req, A_KEYS)) == NULL) goto fail_req;
        if (uniq != Py_None && (has_uniq = PyObject_IsTrue(uniq)) < 0) goto fail_req;
        if ((has_keys = PyObject_IsTrue(keys)) < 0) goto fail_req;
        if (!has_uniq && !has_keys) goto next;
        if ((has_uniq && str_or_error(uniq, "uniq_key") < 0) ||
            (has_keys && str_or_error(keys, "keys") < 0))
            goto fail_req;
        if (!have_file || (done == 0 && index_full(&st))) {
            stop_at = 0; /* a new file, which checks this request */
            Py_XDECREF(uniq);
            Py_XDECREF(keys);
            Py_DECREF(req);
            break;
        }
        if (attr_i64(req, A_PHY, &phy) < 0 || attr_i64(req, A_STORE_TS, &store_ts) < 0)
            goto fail_req;
        if (done == 0 && phy < st.end_phy) goto next; /* indexed before (re-dispatch) */
        if ((topic = PyObject_GetAttr(req, A_TOPIC)) == NULL || str_or_error(topic, "topic") < 0)
            goto fail_req;
        r = put_keys(&st, topic, has_uniq ? uniq : NULL, has_keys ? keys : NULL, phy, store_ts,
                     done, &stop_at);
    next:
        Py_XDECREF(topic);
        Py_XDECREF(uniq);
        Py_XDECREF(keys);
        Py_DECREF(req);
        if (r == 0) break; /* full inside this request's keys */
        continue;
    fail_req:
        Py_XDECREF(topic);
        Py_XDECREF(uniq);
        Py_XDECREF(keys);
        Py_DECREF(req);
        failed = 1;
        break;
    }
    if (have_file) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (index_write_state(f, &st) < 0) failed = 1;
        if (type != NULL) PyErr_Restore(type, value, tb);
        else if (!failed) PyErr_Clear();
        PyBuffer_Release(&buf);
    }
    if (failed || PyErr_Occurred()) return NULL;
    if (i >= PyList_GET_SIZE(requests)) return Py_BuildValue("(nn)", i, (Py_ssize_t)0);
    return Py_BuildValue("(nn)", i, stop_at);
}
