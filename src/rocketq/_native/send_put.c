/* send_put_of: a SEND_MESSAGE_V2 request's put read straight from its extFields (issue 22,
 * lever 1), for the sends the broker's fast path takes.
 *
 *   send_put_of(fields, body, rules, put_cls, born_host, store_host) -> SendPut | None
 *
 * The compiled twin of, in SendMessageProcessor (rocketq/broker/processors/send.py),
 * SendMessageRequestHeaderV2.decode_as_v1 followed by _prepare_one's pass-through branch
 * (send_properties.pass_through): the topic (b), queue id (e), sysflag (f), born time (g),
 * flag (h), properties (i) and reconsume count (j) of the V2 header, the record's properties
 * (the producer's string with its WAIT segment cut out and CLUSTER appended) and the WAIT
 * flag, as a SendPut (put_cls, a tuple subclass: rocketq.store.commitlog.SendPut).
 *
 * None whenever the Python path must decide, which then reads the request again from the
 * start: a value not in its plain form (a number that is not canonical decimal in range, a
 * bool not "true"/"false", a value not a str), a required field missing, a batch, a negative
 * queue id (the processor picks one), a body over the limit, properties that are not UTF-8
 * or over 32,767 bytes, a retry topic, a transaction flag, or a property a broker rule
 * needs the decoded map for (rules: the markers "NAME\x01" send_properties lists), a WAIT
 * the map would read differently. The topic's checks (permission, name, existence,
 * writability, queue range) stay in Python, per topic.
 *
 * rules = (markers: tuple[bytes, ...], wait_marker: bytes, cluster_tail: bytes,
 *          retry_prefix: bytes, max_body: int), built once from the Python constants.
 */
#include "remoting.h"

#include <limits.h>

#define PROPERTIES_MAX 32767
#define TRAN_MASK 0xC
#define SEP_VALUE 0x01
#define SEP_PROPERTY 0x02

/* a request's extFields: its dict, or (dict NULL) its items' spans (header.c) */
typedef struct {
    PyObject *dict;
    const FieldSpan *spans;
    Py_ssize_t n;
} Fields;

/* a str value of fields[key], as UTF-8; NULL (no exception) when absent or not a str */
static const char *text_of(const Fields *f, const char *key, Py_ssize_t *n, int *bad) {
    if (f->dict == NULL) { /* the last item of the key wins; a null one is no item */
        size_t m = strlen(key);
        for (Py_ssize_t i = f->n - 1; i >= 0; i--) {
            const FieldSpan *s = &f->spans[i];
            if ((size_t)s->key_len != m || memcmp(s->key, key, m) != 0) continue;
            if (s->is_null) return NULL;
            *n = s->value_len;
            return (const char *)s->value;
        }
        return NULL;
    }
    PyObject *v = PyDict_GetItemString(f->dict, key); /* borrowed; no exception */
    if (v == NULL) return NULL;
    if (!PyUnicode_CheckExact(v)) {
        *bad = 1;
        return NULL;
    }
    const char *s = PyUnicode_AsUTF8AndSize(v, n);
    if (s == NULL) {
        PyErr_Clear(); /* surrogates: Python words the error */
        *bad = 1;
    }
    return s;
}

/* canonical decimal ("0", "-12", "12"; no sign +, no spaces, no leading zero) in [lo, hi] */
static int canonical_int(const char *s, Py_ssize_t n, long long lo, long long hi, long long *out) {
    if (s == NULL || n == 0 || n > 20) return 0;
    Py_ssize_t i = 0;
    int neg = 0;
    if (s[0] == '-') {
        neg = 1;
        i = 1;
        if (n == 1) return 0;
    }
    if (s[i] == '0' && (n - i > 1 || neg)) return 0;
    unsigned long long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        long long r = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
        if (r < lo) return 0;
        *out = r;
    } else {
        if (v > (unsigned long long)LLONG_MAX || (long long)v > hi) return 0;
        *out = (long long)v;
    }
    return 1;
}

static int int_field(const Fields *fields, const char *key, long long lo, long long hi, int required,
                     long long *out) {
    Py_ssize_t n = 0;
    int bad = 0;
    const char *s = text_of(fields, key, &n, &bad);
    if (bad) return 0;
    if (s == NULL) {
        *out = 0;
        return !required;
    }
    return canonical_int(s, n, lo, hi, out);
}

/* absent, "false" (0) or "true" (1); -1 for anything else */
static int bool_field(const Fields *fields, const char *key) {
    Py_ssize_t n = 0;
    int bad = 0;
    const char *s = text_of(fields, key, &n, &bad);
    if (bad) return -1;
    if (s == NULL || (n == 5 && memcmp(s, "false", 5) == 0)) return 0;
    if (n == 4 && memcmp(s, "true", 4) == 0) return 1;
    return -1;
}

static const char *find(const char *hay, Py_ssize_t n, const char *needle, Py_ssize_t m) {
    if (m == 0 || m > n) return NULL;
    return memmem(hay, (size_t)n, needle, (size_t)m);
}

static PyObject *put_of(const Fields *fields, PyObject *const *args);

PyObject *send_put_of(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "send_put_of takes 6 arguments");
        return NULL;
    }
    if (!PyDict_Check(args[0])) Py_RETURN_NONE; /* no extFields: Python words the error */
    Fields fields = {args[0], NULL, 0};
    return put_of(&fields, args);
}

PyObject *send_put_of_spans(const FieldSpan *spans, Py_ssize_t n, PyObject *const *args) {
    Fields fields = {NULL, spans, n};
    return put_of(&fields, args);
}

/* send_put_of's work on either form of the extFields */
static PyObject *put_of(const Fields *fields, PyObject *const *args) {
    PyObject *body = args[1], *rules = args[2];
    PyTypeObject *cls = (PyTypeObject *)args[3];
    if (!PyTuple_Check(rules) ||
        PyTuple_GET_SIZE(rules) != 5 || !PyType_Check(args[3]) ||
        !PyType_IsSubtype(cls, &PyTuple_Type) || !PyBytes_Check(args[4]) ||
        !PyBytes_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "send_put_of(dict, bytes, rules, SendPut, bytes, bytes)");
        return NULL;
    }
    PyObject *markers = PyTuple_GET_ITEM(rules, 0), *wait_obj = PyTuple_GET_ITEM(rules, 1);
    PyObject *tail_obj = PyTuple_GET_ITEM(rules, 2), *retry_obj = PyTuple_GET_ITEM(rules, 3);
    long long max_body = PyLong_AsLongLong(PyTuple_GET_ITEM(rules, 4));
    if (max_body == -1 && PyErr_Occurred()) return NULL;
    if (!PyTuple_Check(markers) || !PyBytes_Check(wait_obj) || !PyBytes_Check(tail_obj) ||
        !PyBytes_Check(retry_obj)) {
        PyErr_SetString(PyExc_TypeError, "send_put_of: rules of the wrong types");
        return NULL;
    }
    /* the body's length as the Python path reads it: len(request.body) */
    Py_ssize_t body_len = PyObject_Length(body);
    if (body_len < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (body_len > max_body) Py_RETURN_NONE;

    /* the V2 header: required a b c d e f g h; i j k l m n optional */
    Py_ssize_t topic_len = 0, props_len = 0, n = 0;
    int bad = 0;
    const char *topic = text_of(fields, "b", &topic_len, &bad);
    const char *props = text_of(fields, "i", &props_len, &bad);
    if (bad || topic == NULL) Py_RETURN_NONE;
    if (text_of(fields, "a", &n, &bad) == NULL || text_of(fields, "c", &n, &bad) == NULL || bad)
        Py_RETURN_NONE;
    text_of(fields, "n", &n, &bad);
    if (bad) Py_RETURN_NONE;
    long long queue_nums, queue_id, sys_flag, born_ts, flag, reconsume, max_reconsume;
    if (!int_field(fields, "d", INT32_MIN, INT32_MAX, 1, &queue_nums) ||
        !int_field(fields, "e", 0, INT32_MAX, 1, &queue_id) ||
        !int_field(fields, "f", INT32_MIN, INT32_MAX, 1, &sys_flag) ||
        !int_field(fields, "g", LLONG_MIN, LLONG_MAX, 1, &born_ts) ||
        !int_field(fields, "h", INT32_MIN, INT32_MAX, 1, &flag) ||
        !int_field(fields, "j", INT32_MIN, INT32_MAX, 0, &reconsume) ||
        !int_field(fields, "l", INT32_MIN, INT32_MAX, 0, &max_reconsume))
        Py_RETURN_NONE;
    if (bool_field(fields, "k") < 0 || bool_field(fields, "m") != 0) Py_RETURN_NONE;
    if ((sys_flag & TRAN_MASK) != 0) Py_RETURN_NONE;
    Py_ssize_t retry_len = PyBytes_GET_SIZE(retry_obj);
    if (topic_len >= retry_len && memcmp(topic, PyBytes_AS_STRING(retry_obj), (size_t)retry_len) == 0)
        Py_RETURN_NONE;
    if (props == NULL) props = "";
    if (props_len > PROPERTIES_MAX) Py_RETURN_NONE;

    /* send_properties.pass_through, on the UTF-8 bytes (the markers are ASCII) */
    Py_ssize_t n_markers = PyTuple_GET_SIZE(markers);
    for (Py_ssize_t k = 0; k < n_markers; k++) {
        PyObject *m = PyTuple_GET_ITEM(markers, k);
        if (!PyBytes_Check(m)) {
            PyErr_SetString(PyExc_TypeError, "send_put_of: markers must be bytes");
            return NULL;
        }
        if (find(props, props_len, PyBytes_AS_STRING(m), PyBytes_GET_SIZE(m)) != NULL)
            Py_RETURN_NONE;
    }
    const char *wait_m = PyBytes_AS_STRING(wait_obj);
    Py_ssize_t wait_len = PyBytes_GET_SIZE(wait_obj);
    int wait = 1;
    Py_ssize_t cut_from = props_len, cut_to = props_len; /* [cut_from, cut_to) leaves */
    const char *w = find(props, props_len, wait_m, wait_len);
    if (w != NULL) {
        Py_ssize_t i = w - props;
        if (i > 0 && props[i - 1] != SEP_PROPERTY) Py_RETURN_NONE;
        const char *sep = memchr(props + i, SEP_PROPERTY, (size_t)(props_len - i));
        Py_ssize_t j = sep == NULL ? props_len : sep - props;
        Py_ssize_t vlen = j - (i + wait_len);
        wait = !(vlen == 5 && memcmp(props + i + wait_len, "false", 5) == 0);
        cut_from = i;
        cut_to = j + 1 > props_len ? props_len : j + 1;
        /* WAIT twice (in what is left): the map keeps the last */
        if (find(props + cut_to, props_len - cut_to, wait_m, wait_len) != NULL ||
            find(props, cut_from, wait_m, wait_len) != NULL)
            Py_RETURN_NONE;
        /* the text left could form a WAIT marker across the cut */
        Py_ssize_t left_tail = cut_from < wait_len ? cut_from : wait_len - 1;
        for (Py_ssize_t t = 1; t <= left_tail; t++) {
            Py_ssize_t rest = wait_len - t;
            if (rest <= props_len - cut_to &&
                memcmp(props + cut_from - t, wait_m, (size_t)t) == 0 &&
                memcmp(props + cut_to, wait_m + t, (size_t)rest) == 0)
                Py_RETURN_NONE;
        }
    }
    Py_ssize_t kept = cut_from + (props_len - cut_to);
    int add_sep = kept > 0 && (cut_to < props_len ? props[props_len - 1] : props[cut_from - 1]) != SEP_PROPERTY;
    Py_ssize_t tail_len = PyBytes_GET_SIZE(tail_obj);
    PyObject *record_props = PyBytes_FromStringAndSize(NULL, kept + add_sep + tail_len);
    if (record_props == NULL) return NULL;
    char *o = PyBytes_AS_STRING(record_props);
    memcpy(o, props, (size_t)cut_from);
    o += cut_from;
    memcpy(o, props + cut_to, (size_t)(props_len - cut_to));
    o += props_len - cut_to;
    if (add_sep) *o++ = SEP_PROPERTY;
    memcpy(o, PyBytes_AS_STRING(tail_obj), (size_t)tail_len);

    /* the topic: the dict's str, or made of its span's bytes (UTF-8: the header decoder
     * checked the header's bytes, and its unescaping writes UTF-8) */
    PyObject *topic_obj =
        fields->dict != NULL
            ? Py_XNewRef(PyDict_GetItemString(fields->dict, "b"))
            : PyUnicode_DecodeUTF8(topic, topic_len, NULL);
    if (topic_obj == NULL) {
        Py_DECREF(record_props);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "send_put_of: no topic");
        return NULL;
    }
    /* bytes(request.body): the same object when it is bytes already */
    PyObject *body_bytes = PyBytes_CheckExact(body) ? Py_NewRef(body) : PyBytes_FromObject(body);
    if (body_bytes == NULL) {
        Py_DECREF(record_props);
        Py_DECREF(topic_obj);
        return NULL;
    }
    PyObject *put = cls->tp_alloc(cls, 11);
    if (put == NULL) {
        Py_DECREF(record_props);
        Py_DECREF(body_bytes);
        Py_DECREF(topic_obj);
        return NULL;
    }
    PyObject *items[11] = {
        topic_obj,
        PyLong_FromLongLong(queue_id),
        body_bytes,
        record_props,
        PyLong_FromLongLong(flag),
        PyLong_FromLongLong(sys_flag),
        PyLong_FromLongLong(born_ts),
        Py_NewRef(args[4]),
        Py_NewRef(args[5]),
        PyLong_FromLongLong(reconsume),
        Py_NewRef(wait ? Py_True : Py_False),
    };
    int failed = 0;
    for (int k = 0; k < 11; k++) {
        if (items[k] == NULL) failed = 1;
        PyTuple_SET_ITEM(put, k, items[k]);
    }
    if (failed) {
        Py_DECREF(put); /* tuple dealloc skips the NULL slots */
        return NULL;
    }
    return put;
}
