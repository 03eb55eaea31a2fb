/* batch_puts: a batch send's body read into the SendPuts of its messages (issue 22, batch).
 *
 *   batch_puts(body, head, rules, put_cls) -> list[SendPut] | None
 *
 * The compiled twin of, in rocketq/broker/processors/send_batch.py, BatchSender.send_batch's
 * per-message loop: message_decoder.decode_batch_messages (RocketMQ's
 * MessageDecoder.decodeMessages of a MessageBatch body: TOTALSIZE, MAGICCODE, BODYCRC, FLAG,
 * BODYLENGTH, BODY, PROPERTIESLENGTH, PROPERTIES per message), the checks (body size, no
 * DELAY, no TIMER_*, no TRAN_MSG) and the record properties (WAIT cut out, CLUSTER
 * appended, as dict(m.properties) then encode_properties writes them). Each message becomes
 * a SendPut (put_cls, a tuple subclass: rocketq.store.commitlog_send.SendPut) that
 * append_sends (append.c) encodes into the commitlog: RocketMQ's
 * CommitLog.MessageExtEncoder.encode(MessageExtBatch) in rocketq's shape.
 *
 * None whenever the Python path must decide (it then decodes the body again and words the
 * answer): an empty or malformed body, a body over the limit, properties that are not UTF-8,
 * not in their plain form (every segment NAME\x01VALUE\x02, both non-empty, no name twice),
 * over 32,767 bytes once rewritten, or carrying a name of rules' refused list.
 *
 * head  = (topic: str, queue_id: int, sys_flag: int, born_ts: int, born_host: bytes,
 *          store_host: bytes, reconsume: int, wait: bool), the fields all messages share;
 * rules = (refused: tuple[bytes, ...], wait_name: bytes, cluster_tail: bytes, max_body: int).
 */
#include "record.h"

#define BATCH_HEAD 20
#define SEP_VALUE 0x01
#define SEP_PROPERTY 0x02
#define SP_COUNT 11
#define MAX_SEGMENTS 64

typedef struct {
    Py_ssize_t start, name_len, end; /* [start, end) incl. its SEP_PROPERTY */
} Segment;

static int name_is(const unsigned char *p, Py_ssize_t n, PyObject *name) {
    return PyBytes_GET_SIZE(name) == n && memcmp(PyBytes_AS_STRING(name), p, (size_t)n) == 0;
}

/* the segments of a plain properties string; -1 when it is not plain */
static int segments_of(const unsigned char *p, Py_ssize_t n, Segment *seg) {
    int count = 0;
    Py_ssize_t i = 0;
    int ascii = 1;
    while (i < n) {
        if (count == MAX_SEGMENTS) return -1;
        Py_ssize_t s = i, sep = -1;
        while (i < n && p[i] != SEP_PROPERTY) {
            if (p[i] == SEP_VALUE) {
                if (sep >= 0) return -1;
                sep = i;
            }
            if (p[i] & 0x80) ascii = 0;
            i++;
        }
        if (i == n || sep <= s || sep + 1 == i) return -1; /* no end, no name, no value */
        seg[count].start = s;
        seg[count].name_len = sep - s;
        seg[count].end = ++i;
        for (int k = 0; k < count; k++)
            if (seg[k].name_len == sep - s && memcmp(p + seg[k].start, p + s, (size_t)(sep - s)) == 0)
                return -1;
        count++;
    }
    if (!ascii) { /* decode_properties decodes the whole string strictly */
        PyObject *text = PyUnicode_DecodeUTF8((const char *)p, n, "strict");
        if (text == NULL) {
            PyErr_Clear();
            return -1;
        }
        Py_DECREF(text);
    }
    return count;
}

/* one message's SendPut, or NULL with *skip set (the Python path decides) or an error */
static PyObject *put_of(const unsigned char *msg_body, Py_ssize_t body_len, int32_t flag,
                        const unsigned char *props, Py_ssize_t props_len, PyObject *head,
                        PyObject *refused, PyObject *wait_name, PyObject *tail,
                        PyTypeObject *cls, int *skip) {
    Segment seg[MAX_SEGMENTS];
    int count = segments_of(props, props_len, seg);
    if (count < 0) {
        *skip = 1;
        return NULL;
    }
    Py_ssize_t kept = 0, n_refused = PyTuple_GET_SIZE(refused);
    int keep[MAX_SEGMENTS];
    for (int k = 0; k < count; k++) {
        const unsigned char *name = props + seg[k].start;
        for (Py_ssize_t r = 0; r < n_refused; r++) {
            if (name_is(name, seg[k].name_len, PyTuple_GET_ITEM(refused, r))) {
                *skip = 1;
                return NULL;
            }
        }
        keep[k] = !name_is(name, seg[k].name_len, wait_name);
        if (keep[k]) kept += seg[k].end - seg[k].start;
    }
    Py_ssize_t tail_len = PyBytes_GET_SIZE(tail);
    if (kept + tail_len > INT16_MAX_LEN) {
        *skip = 1;
        return NULL;
    }
    PyObject *record_props = PyBytes_FromStringAndSize(NULL, kept + tail_len);
    if (record_props == NULL) return NULL;
    char *o = PyBytes_AS_STRING(record_props);
    for (int k = 0; k < count; k++) {
        if (!keep[k]) continue;
        memcpy(o, props + seg[k].start, (size_t)(seg[k].end - seg[k].start));
        o += seg[k].end - seg[k].start;
    }
    memcpy(o, PyBytes_AS_STRING(tail), (size_t)tail_len);
    PyObject *put = cls->tp_alloc(cls, SP_COUNT);
    if (put == NULL) {
        Py_DECREF(record_props);
        return NULL;
    }
    PyObject *items[SP_COUNT] = {
        Py_NewRef(PyTuple_GET_ITEM(head, 0)),
        Py_NewRef(PyTuple_GET_ITEM(head, 1)),
        PyBytes_FromStringAndSize((const char *)msg_body, body_len),
        record_props,
        PyLong_FromLong(flag),
        Py_NewRef(PyTuple_GET_ITEM(head, 2)),
        Py_NewRef(PyTuple_GET_ITEM(head, 3)),
        Py_NewRef(PyTuple_GET_ITEM(head, 4)),
        Py_NewRef(PyTuple_GET_ITEM(head, 5)),
        Py_NewRef(PyTuple_GET_ITEM(head, 6)),
        Py_NewRef(PyTuple_GET_ITEM(head, 7)),
    };
    int failed = 0;
    for (int k = 0; k < SP_COUNT; k++) {
        if (items[k] == NULL) failed = 1;
        PyTuple_SET_ITEM(put, k, items[k]);
    }
    if (failed) {
        Py_DECREF(put); /* tuple dealloc skips the NULL slots */
        return NULL;
    }
    return put;
}

PyObject *batch_puts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != 8 ||
        !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != 4 || !PyType_Check(args[3]) ||
        !PyType_IsSubtype((PyTypeObject *)args[3], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "batch_puts(body, head: tuple[8], rules: tuple[4], SendPut)");
        return NULL;
    }
    PyObject *head = args[1], *rules = args[2];
    PyTypeObject *cls = (PyTypeObject *)args[3];
    PyObject *refused = PyTuple_GET_ITEM(rules, 0), *wait_name = PyTuple_GET_ITEM(rules, 1);
    PyObject *tail = PyTuple_GET_ITEM(rules, 2);
    long long max_body = PyLong_AsLongLong(PyTuple_GET_ITEM(rules, 3));
    if (max_body == -1 && PyErr_Occurred()) return NULL;
    if (!PyTuple_Check(refused) || !PyBytes_Check(wait_name) || !PyBytes_Check(tail)) {
        PyErr_SetString(PyExc_TypeError, "batch_puts: rules of the wrong types");
        return NULL;
    }
    for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(refused); r++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(refused, r))) {
            PyErr_SetString(PyExc_TypeError, "batch_puts: refused names must be bytes");
            return NULL;
        }
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len, pos = 0;
    PyObject *out = PyList_New(0);
    if (out == NULL) goto fail;
    if (end == 0) goto skip;
    while (pos < end) {
        if (end - pos < BATCH_HEAD + 2) goto skip;
        int32_t total = rd_i32(b + pos), flag = rd_i32(b + pos + 12);
        int32_t body_len = rd_i32(b + pos + 16);
        Py_ssize_t p = pos + BATCH_HEAD;
        if (body_len < 0 || (Py_ssize_t)body_len > end - p - 2) goto skip;
        if ((long long)body_len > max_body) goto skip;
        const unsigned char *msg_body = b + p;
        p += body_len;
        int16_t props_len = (int16_t)((uint16_t)b[p] << 8 | b[p + 1]);
        p += 2;
        if (props_len < 0 || props_len > end - p) goto skip;
        const unsigned char *props = b + p;
        p += props_len;
        if ((Py_ssize_t)total != p - pos) goto skip;
        int skip = 0;
        PyObject *put = put_of(msg_body, body_len, flag, props, props_len, head, refused,
                               wait_name, tail, cls, &skip);
        if (put == NULL) {
            if (skip) goto skip;
            goto fail;
        }
        int rc = PyList_Append(out, put);
        Py_DECREF(put);
        if (rc < 0) goto fail;
        pos = p;
    }
    PyBuffer_Release(&view);
    return out;
skip:
    PyBuffer_Release(&view);
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    PyBuffer_Release(&view);
    Py_XDECREF(out);
    return NULL;
}

/* batch_msg_ids(prefix, slots) -> str | None: a batch's msgIds joined by commas, as
 * commitlog_send.append_batch_sends' ",".join(f"{prefix}{phy:016X}" ...) over the
 * commitlog offsets at slots[1::4] (append_sends' (status, phy, size, queue offset) a put):
 * RocketMQ's MessageExtBatch msgId list. None (the Python join decides) for a prefix that is
 * not ASCII or an offset that is negative. */
PyObject *batch_msg_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static const char HEX[] = "0123456789ABCDEF";
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "batch_msg_ids(prefix: str, slots: array)");
        return NULL;
    }
    PyObject *prefix = args[0];
    if (!PyUnicode_IS_ASCII(prefix)) Py_RETURN_NONE;
    Py_buffer buf;
    if (PyObject_GetBuffer(args[1], &buf, PyBUF_FORMAT) < 0) return NULL;
    PyObject *out = NULL;
    if (buf.itemsize != 8 || buf.format == NULL || strcmp(buf.format, "q") != 0) {
        PyErr_SetString(PyExc_TypeError, "batch_msg_ids: slots must be an array of int64");
        goto done;
    }
    Py_ssize_t items = buf.len / 8; /* four int64s a put: the offsets at 1, 5, 9, ... */
    Py_ssize_t n = items >= 2 ? (items + 2) / 4 : 0;
    const int64_t *slots = buf.buf;
    Py_ssize_t plen = PyUnicode_GET_LENGTH(prefix);
    if (n == 0) {
        out = PyUnicode_New(0, 127);
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (slots[4 * k + 1] < 0) {
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
    }
    if (plen > (PY_SSIZE_T_MAX / n) - 17) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyUnicode_New(n * (plen + 17) - 1, 127);
    if (out == NULL) goto done;
    Py_UCS1 *p = PyUnicode_1BYTE_DATA(out);
    const Py_UCS1 *pre = PyUnicode_1BYTE_DATA(prefix);
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k > 0) *p++ = ',';
        memcpy(p, pre, (size_t)plen);
        p += plen;
        uint64_t phy = (uint64_t)slots[4 * k + 1];
        for (int d = 15; d >= 0; d--, phy >>= 4) p[d] = (Py_UCS1)HEX[phy & 0xF];
        p += 16;
    }
done:
    PyBuffer_Release(&buf);
    return out;
}
