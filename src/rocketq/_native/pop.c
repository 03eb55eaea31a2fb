/*
 * rocketq._native._pop: the POP request's per-request Python in C (issue 18).
 *
 * batch_ack_body is the compiled twin of rocketq/remoting/protocol/pop_headers.py's
 * decode_batch_ack_body (RocketMQ's BatchAckMessageRequestBody with its BatchAck items,
 * remoting/protocol/body): the body of a BATCH_ACK_MESSAGE as the Java and Go clients write
 * it, {"acks":[{"b":"<base64 BitSet.toByteArray()>","c":..,"it":..,"pt":..,"q":..,"r":..,
 * "rq":..,"so":..,"t":..}],"brokerName":..} (the short names, or the long ones). It reads
 * only the plain form: ASCII strings without escapes, integers within 64 bits, no key
 * twice, no key it does not know, every item an object. Anything else returns None and the
 * Python decoder, the reference, reads the body (and words any error).
 *
 * pop_answer_fields is the twin of rocketq/broker/processors/pop_message.py's extFields of a
 * found pop (PopMessageResponseHeader with ExtraInfoUtil.buildStartOffsetInfo and
 * buildMsgOffsetInfo): popTime, invisibleTime, reviveQid, restNum, startOffsetInfo,
 * msgOffsetInfo and, for a FIFO pop, orderCountInfo.
 *
 * Every read is checked against the end of the buffer before it is made.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <limits.h>
#include <string.h>

#include "text.h"


typedef struct {
    const unsigned char *p, *end;
} Cur;

static void skip_ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int take(Cur *c, unsigned char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* a string of printable ASCII without escapes; 0: not one (the Python decoder reads it) */
static int plain_string(Cur *c, const unsigned char **s, Py_ssize_t *n) {
    skip_ws(c);
    if (c->p >= c->end || *c->p != '"') return 0;
    const unsigned char *start = ++c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p < 0x20 || *c->p > 0x7e || *c->p == '\\') return 0;
        c->p++;
    }
    if (c->p >= c->end) return 0;
    *s = start;
    *n = c->p - start;
    c->p++;
    return 1;
}

/* a JSON integer (no fraction, no exponent, no leading zero) that fits in 64 bits */
static int plain_int(Cur *c, long long *out) {
    skip_ws(c);
    int negative = 0;
    if (c->p < c->end && *c->p == '-') {
        negative = 1;
        c->p++;
    }
    const unsigned char *start = c->p;
    long long v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        int d = *c->p - '0';
        if (v > (LLONG_MAX - d) / 10) return 0; /* past 64 bits: Python reads it */
        v = v * 10 + d;
        c->p++;
    }
    Py_ssize_t digits = c->p - start;
    if (digits == 0 || (digits > 1 && *start == '0')) return 0;
    if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')) return 0;
    *out = negative ? -v : v;
    return 1;
}

static int b64_value(unsigned char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

/* the set bits (lowest first) of a base64 BitSet.toByteArray(); NULL with no exception set:
 * not plain base64 (the Python decoder words the error) */
static PyObject *bit_set_of(const unsigned char *s, Py_ssize_t n) {
    if (n % 4 != 0) return NULL;
    Py_ssize_t pad = 0;
    if (n > 0 && s[n - 1] == '=') pad = (n > 1 && s[n - 2] == '=') ? 2 : 1;
    Py_ssize_t data = n - pad, bytes = data / 4 * 3 + (pad ? 3 - pad : 0);
    for (Py_ssize_t i = 0; i < data; i++)
        if (b64_value(s[i]) < 0) return NULL;
    unsigned char stack[96];
    unsigned char *raw = bytes <= (Py_ssize_t)sizeof stack ? stack : PyMem_Malloc((size_t)bytes);
    if (raw == NULL) return PyErr_NoMemory();
    Py_ssize_t w = 0;
    for (Py_ssize_t i = 0; i < data; i += 4) {
        uint32_t group = 0;
        int got = 0;
        for (int k = 0; k < 4 && i + k < data; k++, got++)
            group |= (uint32_t)b64_value(s[i + k]) << (18 - 6 * k);
        for (int k = 0; k < got - 1; k++) raw[w++] = (unsigned char)(group >> (16 - 8 * k));
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < bytes; i++) {
        unsigned char v = raw[i];
        while (v) {
            count += v & 1;
            v >>= 1;
        }
    }
    PyObject *out = PyTuple_New(count);
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; out != NULL && i < bytes; i++)
        for (int bit = 0; bit < 8; bit++)
            if (raw[i] >> bit & 1) {
                PyObject *index = PyLong_FromSsize_t(i * 8 + bit);
                if (index == NULL) {
                    Py_CLEAR(out); /* the outer loop stops on it */
                    break;
                }
                PyTuple_SET_ITEM(out, j++, index);
            }
    if (raw != stack) PyMem_Free(raw);
    return out;
}

/* BatchAck's fields in the order of ATTR_NAMES (built from ATTRS); short and long wire names */
enum { F_BITS, F_GROUP, F_TOPIC, F_RETRY, F_SO, F_Q, F_RQ, F_PT, F_IT, FIELDS };
static const char *const SHORT_NAMES[FIELDS] = {"b", "c", "t", "r", "so", "q", "rq", "pt", "it"};
static const char *const LONG_NAMES[FIELDS] = {
    "bitSet", "consumerGroup", "topic", "retry", "startOffset",
    "queueId", "reviveQueueId", "popTime", "invisibleTime",
};
static const char *const ATTRS[FIELDS] = {
    "bit_set", "consumer_group", "topic", "retry", "start_offset",
    "queue_id", "revive_queue_id", "pop_time", "invisible_time",
};
static PyObject *ATTR_NAMES;

static int field_of(const unsigned char *k, Py_ssize_t n) {
    for (int f = 0; f < FIELDS; f++) {
        if ((Py_ssize_t)strlen(SHORT_NAMES[f]) == n && memcmp(k, SHORT_NAMES[f], (size_t)n) == 0)
            return f;
        if ((Py_ssize_t)strlen(LONG_NAMES[f]) == n && memcmp(k, LONG_NAMES[f], (size_t)n) == 0)
            return f;
    }
    return -1;
}

/* one item of "acks" into a cls (BatchAck, a frozen slots dataclass) of its fields; 0: not
 * plain (the Python decoder reads the body), -1: an exception */
static int read_item(Cur *c, PyObject *cls, PyObject **out) {
    PyObject *args[FIELDS] = {NULL};
    int seen[FIELDS] = {0}, rc = 0;
    if (!take(c, '{')) return 0;
    if (!take(c, '}')) {
        do {
            const unsigned char *k, *s;
            Py_ssize_t kn, sn;
            if (!plain_string(c, &k, &kn) || !take(c, ':')) goto done;
            int f = field_of(k, kn);
            if (f < 0 || seen[f]) goto done;
            seen[f] = 1;
            if (f <= F_RETRY) {
                if (!plain_string(c, &s, &sn)) goto done;
                args[f] = f == F_BITS ? bit_set_of(s, sn)
                                      : PyUnicode_FromStringAndSize((const char *)s, sn);
            } else {
                long long v;
                if (!plain_int(c, &v)) goto done;
                args[f] = PyLong_FromLongLong(v);
            }
            if (args[f] == NULL) {
                rc = PyErr_Occurred() ? -1 : 0;
                goto done;
            }
        } while (take(c, ','));
        if (!take(c, '}')) goto done;
    }
    for (int f = 0; f < FIELDS; f++) {
        if (args[f] != NULL) continue;
        args[f] = f == F_BITS    ? PyTuple_New(0)
                  : f == F_RETRY ? PyUnicode_FromString("0")
                  : f <= F_RETRY ? PyUnicode_FromString("")
                                 : PyLong_FromLong(0);
        if (args[f] == NULL) {
            rc = -1;
            goto done;
        }
    }
    /* the frozen dataclass's fields set as its __init__ sets them (object.__setattr__),
     * without the Python-level __init__ */
    *out = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    rc = *out == NULL ? -1 : 1;
    for (int f = 0; f < FIELDS && rc == 1; f++)
        if (PyObject_GenericSetAttr(*out, PyTuple_GET_ITEM(ATTR_NAMES, f), args[f]) < 0) {
            Py_CLEAR(*out);
            rc = -1;
        }
done:
    for (int f = 0; f < FIELDS; f++) Py_XDECREF(args[f]);
    return rc;
}

/* batch_ack_body(body, cls) -> (brokerName, [cls(...)]) or None (the Python decoder reads it) */
static PyObject *batch_ack_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "batch_ack_body(body, cls: type)");
        return NULL;
    }
    if (ATTR_NAMES == NULL) {
        ATTR_NAMES = PyTuple_New(FIELDS);
        if (ATTR_NAMES == NULL) return NULL;
        for (int f = 0; f < FIELDS; f++) {
            PyObject *name = PyUnicode_InternFromString(ATTRS[f]);
            if (name == NULL) {
                Py_CLEAR(ATTR_NAMES);
                return NULL;
            }
            PyTuple_SET_ITEM(ATTR_NAMES, f, name);
        }
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    Cur c = {view.buf, (const unsigned char *)view.buf + view.len};
    PyObject *acks = PyList_New(0), *broker = NULL, *result = NULL;
    int seen_acks = 0, failed = 0;
    if (acks == NULL) goto out;
    if (!take(&c, '{') || take(&c, '}')) goto out; /* {} and non-objects: Python */
    do {
        const unsigned char *k, *s;
        Py_ssize_t kn, sn;
        if (!plain_string(&c, &k, &kn) || !take(&c, ':')) goto out;
        if (kn == 4 && memcmp(k, "acks", 4) == 0 && !seen_acks) {
            seen_acks = 1;
            if (!take(&c, '[')) goto out;
            if (take(&c, ']')) continue;
            do {
                PyObject *item = NULL;
                int rc = read_item(&c, args[1], &item);
                if (rc <= 0) {
                    failed = rc < 0;
                    goto out;
                }
                rc = PyList_Append(acks, item);
                Py_DECREF(item);
                if (rc < 0) {
                    failed = 1;
                    goto out;
                }
            } while (take(&c, ','));
            if (!take(&c, ']')) goto out;
        } else if (kn == 10 && memcmp(k, "brokerName", 10) == 0 && broker == NULL) {
            if (!plain_string(&c, &s, &sn)) goto out;
            broker = PyUnicode_FromStringAndSize((const char *)s, sn);
            if (broker == NULL) {
                failed = 1;
                goto out;
            }
        } else {
            goto out;
        }
    } while (take(&c, ','));
    if (!take(&c, '}')) goto out;
    skip_ws(&c);
    if (c.p != c.end) goto out;
    if (broker == NULL && (broker = PyUnicode_FromString("")) == NULL) {
        failed = 1;
        goto out;
    }
    result = PyTuple_Pack(2, broker, acks);
    failed = result == NULL;
out:
    PyBuffer_Release(&view);
    Py_XDECREF(acks);
    Py_XDECREF(broker);
    if (result != NULL) return result;
    if (failed || PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- the pop's answer */

/* an int as decimal; 0: not an exact int in 64 bits (Python builds the answer) */
static int text_long(Text *t, PyObject *v, int *plain) {
    if (!PyLong_CheckExact(v)) {
        *plain = 0;
        return 0;
    }
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) {
        *plain = 0;
        return 0;
    }
    return text_ll(t, x);
}

/* an ASCII str as itself; 0: not one */
static int text_ascii(Text *t, PyObject *s, int *plain) {
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) {
        *plain = 0;
        return 0;
    }
    return text_put(t, (const char *)PyUnicode_DATA(s), (size_t)PyUnicode_GET_LENGTH(s));
}

static int put_text(PyObject *d, const char *key, Text *t) {
    PyObject *s = PyUnicode_DecodeASCII(t->data ? t->data : "", (Py_ssize_t)t->len, NULL);
    if (s == NULL) return -1;
    int rc = PyDict_SetItemString(d, key, s);
    Py_DECREF(s);
    return rc;
}

/* pop_answer_fields(pop_time, invisible_time, revive_qid, rest_num, entries, order_count_info)
 * -> the extFields dict, or None (Python builds them). entries: [(mark, queue_id,
 * start_offset, [offset, ...])], one per queue read; order_count_info: str or None. */
static PyObject *pop_answer_fields(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "pop_answer_fields(pop_time, invisible_time, revive_qid, rest_num, "
                        "entries, order_count_info)");
        return NULL;
    }
    static const char *const KEYS[4] = {"popTime", "invisibleTime", "reviveQid", "restNum"};
    PyObject *entries = args[4], *order = args[5], *d = NULL;
    Text head[4] = {{0}}, starts = {0}, msgs = {0};
    int plain = PyList_CheckExact(entries) && (order == Py_None || PyUnicode_CheckExact(order));
    for (int i = 0; i < 4 && plain; i++)
        if (text_long(&head[i], args[i], &plain) < 0) goto fail;
    Py_ssize_t n = plain ? PyList_GET_SIZE(entries) : 0;
    for (Py_ssize_t i = 0; i < n && plain; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != 4 ||
            !PyList_CheckExact(PyTuple_GET_ITEM(e, 3))) {
            plain = 0;
            break;
        }
        PyObject *mark = PyTuple_GET_ITEM(e, 0), *offsets = PyTuple_GET_ITEM(e, 3);
        PyObject *qid = PyTuple_GET_ITEM(e, 1), *start = PyTuple_GET_ITEM(e, 2);
        if (i > 0 && (text_put(&starts, ";", 1) < 0 || text_put(&msgs, ";", 1) < 0)) goto fail;
        if (text_ascii(&starts, mark, &plain) < 0 || text_put(&starts, " ", 1) < 0 ||
            text_long(&starts, qid, &plain) < 0 || text_put(&starts, " ", 1) < 0 ||
            text_long(&starts, start, &plain) < 0)
            goto fail;
        if (text_ascii(&msgs, mark, &plain) < 0 || text_put(&msgs, " ", 1) < 0 ||
            text_long(&msgs, qid, &plain) < 0 || text_put(&msgs, " ", 1) < 0)
            goto fail;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(offsets) && plain; j++) {
            if (j > 0 && text_put(&msgs, ",", 1) < 0) goto fail;
            if (text_long(&msgs, PyList_GET_ITEM(offsets, j), &plain) < 0) goto fail;
        }
    }
    if (!plain) goto done;
    d = PyDict_New();
    if (d == NULL) goto fail;
    for (int i = 0; i < 4; i++)
        if (put_text(d, KEYS[i], &head[i]) < 0) goto fail;
    if (put_text(d, "startOffsetInfo", &starts) < 0 || put_text(d, "msgOffsetInfo", &msgs) < 0)
        goto fail;
    if (order != Py_None && PyDict_SetItemString(d, "orderCountInfo", order) < 0) goto fail;
done:
    for (int i = 0; i < 4; i++) PyMem_Free(head[i].data);
    PyMem_Free(starts.data);
    PyMem_Free(msgs.data);
    if (d != NULL) return d;
    Py_RETURN_NONE;
fail:
    for (int i = 0; i < 4; i++) PyMem_Free(head[i].data);
    PyMem_Free(starts.data);
    PyMem_Free(msgs.data);
    Py_XDECREF(d);
    return NULL;
}

static PyMethodDef methods[] = {
    {"batch_ack_body", (PyCFunction)(void (*)(void))batch_ack_body, METH_FASTCALL,
     "A BatchAckMessageRequestBody's (brokerName, [BatchAck]); None where Python must read it."},
    {"pop_answer_fields", (PyCFunction)(void (*)(void))pop_answer_fields, METH_FASTCALL,
     "The extFields of a found pop's PopMessageResponseHeader."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._pop",
    "The POP request's paths in C; rocketq.broker.pop.pop_codec selects them.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pop(void) { return PyModule_Create(&module); }
