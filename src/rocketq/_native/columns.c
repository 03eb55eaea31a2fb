/* pull_columns: a PULL_MESSAGE body's records as Arrow column buffers (the Spark topic source).
 *
 * The compiled twin of rocketq/spark/topic/pull_body.py's numpy path (record_starts, then
 * spark/fields.gather_fields and spark/properties.parse_properties); that path stays the
 * reference and the tests hold the two equal. A body holds records back to back in the
 * commitlog's layout (RocketMQ's MessageDecoder.decodes). Two passes: the first checks each
 * record and sums the sizes of its variable fields, the second copies them into buffers of
 * exactly that size, so nothing is reallocated and no Python object is made per record.
 *
 * The walk stops at the first record it does not take, and says where: a head that is not a
 * whole record, a record parse_record refuses, a compressed body (only the row decoder
 * inflates), a topic or properties string that is not strict UTF-8, or a properties string
 * that names one property twice (a dict keeps one entry, a map both). The caller hands the
 * rest of the body to the row decoder, which decodes it or raises as it always did.
 *
 * Properties follow properties.string_to_properties (RocketMQ's string2messageProperties):
 * split at 0x02, a segment at its first 0x01 into name and value, pairs with both non-empty
 * kept. For KEYS, TAGS and UNIQ_KEY the walk also records which entry holds each (-1: none).
 */
#include "record.h"

#define PAIR_END 0x02
#define NAME_VALUE 0x01
/* MessageConst.PROPERTY_KEYS, PROPERTY_TAGS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX */
static const char P_KEYS[] = "KEYS";
static const char P_TAGS[] = "TAGS";
static const char P_UNIQ[] = "UNIQ_KEY";
#define MAX_NAMES 64 /* a record with more properties is left to the row decoder */

enum {
    C_QUEUE_ID, C_QUEUE_OFFSET, C_PHY, C_BORN_TS, C_STORE_TS, C_RECONSUME,
    C_BODY_OFF, C_BODY, C_TOPIC_OFF, C_TOPIC, C_BORN_OFF, C_BORN, C_STORE_OFF, C_STORE,
    C_ENTRY_OFF, C_NAME_OFF, C_NAME, C_VALUE_OFF, C_VALUE, C_KEYS_AT, C_TAGS_AT, C_UNIQ_AT,
    C_COUNT
};

typedef struct {
    Py_ssize_t body, topic, born, store, entries, names, values;
} Sizes;

typedef struct {
    const unsigned char *name, *value;
    Py_ssize_t name_len, value_len;
} Pair;

static int named(const Pair *p, const char *name, Py_ssize_t len) {
    return p->name_len == len && memcmp(p->name, name, (size_t)len) == 0;
}

/* The kept pairs of a properties string into pairs (at most MAX_NAMES); -1 for a repeated
 * name or too many. */
static Py_ssize_t split_pairs(const unsigned char *p, Py_ssize_t n, Pair *pairs) {
    Py_ssize_t count = 0;
    const unsigned char *end = p + n;
    while (n > 0 && p <= end) {
        const unsigned char *seg_end = memchr(p, PAIR_END, (size_t)(end - p));
        if (seg_end == NULL) seg_end = end;
        const unsigned char *sep = memchr(p, NAME_VALUE, (size_t)(seg_end - p));
        if (sep != NULL && sep > p && sep + 1 < seg_end) {
            if (count == MAX_NAMES) return -1;
            Pair pair = {p, sep + 1, sep - p, seg_end - sep - 1};
            for (Py_ssize_t i = 0; i < count; i++)
                if (named(&pairs[i], (const char *)pair.name, pair.name_len)) return -1;
            pairs[count++] = pair;
        }
        p = seg_end + 1;
    }
    return count;
}

/* The record at b[pos:end] if the columns take it (its pairs in pairs, their number in
 * *count), else -1. */
static int take_record(const unsigned char *b, Py_ssize_t pos, Py_ssize_t end, Record *r,
                       Pair *pairs, Py_ssize_t *count) {
    if (end - pos < RECORD_HEAD_SIZE) return -1;
    int32_t total = rd_i32(b + pos);
    uint32_t magic = rd_u32(b + pos + 4);
    if ((magic != MAGIC_V1 && magic != MAGIC_V2) || total < MIN_RECORD_SIZE || total > end - pos)
        return -1;
    if (parse_record(b, pos, end, r) < 0 || (r->sys_flag & COMPRESSED_FLAG)) return -1;
    if (!utf8_valid(r->topic, r->topic_len) || !utf8_valid(r->props, r->props_len)) return -1;
    *count = split_pairs(r->props, r->props_len, pairs);
    return *count < 0 ? -1 : 0;
}

static PyObject *new_buffer(Py_ssize_t size, unsigned char **at) {
    PyObject *o = PyBytes_FromStringAndSize(NULL, size);
    if (o != NULL) *at = (unsigned char *)PyBytes_AS_STRING(o);
    return o;
}

static void put_bytes(unsigned char *data, int32_t *off, Py_ssize_t i, const unsigned char *p,
                      Py_ssize_t n) {
    memcpy(data + off[i], p, (size_t)n);
    off[i + 1] = off[i] + (int32_t)n;
}

typedef struct {
    unsigned char *at[C_COUNT];
} Out;

/* The second pass: record i (already taken once) into the buffers. */
static void put_record(Out *o, Py_ssize_t i, const Record *r, const Pair *pairs,
                       Py_ssize_t count) {
    ((int32_t *)o->at[C_QUEUE_ID])[i] = r->queue_id;
    ((int64_t *)o->at[C_QUEUE_OFFSET])[i] = r->queue_offset;
    ((int64_t *)o->at[C_PHY])[i] = r->phy;
    ((int64_t *)o->at[C_BORN_TS])[i] = r->born_ts * 1000;
    ((int64_t *)o->at[C_STORE_TS])[i] = r->store_ts * 1000;
    ((int32_t *)o->at[C_RECONSUME])[i] = r->reconsume;
    put_bytes(o->at[C_BODY], (int32_t *)o->at[C_BODY_OFF], i, r->body, r->body_len);
    put_bytes(o->at[C_TOPIC], (int32_t *)o->at[C_TOPIC_OFF], i, r->topic, r->topic_len);
    put_bytes(o->at[C_BORN], (int32_t *)o->at[C_BORN_OFF], i, r->born, r->born_len);
    put_bytes(o->at[C_STORE], (int32_t *)o->at[C_STORE_OFF], i, r->store, r->store_len);
    int32_t *entry_off = (int32_t *)o->at[C_ENTRY_OFF];
    int32_t first = entry_off[i];
    int64_t *keys = (int64_t *)o->at[C_KEYS_AT], *tags = (int64_t *)o->at[C_TAGS_AT];
    int64_t *uniq = (int64_t *)o->at[C_UNIQ_AT];
    keys[i] = tags[i] = uniq[i] = -1;
    for (Py_ssize_t k = 0; k < count; k++) {
        const Pair *p = &pairs[k];
        int32_t e = first + (int32_t)k;
        put_bytes(o->at[C_NAME], (int32_t *)o->at[C_NAME_OFF], e, p->name, p->name_len);
        put_bytes(o->at[C_VALUE], (int32_t *)o->at[C_VALUE_OFF], e, p->value, p->value_len);
        if (named(p, P_KEYS, sizeof(P_KEYS) - 1)) keys[i] = e;
        else if (named(p, P_TAGS, sizeof(P_TAGS) - 1)) tags[i] = e;
        else if (named(p, P_UNIQ, sizeof(P_UNIQ) - 1)) uniq[i] = e;
    }
    entry_off[i + 1] = first + (int32_t)count;
}

static PyObject *fill(const unsigned char *b, Py_ssize_t limit, Py_ssize_t n, const Sizes *s,
                      Pair *pairs) {
    const Py_ssize_t sizes[C_COUNT] = {
        [C_QUEUE_ID] = 4 * n, [C_QUEUE_OFFSET] = 8 * n, [C_PHY] = 8 * n, [C_BORN_TS] = 8 * n,
        [C_STORE_TS] = 8 * n, [C_RECONSUME] = 4 * n, [C_BODY_OFF] = 4 * (n + 1),
        [C_BODY] = s->body, [C_TOPIC_OFF] = 4 * (n + 1), [C_TOPIC] = s->topic,
        [C_BORN_OFF] = 4 * (n + 1), [C_BORN] = s->born, [C_STORE_OFF] = 4 * (n + 1),
        [C_STORE] = s->store, [C_ENTRY_OFF] = 4 * (n + 1), [C_NAME_OFF] = 4 * (s->entries + 1),
        [C_NAME] = s->names, [C_VALUE_OFF] = 4 * (s->entries + 1), [C_VALUE] = s->values,
        [C_KEYS_AT] = 8 * n, [C_TAGS_AT] = 8 * n, [C_UNIQ_AT] = 8 * n,
    };
    PyObject *cols = PyTuple_New(C_COUNT);
    if (cols == NULL) return NULL;
    Out o;
    for (int c = 0; c < C_COUNT; c++) {
        PyObject *buf = new_buffer(sizes[c], &o.at[c]);
        if (buf == NULL) {
            Py_DECREF(cols);
            return NULL;
        }
        PyTuple_SET_ITEM(cols, c, buf);
    }
    int offset_cols[] = {C_BODY_OFF, C_TOPIC_OFF, C_BORN_OFF, C_STORE_OFF, C_ENTRY_OFF,
                         C_NAME_OFF, C_VALUE_OFF};
    for (size_t c = 0; c < sizeof(offset_cols) / sizeof(offset_cols[0]); c++)
        ((int32_t *)o.at[offset_cols[c]])[0] = 0;
    Py_ssize_t pos = 0;
    Record r;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) { /* each checked whole by the first pass */
        parse_record(b, pos, limit, &r);
        put_record(&o, i, &r, pairs, split_pairs(r.props, r.props_len, pairs));
        pos += r.total;
    }
    Py_END_ALLOW_THREADS
    return cols;
}

/* pull_columns(buf) -> (count, stop, buffers): the first count records of buf (a pull body)
 * as the C_* buffers above (native-endian int32/int64 values, int32 Arrow offsets), and the
 * position of the first record not taken (len(buf) when all were). */
PyObject *pull_columns(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len > INT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "a pull body over 2 GiB");
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    Pair *pairs = PyMem_Malloc(MAX_NAMES * sizeof(Pair));
    if (pairs == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Sizes s = {0, 0, 0, 0, 0, 0, 0};
    Py_ssize_t pos = 0, n = 0, count = 0;
    Record r;
    Py_BEGIN_ALLOW_THREADS
    while (take_record(b, pos, view.len, &r, pairs, &count) == 0) {
        s.body += r.body_len;
        s.topic += r.topic_len;
        s.born += r.born_len;
        s.store += r.store_len;
        s.entries += count;
        for (Py_ssize_t k = 0; k < count; k++) {
            s.names += pairs[k].name_len;
            s.values += pairs[k].value_len;
        }
        pos += r.total;
        n++;
    }
    Py_END_ALLOW_THREADS
    PyObject *cols = fill(b, view.len, n, &s, pairs);
    PyMem_Free(pairs);
    PyBuffer_Release(&view);
    if (cols == NULL) return NULL;
    return Py_BuildValue("(nnN)", n, pos, cols);
}
