/* decode_records: MessageExt objects of back-to-back records (a pull body). */
#include "record.h"
#include <structmember.h>

#define N_FIELDS 18

/* The MessageExt fields in the order decode_records builds them (dataclasses.fields order). */
static const char *const FIELD_NAMES[N_FIELDS] = {
    "topic",           "body",        "flag",          "properties",     "transaction_id",
    "queue_id",        "store_size",  "queue_offset",  "sys_flag",       "born_timestamp",
    "born_host",       "store_timestamp", "store_host", "msg_id",        "commitlog_offset",
    "body_crc",        "reconsume_times", "prepared_transaction_offset"};

/* Where each field's slot lies in an instance of message_cls, found once per class: a
 * dataclass(slots=True) of exactly those fields in writable object slots, no __dict__, no
 * __post_init__ and object's __new__ is filled slot by slot (what its generated __init__ does,
 * without the call); any other class is called with the 18 values. */
static PyObject *slots_cls; /* the class the offsets are of (a strong reference) */
static Py_ssize_t slot_offsets[N_FIELDS];
static int slots_ok;

static int slots_usable(PyTypeObject *t) {
    if (t->tp_new != PyBaseObject_Type.tp_new || t->tp_dictoffset != 0 || t->tp_itemsize != 0)
        return 0;
    if (PyObject_HasAttrString((PyObject *)t, "__post_init__")) return 0;
    PyObject *declared = PyObject_GetAttrString((PyObject *)t, "__dataclass_fields__");
    if (declared == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_ssize_t n = PyDict_Check(declared) ? PyDict_Size(declared) : -1;
    Py_DECREF(declared);
    if (n != N_FIELDS) return 0; /* a field more (its default) or less: the call decides */
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *name = PyUnicode_InternFromString(FIELD_NAMES[i]);
        if (name == NULL) return -1;
        PyObject *d = _PyType_Lookup(t, name); /* borrowed */
        Py_DECREF(name);
        if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) return 0;
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY)) return 0;
        slot_offsets[i] = m->offset;
    }
    return 1;
}

/* 1: instances of cls are filled by slot; 0: call cls; -1: an error */
static int slots_of(PyObject *cls) {
    if (cls == slots_cls) return slots_ok;
    if (!PyType_Check(cls)) return 0;
    int ok = slots_usable((PyTypeObject *)cls);
    if (ok < 0) return -1;
    Py_XSETREF(slots_cls, Py_NewRef(cls));
    slots_ok = ok;
    return ok;
}

/* a new instance of cls with its slots set from a (the references are taken: a[i] = NULL) */
static PyObject *filled(PyTypeObject *cls, PyObject **a) {
    PyObject *obj = cls->tp_alloc(cls, 0);
    if (obj == NULL) return NULL;
    for (int i = 0; i < N_FIELDS; i++) {
        *(PyObject **)((char *)obj + slot_offsets[i]) = a[i];
        a[i] = NULL;
    }
    return obj;
}

/* the property names of the records seen so far in one call: a run of records repeats them,
 * so each repeat is the same str (its hash kept) instead of a new one */
static PyObject *S_MIN_OFFSET, *S_MAX_OFFSET;

int decode_setup(void) {
    S_MIN_OFFSET = PyUnicode_InternFromString("MIN_OFFSET");
    S_MAX_OFFSET = PyUnicode_InternFromString("MAX_OFFSET");
    return S_MIN_OFFSET && S_MAX_OFFSET ? 0 : -1;
}

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

/* decode_records(buf, pos, check_crc, read_body, decompress, message_cls, host_of
 *                [, min_offset_text, max_offset_text])
 *     -> (list, pos, stopped)
 * MessageExt objects for the records from pos to the end of buf; stopped is True when the
 * record at pos is left to the pure-Python decoder (corrupt, compressed with decompress
 * asked, bad UTF-8), which then raises or decodes it. With the two texts (a pull's answer:
 * client/aio/pull_api.py's process_pull_body_reference is the reference), each message also gets
 * MIN_OFFSET and MAX_OFFSET in its properties and its UNIQ_KEY, when it has one, as msg_id. */
PyObject *decode_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 && nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "decode_records takes 7 or 9 arguments");
        return NULL;
    }
    PyObject *min_text = nargs == 9 ? args[7] : NULL, *max_text = nargs == 9 ? args[8] : NULL;
    if (min_text != NULL && (!PyUnicode_CheckExact(min_text) || !PyUnicode_CheckExact(max_text))) {
        PyErr_SetString(PyExc_TypeError, "decode_records: the offset texts must be str");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    int check_crc = PyObject_IsTrue(args[2]), read_body = PyObject_IsTrue(args[3]);
    int decompress = PyObject_IsTrue(args[4]);
    PyObject *cls = args[5], *host_of = args[6];
    if (PyErr_Occurred()) return NULL;
    int by_slots = slots_of(cls);
    if (by_slots < 0) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *list = PyList_New(0);
    TopicCache tc = {NULL, 0, NULL};
    KeyCache kc;
    kc.n = 0;
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
        PyObject *a[N_FIELDS] = {NULL};
        PyObject *msg = NULL;
        a[0] = cached_topic(&tc, r.topic, r.topic_len);
        a[3] = a[0] ? parse_properties_keyed(&kc, r.props, r.props_len) : NULL;
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
        a[13] = NULL;
        if (min_text != NULL) {
            PyObject *uniq = PyDict_GetItemWithError(a[3], S_UNIQ_KEY); /* borrowed */
            if (uniq != NULL) a[13] = Py_NewRef(uniq);
            if (PyErr_Occurred() || PyDict_SetItem(a[3], S_MIN_OFFSET, min_text) < 0 ||
                PyDict_SetItem(a[3], S_MAX_OFFSET, max_text) < 0) {
                for (int i = 0; i < N_FIELDS; i++) Py_XDECREF(a[i]);
                goto fail;
            }
        }
        if (a[13] == NULL) a[13] = hex_msg_id(r.store, r.store_len, r.phy);
        a[14] = PyLong_FromLongLong(r.phy);
        a[15] = PyLong_FromLong(r.crc);
        a[16] = PyLong_FromLong(r.reconsume);
        a[17] = PyLong_FromLongLong(r.prepared);
        int ok = 1;
        for (int i = 0; i < N_FIELDS; i++) ok = ok && a[i] != NULL;
        if (ok) msg = by_slots ? filled((PyTypeObject *)cls, a) : PyObject_Vectorcall(cls, a, N_FIELDS, NULL);
        for (int i = 0; i < N_FIELDS; i++) Py_XDECREF(a[i]);
        if (msg == NULL) goto fail;
        int rc = PyList_Append(list, msg);
        Py_DECREF(msg);
        if (rc < 0) goto fail;
        pos += r.total;
    }
    Py_XDECREF(tc.str);
    key_cache_clear(&kc);
    Py_XDECREF(born_c.host);
    Py_XDECREF(store_c.host);
    PyBuffer_Release(&view);
    return Py_BuildValue("(NnO)", list, pos, stopped ? Py_True : Py_False);
fail:
    Py_XDECREF(tc.str);
    key_cache_clear(&kc);
    Py_XDECREF(born_c.host);
    Py_XDECREF(store_c.host);
    Py_XDECREF(list);
    PyBuffer_Release(&view);
    return NULL;
}
