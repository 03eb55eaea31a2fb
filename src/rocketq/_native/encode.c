/* encode_record, encode_message_ext and write_record: records built and appended. */
#include "record.h"

#include <limits.h>


static int as_i32(PyObject *o, const char *name, int32_t *out) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s %lld does not fit a 4-byte field", name, v);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

static int as_i64(PyObject *o, int64_t *out) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int64_t)v;
    return 0;
}

static int formatted_utf8(PyObject *o, PyObject *keep, const char **s, Py_ssize_t *n) {
    PyObject *str;
    if (PyUnicode_CheckExact(o)) {
        Py_INCREF(o);
        str = o;
    } else {
        str = PyObject_Format(o, S_EMPTY);
        if (str == NULL) return -1;
    }
    int rc = PyList_Append(keep, str);
    Py_DECREF(str);
    if (rc < 0) return -1;
    *s = PyUnicode_AsUTF8AndSize(str, n);
    return *s == NULL ? -1 : 0;
}

/* encode_record(topic, body, properties, born, store, sys_flag, queue_id, flag, queue_offset,
 *               commitlog_offset, born_timestamp, store_timestamp, reconsume_times,
 *               prepared_transaction_offset) -> bytearray */
PyObject *encode_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 14) {
        PyErr_SetString(PyExc_TypeError, "encode_record takes 14 arguments");
        return NULL;
    }
    PyObject *result = NULL, *keep = NULL;
    Py_buffer body = {0}, born = {0}, store = {0}, props_buf = {0};
    int32_t sys_flag, queue_id, flag, reconsume;
    int64_t queue_offset, phy, born_ts, store_ts, prepared;
    Py_ssize_t topic_len, props_len = 0;
    const char *topic;

    if (!PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "topic must be a str");
        return NULL;
    }
    topic = PyUnicode_AsUTF8AndSize(args[0], &topic_len);
    if (topic == NULL) return NULL;
    if (args[1] != Py_None && PyObject_GetBuffer(args[1], &body, PyBUF_SIMPLE) < 0) goto done;
    if (PyObject_GetBuffer(args[3], &born, PyBUF_SIMPLE) < 0) goto done;
    if (PyObject_GetBuffer(args[4], &store, PyBUF_SIMPLE) < 0) goto done;
    if (as_i32(args[5], "SYSFLAG", &sys_flag) < 0 || as_i32(args[6], "QUEUEID", &queue_id) < 0 ||
        as_i32(args[7], "FLAG", &flag) < 0 || as_i64(args[8], &queue_offset) < 0 ||
        as_i64(args[9], &phy) < 0 || as_i64(args[10], &born_ts) < 0 ||
        as_i64(args[11], &store_ts) < 0 || as_i32(args[12], "RECONSUMETIMES", &reconsume) < 0 ||
        as_i64(args[13], &prepared) < 0)
        goto done;
    if (born.len != host_size(sys_flag, BORNHOST_V6) || store.len != host_size(sys_flag, STOREHOST_V6)) {
        PyErr_SetString(PyExc_ValueError, "host bytes disagree with the SYSFLAG host bits");
        goto done;
    }

    /* properties: a dict is written out here; anything else must be the encoded bytes */
    PyObject *props = args[2];
    if (props != Py_None && PyDict_Check(props)) {
        keep = PyList_New(0);
        if (keep == NULL) goto done;
        PyObject *k, *v;
        Py_ssize_t i = 0;
        while (PyDict_Next(props, &i, &k, &v)) {
            if (v == Py_None) continue;
            const char *s;
            Py_ssize_t n, m;
            if (formatted_utf8(k, keep, &s, &n) < 0 || formatted_utf8(v, keep, &s, &m) < 0)
                goto done;
            props_len += n + m + 2;
        }
    } else if (props != Py_None) {
        if (PyObject_GetBuffer(props, &props_buf, PyBUF_SIMPLE) < 0) goto done;
        props_len = props_buf.len;
    }
    int v2 = topic_len > V1_TOPIC_MAX;
    if (topic_len > INT16_MAX_LEN) {
        PyErr_Format(PyExc_ValueError, "topic of %zd bytes does not fit TOPICLENGTH", topic_len);
        goto done;
    }
    if (props_len > INT16_MAX_LEN) {
        PyErr_Format(PyExc_ValueError, "properties of %zd bytes do not fit PROPERTIESLENGTH", props_len);
        goto done;
    }
    Py_ssize_t fixed = fixed_size(sys_flag);
    long long total = (long long)fixed + body.len + (v2 ? 2 : 1) + topic_len + 2 + props_len;
    if (body.len > INT32_MAX || total > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "a record of %lld bytes does not fit TOTALSIZE", total);
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (result == NULL) goto done;
    unsigned char *r = (unsigned char *)PyByteArray_AS_STRING(result);
    const unsigned char *bp = (const unsigned char *)body.buf;
    wr_u32(r + R_TOTAL, (uint32_t)total);
    wr_u32(r + R_MAGIC, v2 ? MAGIC_V2 : MAGIC_V1);
    wr_u32(r + R_CRC, (uint32_t)body_crc_of(bp, body.len));
    wr_u32(r + R_QUEUE_ID, (uint32_t)queue_id);
    wr_u32(r + R_FLAG, (uint32_t)flag);
    wr_u64(r + R_QUEUE_OFFSET, (uint64_t)queue_offset);
    wr_u64(r + R_PHY, (uint64_t)phy);
    wr_u32(r + R_SYSFLAG, (uint32_t)sys_flag);
    wr_u64(r + R_BORN_TS, (uint64_t)born_ts);
    unsigned char *p = r + R_BORN_HOST;
    memcpy(p, born.buf, (size_t)born.len);
    p += born.len;
    wr_u64(p, (uint64_t)store_ts);
    p += 8;
    memcpy(p, store.buf, (size_t)store.len);
    p += store.len;
    wr_u32(p, (uint32_t)reconsume);
    wr_u64(p + 4, (uint64_t)prepared);
    wr_u32(p + 12, (uint32_t)body.len);
    p += 16;
    if (body.len) memcpy(p, bp, (size_t)body.len);
    p += body.len;
    if (v2) {
        wr_u16(p, (uint16_t)topic_len);
        p += 2;
    } else {
        *p++ = (unsigned char)topic_len;
    }
    memcpy(p, topic, (size_t)topic_len);
    p += topic_len;
    wr_u16(p, (uint16_t)props_len);
    p += 2;
    if (keep != NULL) {
        Py_ssize_t n = PyList_GET_SIZE(keep);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t len;
            const char *s = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(keep, i), &len);
            memcpy(p, s, (size_t)len);
            p += len;
            *p++ = (i & 1) ? 0x02 : 0x01;
        }
    } else if (props_len) {
        memcpy(p, props_buf.buf, (size_t)props_len);
    }
done:
    Py_XDECREF(keep);
    if (body.obj) PyBuffer_Release(&body);
    if (born.obj) PyBuffer_Release(&born);
    if (store.obj) PyBuffer_Release(&store);
    if (props_buf.obj) PyBuffer_Release(&props_buf);
    return result;
}

/* encode_message_ext(msg, host_to_bytes) -> bytearray: encode_message in one call, the
 * message's fields read here; host_to_bytes turns each (ip, port) into its 8 or 20 bytes and
 * the host bits of SYSFLAG follow their lengths (as in the Python encode_message). */
static PyObject *S_ATTR[14];
static const char *ATTR_NAMES[14] = {
    "topic", "body", "properties", "born_host", "store_host", "sys_flag", "queue_id", "flag",
    "queue_offset", "commitlog_offset", "born_timestamp", "store_timestamp", "reconsume_times",
    "prepared_transaction_offset",
};

PyObject *encode_message_ext(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode_message_ext takes 2 arguments");
        return NULL;
    }
    PyObject *a[14] = {NULL};
    PyObject *result = NULL;
    for (int i = 0; i < 14; i++) {
        a[i] = PyObject_GetAttr(args[0], S_ATTR[i]);
        if (a[i] == NULL) goto done;
    }
    if (a[1] == Py_None || (PyBytes_Check(a[1]) && PyBytes_GET_SIZE(a[1]) == 0)) {
        Py_SETREF(a[1], Py_NewRef(Py_None)); /* msg.body or b"" */
    }
    for (int i = 3; i <= 4; i++) {
        PyObject *raw = PyObject_CallOneArg(args[1], a[i]);
        if (raw == NULL) goto done;
        Py_SETREF(a[i], raw);
        if (!PyBytes_Check(raw) || (PyBytes_GET_SIZE(raw) != 8 && PyBytes_GET_SIZE(raw) != 20)) {
            PyErr_SetString(PyExc_ValueError, "host_to_bytes gave neither 8 nor 20 bytes");
            goto done;
        }
    }
    long flag = PyLong_AsLong(a[5]);
    if (flag == -1 && PyErr_Occurred()) goto done;
    flag &= ~(long)(BORNHOST_V6 | STOREHOST_V6);
    if (PyBytes_GET_SIZE(a[3]) == 20) flag |= BORNHOST_V6;
    if (PyBytes_GET_SIZE(a[4]) == 20) flag |= STOREHOST_V6;
    PyObject *flag_obj = PyLong_FromLong(flag);
    if (flag_obj == NULL) goto done;
    Py_SETREF(a[5], flag_obj);
    if (a[2] != Py_None && !PyDict_CheckExact(a[2])) {
        PyErr_SetString(PyExc_TypeError, "properties must be a dict (or None)");
        goto done;
    }
    result = encode_record(self, a, 14);
done:
    for (int i = 0; i < 14; i++) Py_XDECREF(a[i]);
    return result;
}

/* write_record(dest, pos, record, queue_offset, phy, store_ts_pos, store_ts): the locked half of
 * CommitLog._append_locked: copy the record into the mapped file and patch QUEUEOFFSET,
 * PHYSICALOFFSET and STORETIMESTAMP there (the caller's record is left as it was). */
PyObject *write_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "write_record takes 7 arguments");
        return NULL;
    }
    Py_buffer dest, rec;
    if (PyObject_GetBuffer(args[0], &dest, PyBUF_WRITABLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[2], &rec, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&dest);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]), ts_pos = PyLong_AsSsize_t(args[5]);
    int64_t queue_offset, phy, store_ts;
    if (PyErr_Occurred() || as_i64(args[3], &queue_offset) < 0 || as_i64(args[4], &phy) < 0 ||
        as_i64(args[6], &store_ts) < 0)
        goto done;
    if (pos < 0 || rec.len > dest.len - pos || rec.len < R_BORN_HOST || ts_pos < R_BORN_HOST ||
        ts_pos > rec.len - 8) {
        PyErr_SetString(PyExc_ValueError, "record does not fit at that position");
        goto done;
    }
    unsigned char *d = (unsigned char *)dest.buf + pos;
    memcpy(d, rec.buf, (size_t)rec.len);
    wr_u64(d + R_QUEUE_OFFSET, (uint64_t)queue_offset);
    wr_u64(d + R_PHY, (uint64_t)phy);
    wr_u64(d + ts_pos, (uint64_t)store_ts);
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&dest);
    PyBuffer_Release(&rec);
    return result;
}


int encode_setup(void) {
    for (int i = 0; i < 14; i++) {
        S_ATTR[i] = PyUnicode_InternFromString(ATTR_NAMES[i]);
        if (S_ATTR[i] == NULL) return -1;
    }
    return 0;
}
