/*
 * rocketq._native._pop_client: a consumer's batch ack of popped messages in C (issue 18).
 *
 * batch_ack_body(broker_name, group, topic, handles) is the compiled twin of the body that
 * rocketq/testing/pop.py's batch_ack_request_reference writes: the handles (ExtraInfoUtil's
 * extra-info strings, "ck popTime invisibleTime reviveQid mark brokerName queueId offset")
 * grouped by checkpoint as rocketq/common/extra_info.py's group_handles groups them (mark,
 * queue, checkpoint offset and pop time; the first handle's fields; the offsets in the order
 * given), each group a BatchAck of BatchAckMessageRequestBody written as
 * rocketq/remoting/protocol/pop_headers.py's encode_batch_ack_body writes it (keys sorted,
 * the BitSet as base64 of toByteArray()).
 *
 * It reads only the plain form: a handle of exactly eight fields, one space apart, its
 * numbers [-]digits within 64 bits, its mark 0, 1 or 2; names of printable ASCII without '"'
 * or '\'; each offset at or past its checkpoint's start and less than MAX_BIT past it; at
 * most MAX_GROUPS checkpoints. Anything else returns None, and the Python reference builds
 * the body (or raises what it raises). Every read is checked against the end of its string.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "text.h"

#define MAX_BIT 4096 /* bits of a checkpoint's BitSet written here (a pop is at most 32) */
#define MAX_GROUPS 64

/* a name written as a JSON string: 0 when it is not printable ASCII without '"' or '\' */
static int plain_name(PyObject *s) {
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) return 0;
    const unsigned char *p = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(s); i++)
        if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '"' || p[i] == '\\') return 0;
    return 1;
}

static int text_name(Text *t, PyObject *s) {
    const char *p = (const char *)PyUnicode_DATA(s);
    if (text_put(t, "\"", 1) < 0 || text_put(t, p, (size_t)PyUnicode_GET_LENGTH(s)) < 0 ||
        text_put(t, "\"", 1) < 0)
        return -1;
    return 0;
}

/* [-]digits within 64 bits, the whole of [p, end); 0: not one */
static int plain_ll(const char *p, const char *end, long long *out) {
    int negative = 0;
    if (p < end && *p == '-') {
        negative = 1;
        p++;
    }
    if (p >= end) return 0;
    unsigned long long v = 0, limit = negative ? (unsigned long long)LLONG_MAX + 1ULL
                                               : (unsigned long long)LLONG_MAX;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return 0;
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = negative ? (long long)(0ULL - v) : (long long)v;
    return 1;
}

typedef struct {
    long long ck, pop_time, invisible, revive_qid, queue_id;
    char mark;
    int high; /* the highest bit set + 1 */
    unsigned char bits[MAX_BIT / 8];
} Group;

/* one handle's fields; 0: not the plain form */
static int read_handle(PyObject *h, long long v[8], char *mark) {
    if (!PyUnicode_CheckExact(h) || !PyUnicode_IS_ASCII(h)) return 0;
    const char *p = (const char *)PyUnicode_DATA(h), *end = p + PyUnicode_GET_LENGTH(h);
    for (int f = 0; f < 8; f++) {
        const char *stop = f < 7 ? memchr(p, ' ', (size_t)(end - p)) : end;
        if (stop == NULL) return 0;
        if (f == 4) {
            if (stop - p != 1 || (*p != '0' && *p != '1' && *p != '2')) return 0;
            *mark = *p;
        } else if (f != 5 && !plain_ll(p, stop, &v[f])) {
            return 0;
        }
        p = stop + 1;
    }
    return 1;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int text_b64(Text *t, const unsigned char *raw, size_t n) {
    for (size_t i = 0; i < n; i += 3) {
        uint32_t g = (uint32_t)raw[i] << 16;
        if (i + 1 < n) g |= (uint32_t)raw[i + 1] << 8;
        if (i + 2 < n) g |= raw[i + 2];
        char out[4] = {B64[g >> 18 & 63], B64[g >> 12 & 63], '=', '='};
        if (i + 1 < n) out[2] = B64[g >> 6 & 63];
        if (i + 2 < n) out[3] = B64[g & 63];
        if (text_put(t, out, 4) < 0) return -1;
    }
    return 0;
}

static int write_group(Text *t, const Group *g, PyObject *group, PyObject *topic) {
    char mark[2] = {g->mark, 0};
    if (text_str(t, "{\"b\":\"") < 0 || text_b64(t, g->bits, (size_t)(g->high + 7) / 8) < 0 ||
        text_str(t, "\",\"c\":") < 0 || text_name(t, group) < 0 || text_str(t, ",\"it\":") < 0 ||
        text_ll(t, g->invisible) < 0 || text_str(t, ",\"pt\":") < 0 ||
        text_ll(t, g->pop_time) < 0 || text_str(t, ",\"q\":") < 0 ||
        text_ll(t, g->queue_id) < 0 || text_str(t, ",\"r\":\"") < 0 || text_str(t, mark) < 0 ||
        text_str(t, "\",\"rq\":") < 0 || text_ll(t, g->revive_qid) < 0 ||
        text_str(t, ",\"so\":") < 0 || text_ll(t, g->ck) < 0 || text_str(t, ",\"t\":") < 0 ||
        text_name(t, topic) < 0 || text_str(t, "}") < 0)
        return -1;
    return 0;
}

/* batch_ack_body(broker_name, group, topic, handles) -> bytes, or None (Python writes it) */
static PyObject *batch_ack_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "batch_ack_body(broker_name, group, topic, handles)");
        return NULL;
    }
    PyObject *broker = args[0], *group = args[1], *topic = args[2], *handles = args[3];
    if (!plain_name(broker) || !plain_name(group) || !plain_name(topic) ||
        !PyList_CheckExact(handles))
        Py_RETURN_NONE;
    Group *groups = NULL;
    int n_groups = 0, plain = 1;
    Text t = {0};
    PyObject *result = NULL;
    Py_ssize_t n = PyList_GET_SIZE(handles);
    if (n > 0) {
        groups = PyMem_Calloc(MAX_GROUPS, sizeof(Group));
        if (groups == NULL) return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n && plain; i++) {
        long long v[8];
        char mark = 0;
        if (!read_handle(PyList_GET_ITEM(handles, i), v, &mark)) {
            plain = 0;
            break;
        }
        Group *g = NULL;
        for (int k = 0; k < n_groups; k++) {
            Group *c = &groups[k];
            if (c->mark == mark && c->queue_id == v[6] && c->ck == v[0] && c->pop_time == v[1]) {
                g = c;
                break;
            }
        }
        if (g == NULL) {
            if (n_groups == MAX_GROUPS) {
                plain = 0;
                break;
            }
            g = &groups[n_groups++];
            g->ck = v[0];
            g->pop_time = v[1];
            g->invisible = v[2];
            g->revive_qid = v[3];
            g->queue_id = v[6];
            g->mark = mark;
        }
        /* v[7] - ck without overflow: both are 64-bit, the difference must be in [0, MAX_BIT) */
        if (v[7] < g->ck || (unsigned long long)v[7] - (unsigned long long)g->ck >= MAX_BIT) {
            plain = 0;
            break;
        }
        int bit = (int)((unsigned long long)v[7] - (unsigned long long)g->ck);
        g->bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
        if (bit + 1 > g->high) g->high = bit + 1;
    }
    if (plain) {
        int failed = text_str(&t, "{\"acks\":[") < 0;
        for (int k = 0; k < n_groups && !failed; k++)
            failed = (k > 0 && text_str(&t, ",") < 0) ||
                     write_group(&t, &groups[k], group, topic) < 0;
        failed = failed || text_str(&t, "],\"brokerName\":") < 0 || text_name(&t, broker) < 0 ||
                 text_str(&t, "}") < 0;
        if (!failed) result = PyBytes_FromStringAndSize(t.data, (Py_ssize_t)t.len);
    } else {
        result = Py_NewRef(Py_None);
    }
    PyMem_Free(groups);
    PyMem_Free(t.data);
    return result;
}

static PyMethodDef methods[] = {
    {"batch_ack_body", (PyCFunction)(void (*)(void))batch_ack_body, METH_FASTCALL,
     "The BatchAckMessageRequestBody of popped messages' handles; None where Python writes it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._pop_client",
    "A consumer's batch ack in C; rocketq.testing.pop selects it.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pop_client(void) { return PyModule_Create(&module); }
