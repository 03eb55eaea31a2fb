/* append_sends: the pass-through single sends of one flush encoded straight into the mapped
 * file (issue 22, lever 1), under the CommitLog put lock the caller holds.
 *
 * The compiled twin of, for each put, message_decoder.encode_message (the record) followed
 * by CommitLog._append_locked (queue offset from topic_queue_table, PHYSICALOFFSET,
 * STORETIMESTAMP, the copy into the mapped file): one record is written in place instead of
 * being built in a bytearray and copied. The walk stops before the first put that does not
 * fit the file with END_FILE_MIN_BLANK_LENGTH to spare; the caller writes the blank record,
 * rolls to the next file (MappedFileQueue, in Python) and calls again from there, so the
 * file roll, the wrote position and the blank END_OF_FILE record stay the Python code's.
 *
 *   append_sends(dest, pos, file_size, file_from_offset, puts, start, table,
 *                store_timestamp, max_record_size, out) -> (next_index, next_pos)
 *
 * puts[i] is a SendPut (rocketq.store.message_writer): (topic, queue_id, body, properties,
 * flag, sys_flag, born_timestamp, born_host, store_host, reconsume_times,
 * wait_store_msg_ok), the hosts as their 8 or 20 bytes (message_id.host_to_bytes). For each put
 * handled, out (a writable buffer of int64 in native byte order, 4 per put, indexed by the
 * put's position in puts) gets (status, PHYSICALOFFSET, TOTALSIZE, QUEUEOFFSET): status 0 is
 * appended, 1 PROPERTIES_SIZE_EXCEEDED, 2 MESSAGE_ILLEGAL (the statuses MessageWriter._encode
 * gives for the same put). A put that is not a SendPut of the expected types, or whose queue
 * offset cannot be read or set, is refused as 2 before anything of it is written; the walk
 * itself raises only for bad arguments, before it writes anything.
 */
#include "record.h"

#include <limits.h>

#define SP_FIELDS 11
#define TRAN_MASK 0xC
#define TRAN_PREPARED 0x4
#define TRAN_ROLLBACK 0xC

enum { OUT_OK = 0, OUT_PROPERTIES_SIZE_EXCEEDED = 1, OUT_ILLEGAL = 2 };

static int field_i64(PyObject *o, int64_t *out) {
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "SendPut numbers must be ints");
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int64_t)v;
    return overflow ? 1 : 0;
}

/* the put's int32 fields: 1 when one does not fit (the encoder's OverflowError: ILLEGAL) */
static int field_i32(PyObject *o, int32_t *out) {
    int64_t v;
    int rc = field_i64(o, &v);
    if (rc != 0) return rc;
    if (v < INT32_MIN || v > INT32_MAX) return 1;
    *out = (int32_t)v;
    return 0;
}

/* the queue offset table's value for key, 0 when absent (topic_queue_table.get(key, 0)) */
static int queue_offset_of(PyObject *table, PyObject *key, int64_t *out) {
    PyObject *v = PyDict_GetItemWithError(table, key);
    if (v == NULL) {
        if (PyErr_Occurred()) return -1;
        *out = 0;
        return 0;
    }
    return field_i64(v, out) == 0 ? 0 : -1;
}

typedef struct {
    const char *topic;
    Py_ssize_t topic_len;
    int32_t queue_id, flag, sys_flag, reconsume;
    int64_t born_ts;
    Py_buffer body, props, born, store;
} Put;

static void put_release(Put *p) {
    if (p->body.obj) PyBuffer_Release(&p->body);
    if (p->props.obj) PyBuffer_Release(&p->props);
    if (p->born.obj) PyBuffer_Release(&p->born);
    if (p->store.obj) PyBuffer_Release(&p->store);
}

/* read puts[i]; -1 error, 0 ok, 1 a field that fits no record (ILLEGAL) */
static int put_read(PyObject *item, Put *p) {
    memset(p, 0, sizeof *p);
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != SP_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "puts must hold SendPut tuples");
        return -1;
    }
    PyObject *topic = PyTuple_GET_ITEM(item, 0);
    if (!PyUnicode_Check(topic)) {
        PyErr_SetString(PyExc_TypeError, "SendPut topic must be a str");
        return -1;
    }
    p->topic = PyUnicode_AsUTF8AndSize(topic, &p->topic_len);
    if (p->topic == NULL) return -1;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(item, 2), &p->body, PyBUF_SIMPLE) < 0 ||
        PyObject_GetBuffer(PyTuple_GET_ITEM(item, 3), &p->props, PyBUF_SIMPLE) < 0 ||
        PyObject_GetBuffer(PyTuple_GET_ITEM(item, 7), &p->born, PyBUF_SIMPLE) < 0 ||
        PyObject_GetBuffer(PyTuple_GET_ITEM(item, 8), &p->store, PyBUF_SIMPLE) < 0)
        return -1;
    if ((p->born.len != 8 && p->born.len != 20) || (p->store.len != 8 && p->store.len != 20)) {
        PyErr_SetString(PyExc_ValueError, "SendPut hosts must be 8 or 20 bytes");
        return -1;
    }
    int rc, bad = 0;
    if ((rc = field_i32(PyTuple_GET_ITEM(item, 1), &p->queue_id)) < 0) return -1;
    bad |= rc;
    if ((rc = field_i32(PyTuple_GET_ITEM(item, 4), &p->flag)) < 0) return -1;
    bad |= rc;
    if ((rc = field_i32(PyTuple_GET_ITEM(item, 5), &p->sys_flag)) < 0) return -1;
    bad |= rc;
    if ((rc = field_i64(PyTuple_GET_ITEM(item, 6), &p->born_ts)) < 0) return -1;
    bad |= rc;
    if ((rc = field_i32(PyTuple_GET_ITEM(item, 9), &p->reconsume)) < 0) return -1;
    bad |= rc;
    return bad;
}

PyObject *append_sends(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "append_sends takes 10 arguments");
        return NULL;
    }
    PyObject *puts = args[4], *table = args[6], *result = NULL;
    if (!PyList_Check(puts) || !PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "append_sends wants a list of puts and a dict");
        return NULL;
    }
    Py_buffer dest = {0}, out = {0};
    if (PyObject_GetBuffer(args[0], &dest, PyBUF_WRITABLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[9], &out, PyBUF_WRITABLE) < 0) goto done;
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]), file_size = PyLong_AsSsize_t(args[2]);
    Py_ssize_t start = PyLong_AsSsize_t(args[5]);
    int64_t file_from, now, max_record;
    if (PyErr_Occurred() || field_i64(args[3], &file_from) != 0 || field_i64(args[7], &now) != 0 ||
        field_i64(args[8], &max_record) != 0)
        goto done;
    Py_ssize_t n = PyList_GET_SIZE(puts);
    if (pos < 0 || file_size < 0 || file_size > dest.len || pos > file_size || start < 0 ||
        start > n || (out.len / (Py_ssize_t)sizeof(int64_t)) < 4 * n) {
        PyErr_SetString(PyExc_ValueError, "append_sends: positions or buffers out of range");
        goto done;
    }
    unsigned char *base = (unsigned char *)dest.buf;
    int64_t *o = (int64_t *)out.buf;
    Py_ssize_t i = start;
    for (; i < n; i++) {
        Put p;
        int64_t *slot = o + 4 * i;
        int rc = put_read(PyList_GET_ITEM(puts, i), &p);
        if (rc < 0) { /* not a SendPut: refused as ILLEGAL, the others go on */
            PyErr_Clear();
            put_release(&p);
            slot[0] = OUT_ILLEGAL;
            continue;
        }
        int32_t sys_flag = p.sys_flag & ~(BORNHOST_V6 | STOREHOST_V6);
        if (p.born.len == 20) sys_flag |= BORNHOST_V6;
        if (p.store.len == 20) sys_flag |= STOREHOST_V6;
        int v2 = p.topic_len > V1_TOPIC_MAX;
        long long total = (long long)fixed_size(sys_flag) + p.body.len + (v2 ? 2 : 1) +
                          p.topic_len + 2 + p.props.len;
        if (rc == 0 && p.props.len > INT16_MAX_LEN) {
            slot[0] = OUT_PROPERTIES_SIZE_EXCEEDED;
            put_release(&p);
            continue;
        }
        if (rc != 0 || p.topic_len > INT16_MAX_LEN || p.body.len > INT32_MAX ||
            total > INT32_MAX || total > max_record) {
            slot[0] = OUT_ILLEGAL;
            put_release(&p);
            continue;
        }
        if (total + BLANK_SIZE > file_size - pos) {
            put_release(&p);
            if (pos == 0) { /* not even an empty file holds it */
                slot[0] = OUT_ILLEGAL;
                continue;
            }
            break; /* the caller ends this file and calls again */
        }
        int has_cq = (sys_flag & TRAN_MASK) != TRAN_PREPARED && (sys_flag & TRAN_MASK) != TRAN_ROLLBACK;
        int64_t queue_offset = 0;
        if (has_cq) {
            PyObject *key = PyUnicode_FromFormat("%U-%d", PyTuple_GET_ITEM(PyList_GET_ITEM(puts, i), 0),
                                       (int)p.queue_id);
            PyObject *next = NULL;
            int ok = key != NULL && queue_offset_of(table, key, &queue_offset) == 0 &&
                     (next = PyLong_FromLongLong(queue_offset + 1)) != NULL &&
                     PyDict_SetItem(table, key, next) == 0; /* under the put lock: written next */
            Py_XDECREF(next);
            Py_XDECREF(key);
            if (!ok) { /* nothing of this put written: refused, the others go on */
                PyErr_Clear();
                put_release(&p);
                slot[0] = OUT_ILLEGAL;
                continue;
            }
        }
        int64_t phy = file_from + pos;
        unsigned char *r = base + pos;
        const unsigned char *bp = (const unsigned char *)p.body.buf;
        wr_u32(r + R_TOTAL, (uint32_t)total);
        wr_u32(r + R_MAGIC, v2 ? MAGIC_V2 : MAGIC_V1);
        wr_u32(r + R_CRC, (uint32_t)body_crc_of(bp, p.body.len));
        wr_u32(r + R_QUEUE_ID, (uint32_t)p.queue_id);
        wr_u32(r + R_FLAG, (uint32_t)p.flag);
        wr_u64(r + R_QUEUE_OFFSET, (uint64_t)queue_offset);
        wr_u64(r + R_PHY, (uint64_t)phy);
        wr_u32(r + R_SYSFLAG, (uint32_t)sys_flag);
        wr_u64(r + R_BORN_TS, (uint64_t)p.born_ts);
        unsigned char *w = r + R_BORN_HOST;
        memcpy(w, p.born.buf, (size_t)p.born.len);
        w += p.born.len;
        wr_u64(w, (uint64_t)now);
        w += 8;
        memcpy(w, p.store.buf, (size_t)p.store.len);
        w += p.store.len;
        wr_u32(w, (uint32_t)p.reconsume);
        wr_u64(w + 4, 0); /* PREPAREDTRANSACTIONOFFSET */
        wr_u32(w + 12, (uint32_t)p.body.len);
        w += 16;
        if (p.body.len) memcpy(w, bp, (size_t)p.body.len);
        w += p.body.len;
        if (v2) {
            wr_u16(w, (uint16_t)p.topic_len);
            w += 2;
        } else {
            *w++ = (unsigned char)p.topic_len;
        }
        memcpy(w, p.topic, (size_t)p.topic_len);
        w += p.topic_len;
        wr_u16(w, (uint16_t)p.props.len);
        w += 2;
        if (p.props.len) memcpy(w, p.props.buf, (size_t)p.props.len);
        put_release(&p);
        slot[0] = OUT_OK;
        slot[1] = phy;
        slot[2] = (int64_t)total;
        slot[3] = queue_offset;
        pos += (Py_ssize_t)total;
    }
    result = Py_BuildValue("nn", i, pos);
done:
    if (dest.obj) PyBuffer_Release(&dest);
    if (out.obj) PyBuffer_Release(&out);
    return result;
}
