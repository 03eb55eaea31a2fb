/* decode_records: MessageExt objects of back-to-back records (a pull body). */
#include "record.h"

static PyObject *hex_msg_id(const unsigned char *store, Py_ssize_t store_len, int64_t phy) {
    static const char digits[] = "0123456789ABCDEF";
    unsigned char raw[28];
    memcpy(raw, store, (size_t)store_len);
    wr_u64(raw + store_len, (uint64_t)phy);
    Py_ssize_t n = store_len + 8;
    PyObject *s = PyUnicode_New(n * 2, 127);
    if (s == NULL) return NULL;
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++) {
        out[2 * i] = (Py_UCS1)digits[raw[i] >> 4];
        out[2 * i + 1] = (Py_UCS1)digits[raw[i] & 15];
    }
    return s;
}

typedef struct {
    unsigned char raw[20];
    Py_ssize_t len;
    PyObject *host;
} HostCache;

static PyObject *cached_host(HostCache *hc, const unsigned char *p, Py_ssize_t n, PyObject *host_of) {
    if (hc->host != NULL && hc->len == n && memcmp(hc->raw, p, (size_t)n) == 0) return Py_NewRef(hc->host);
    PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n);
    if (raw == NULL) return NULL;
    PyObject *host = PyObject_CallOneArg(host_of, raw);
    Py_DECREF(raw);
    if (host == NULL) return NULL;
    Py_XSETREF(hc->host, Py_NewRef(host));
    memcpy(hc->raw, p, (size_t)n);
    hc->len = n;
    return host;
}

/* decode_records(buf, pos, check_crc, read_body, decompress, message_cls, host_of)
 *     -> (list, pos, stopped)
 * MessageExt objects for the records from pos to the end of buf; stopped is True when the
 * record at pos is left to the pure-Python decoder (corrupt, compressed with decompress
 * asked, bad UTF-8), which then raises or decodes it. */
PyObject *decode_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "decode_records takes 7 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    int check_crc = PyObject_IsTrue(args[2]), read_body = PyObject_IsTrue(args[3]);
    int decompress = PyObject_IsTrue(args[4]);
    PyObject *cls = args[5], *host_of = args[6];
    if (PyErr_Occurred()) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *list = PyList_New(0);
    TopicCache tc = {NULL, 0, NULL};
    HostCache born_c = {{0}, 0, NULL}, store_c = {{0}, 0, NULL};
    int stopped = 0;
    if (list == NULL) goto fail;
    if (pos < 0 || pos > view.len) {
        PyErr_SetString(PyExc_ValueError, "decode position outside the buffer");
        goto fail;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t limit = view.len;
    Record r;
    while (pos < limit) {
        if (limit - pos < MIN_RECORD_SIZE) {
            stopped = 1;
            break;
        }
        uint32_t magic = rd_u32(b + pos + R_MAGIC);
        if ((magic != MAGIC_V1 && magic != MAGIC_V2) || parse_record(b, pos, limit, &r) < 0 ||
            (check_crc && body_crc_of(r.body, r.body_len) != r.crc) ||
            (read_body && decompress && (r.sys_flag & COMPRESSED_FLAG))) {
            stopped = 1;
            break;
        }
        PyObject *a[18] = {NULL};
        PyObject *msg = NULL;
        a[0] = cached_topic(&tc, r.topic, r.topic_len);
        a[3] = a[0] ? parse_properties(r.props, r.props_len) : NULL;
        if (a[3] == NULL) {
            Py_XDECREF(a[0]);
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto fail;
            PyErr_Clear();
            stopped = 1;
            break;
        }
        a[1] = read_body ? PyBytes_FromStringAndSize((const char *)r.body, r.body_len)
                         : PyBytes_FromStringAndSize(NULL, 0);
        a[2] = PyLong_FromLong(r.flag);
        a[4] = Py_NewRef(Py_None);
        a[5] = PyLong_FromLong(r.queue_id);
        a[6] = PyLong_FromLong(r.total);
        a[7] = PyLong_FromLongLong(r.queue_offset);
        a[8] = PyLong_FromLong(r.sys_flag);
        a[9] = PyLong_FromLongLong(r.born_ts);
        a[10] = cached_host(&born_c, r.born, r.born_len, host_of);
        a[11] = PyLong_FromLongLong(r.store_ts);
        a[12] = cached_host(&store_c, r.store, r.store_len, host_of);
        a[13] = hex_msg_id(r.store, r.store_len, r.phy);
        a[14] = PyLong_FromLongLong(r.phy);
        a[15] = PyLong_FromLong(r.crc);
        a[16] = PyLong_FromLong(r.reconsume);
        a[17] = PyLong_FromLongLong(r.prepared);
        int ok = 1;
        for (int i = 0; i < 18; i++) ok = ok && a[i] != NULL;
        if (ok) msg = PyObject_Vectorcall(cls, a, 18, NULL);
        for (int i = 0; i < 18; i++) Py_XDECREF(a[i]);
        if (msg == NULL) goto fail;
        int rc = PyList_Append(list, msg);
        Py_DECREF(msg);
        if (rc < 0) goto fail;
        pos += r.total;
    }
    Py_XDECREF(tc.str);
    Py_XDECREF(born_c.host);
    Py_XDECREF(store_c.host);
    PyBuffer_Release(&view);
    return Py_BuildValue("(NnO)", list, pos, stopped ? Py_True : Py_False);
fail:
    Py_XDECREF(tc.str);
    Py_XDECREF(born_c.host);
    Py_XDECREF(store_c.host);
    Py_XDECREF(list);
    PyBuffer_Release(&view);
    return NULL;
}
