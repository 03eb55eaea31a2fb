/*
 * send_reply.c: the replies of a burst of stored sends in one call (issue 22, lever 1): the
 * frame heads of SEND_MESSAGE(_V2) responses for puts the store accepted, written back to
 * back into one buffer (the replies carry no body, so the burst leaves as one write).
 *
 * The JSON text around the four values is not written here: the caller passes the pieces the
 * Python encoder gives for a sample reply (rocketq/broker/processors/send_answer.py cuts them
 * from codec.encode_json_header's output), so this stays byte for byte the reference's
 * (RocketMQ's SendMessageProcessor.handlePutMessageResult: msgId, queueId, queueOffset,
 * MSG_REGION, TRACE_ON). The msgId is the store's (CommitLog's offset id, upper-case hex),
 * copied as given when it is made of letters and digits only (nothing to escape).
 *
 * With a third argument, the store's msgId prefix (CommitLog's store host in upper-case hex,
 * up to 48 letters and digits), an item's msgId may instead be its commitlog offset, an int in
 * 0..2^63-1: the id written is the prefix and the offset as 16 upper-case hex digits
 * (MessageDecoder.createMessageId), without a str made for it.
 *
 * A value this code does not handle (not an int, out of range, a msgId of other characters or
 * over 64 of them, an offset without a prefix) returns None and the Python path answers the
 * whole burst.
 */
#include "remoting.h"

#define MAX_PREFIX (MAX_ID - 16) /* the prefix of an id written from an offset */

int reply_i64(PyObject *v, long long lo, long long hi, long long *out) {
    if (!PyLong_Check(v)) return 1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    if (overflow || x < lo || x > hi) return 1;
    *out = x;
    return 0;
}

static Py_ssize_t put_decimal(char *w, long long x) {
    char tmp[MAX_NUMBER];
    Py_ssize_t n = 0;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u != 0);
    Py_ssize_t len = 0;
    if (x < 0) w[len++] = '-';
    while (n > 0) w[len++] = tmp[--n];
    return len;
}

/* the msgId's characters when it is 1..MAX_ID ASCII letters and digits, else NULL */
static const char *plain_id(PyObject *v, Py_ssize_t *n) {
    if (!PyUnicode_Check(v) || !PyUnicode_IS_ASCII(v)) return NULL;
    *n = PyUnicode_GET_LENGTH(v);
    if (*n < 1 || *n > MAX_ID) return NULL;
    const char *s = (const char *)PyUnicode_1BYTE_DATA(v);
    for (Py_ssize_t i = 0; i < *n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
            return NULL;
    }
    return s;
}

/* the prefix's bytes when they are 0..MAX_PREFIX ASCII letters and digits, else NULL */
const char *reply_prefix(PyObject *v, Py_ssize_t *n) {
    if (!PyBytes_Check(v)) return NULL;
    *n = PyBytes_GET_SIZE(v);
    if (*n > MAX_PREFIX) return NULL;
    const char *s = PyBytes_AS_STRING(v);
    for (Py_ssize_t i = 0; i < *n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
            return NULL;
    }
    return s;
}

/* the id of an offset: the prefix, then the offset as 16 upper-case hex digits */
static Py_ssize_t put_offset_id(char *w, const char *prefix, Py_ssize_t prefix_len,
                                unsigned long long offset) {
    static const char hex[] = "0123456789ABCDEF";
    memcpy(w, prefix, (size_t)prefix_len);
    for (int i = 15; i >= 0; i--) {
        w[prefix_len + i] = hex[offset & 15];
        offset >>= 4;
    }
    return prefix_len + 16;
}

/* the pieces of a reply (a tuple of 5 bytes, each at most 4096); 1 (an error set) when they
 * are not bytes, 2 when one is too long (the caller returns None) */
int reply_pieces(PyObject *tuple, const char **piece, Py_ssize_t *piece_len,
                       Py_ssize_t *fixed) {
    *fixed = 0;
    for (int i = 0; i < PIECES; i++) {
        PyObject *p = PyTuple_GET_ITEM(tuple, i);
        if (!PyBytes_Check(p)) {
            PyErr_SetString(PyExc_TypeError, "send_reply_heads: the pieces are bytes");
            return 1;
        }
        piece[i] = PyBytes_AS_STRING(p);
        piece_len[i] = PyBytes_GET_SIZE(p);
        if (piece_len[i] > 4096) return 2;
        *fixed += piece_len[i];
    }
    return 0;
}

/* one reply's frame head at w (at most 8 + fixed + MAX_ID + 3 * MAX_NUMBER bytes); the id
 * is id[:id_len] when id is not NULL, else the prefix and offset; returns the end */
char *reply_frame(char *w, const char **piece, const Py_ssize_t *piece_len,
                         long long opaque, const char *id, Py_ssize_t id_len,
                         long long offset, const char *prefix, Py_ssize_t prefix_len,
                         long long queue_id, long long queue_offset) {
    char *frame = w;
    w += 8;
    memcpy(w, piece[0], (size_t)piece_len[0]);
    w += piece_len[0];
    if (id != NULL) {
        memcpy(w, id, (size_t)id_len);
        w += id_len;
    } else {
        w += put_offset_id(w, prefix, prefix_len, (unsigned long long)offset);
    }
    memcpy(w, piece[1], (size_t)piece_len[1]);
    w += piece_len[1];
    w += put_decimal(w, queue_id);
    memcpy(w, piece[2], (size_t)piece_len[2]);
    w += piece_len[2];
    w += put_decimal(w, queue_offset);
    memcpy(w, piece[3], (size_t)piece_len[3]);
    w += piece_len[3];
    w += put_decimal(w, opaque);
    memcpy(w, piece[4], (size_t)piece_len[4]);
    w += piece_len[4];
    uint32_t header_len = (uint32_t)(w - frame - 8);
    uint32_t total = header_len + 4;
    unsigned char *p = (unsigned char *)frame;
    p[0] = (unsigned char)(total >> 24);
    p[1] = (unsigned char)(total >> 16);
    p[2] = (unsigned char)(total >> 8);
    p[3] = (unsigned char)total;
    p[4] = (unsigned char)SERIALIZE_JSON; /* word: JSON << 24 | header length */
    p[5] = (unsigned char)(header_len >> 16);
    p[6] = (unsigned char)(header_len >> 8);
    p[7] = (unsigned char)header_len;
    return w;
}

/* the frame heads of items[start:stop] back to back in a new bytes; Py_None (a new
 * reference) when a value is outside what this code writes, NULL on an error */
static PyObject *reply_heads(const char **piece, const Py_ssize_t *piece_len, Py_ssize_t fixed,
                             PyObject *items, Py_ssize_t start, Py_ssize_t stop,
                             const char *prefix, Py_ssize_t prefix_len) {
    Py_ssize_t count = stop - start;
    /* one frame: 8 bytes of length and word, the pieces, the id and three numbers */
    Py_ssize_t per_frame = 8 + fixed + MAX_ID + 3 * MAX_NUMBER;
    if (count > PY_SSIZE_T_MAX / per_frame) Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * per_frame);
    if (out == NULL) return NULL;
    char *base = PyBytes_AS_STRING(out), *w = base;
    for (Py_ssize_t i = start; i < stop; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        long long opaque, queue_id, queue_offset, offset = -1;
        const char *id = NULL;
        Py_ssize_t id_len = 0;
        PyObject *id_value = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 4
                                 ? PyTuple_GET_ITEM(item, 1)
                                 : NULL;
        if (id_value == NULL ||
            reply_i64(PyTuple_GET_ITEM(item, 0), INT32_MIN, INT32_MAX, &opaque) ||
            (PyLong_CheckExact(id_value)
                 ? prefix == NULL || reply_i64(id_value, 0, INT64_MAX, &offset)
                 : (id = plain_id(id_value, &id_len)) == NULL) ||
            reply_i64(PyTuple_GET_ITEM(item, 2), INT32_MIN, INT32_MAX, &queue_id) ||
            reply_i64(PyTuple_GET_ITEM(item, 3), INT64_MIN, INT64_MAX, &queue_offset)) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        w = reply_frame(w, piece, piece_len, opaque, id, id_len, offset, prefix, prefix_len,
                        queue_id, queue_offset);
    }
    if (_PyBytes_Resize(&out, w - base) < 0) return NULL;
    return out;
}

/* send_reply_heads(pieces: tuple of 5 bytes,
 *                  items: list of (opaque, msg_id or offset, queue_id, queue_offset)
 *                  [, prefix: bytes]) -> bytes | None */
PyObject *send_reply_heads(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if ((nargs != 2 && nargs != 3) || !PyTuple_Check(args[0]) ||
        PyTuple_GET_SIZE(args[0]) != PIECES || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "send_reply_heads(pieces: tuple[bytes x5], items: list[, prefix: bytes])");
        return NULL;
    }
    const char *prefix = NULL;
    Py_ssize_t prefix_len = 0;
    if (nargs == 3 && (prefix = reply_prefix(args[2], &prefix_len)) == NULL) Py_RETURN_NONE;
    const char *piece[PIECES];
    Py_ssize_t piece_len[PIECES], fixed;
    int bad = reply_pieces(args[0], piece, piece_len, &fixed);
    if (bad == 1) return NULL;
    if (bad == 2) Py_RETURN_NONE;
    return reply_heads(piece, piece_len, fixed, args[1], 0, PyList_GET_SIZE(args[1]), prefix,
                       prefix_len);
}

/* send_reply_runs(pieces, items, prefix: bytes, ends: list of int) -> list[bytes] | None:
 * send_reply_heads(pieces, items[a:b], prefix) for each run [a, b) that ``ends`` marks (its
 * increasing ends; the first run starts at 0, the last ends at len(items)), in one call: a
 * flush's replies, one buffer a connection. None when any run's would be None. */
PyObject *send_reply_runs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != PIECES ||
        !PyList_Check(args[1]) || !PyList_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "send_reply_runs(pieces: tuple[bytes x5], items: list, prefix: bytes, "
                        "ends: list[int])");
        return NULL;
    }
    const char *prefix;
    Py_ssize_t prefix_len = 0;
    if ((prefix = reply_prefix(args[2], &prefix_len)) == NULL) Py_RETURN_NONE;
    const char *piece[PIECES];
    Py_ssize_t piece_len[PIECES], fixed;
    int bad = reply_pieces(args[0], piece, piece_len, &fixed);
    if (bad == 1) return NULL;
    if (bad == 2) Py_RETURN_NONE;
    PyObject *items = args[1], *ends = args[3];
    Py_ssize_t runs = PyList_GET_SIZE(ends), count = PyList_GET_SIZE(items), start = 0;
    PyObject *out = PyList_New(runs);
    if (out == NULL) return NULL;
    for (Py_ssize_t r = 0; r < runs; r++) {
        long long end;
        if (reply_i64(PyList_GET_ITEM(ends, r), start, count, &end) ||
            (r == runs - 1 && end != count)) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        PyObject *heads = reply_heads(piece, piece_len, fixed, items, start, (Py_ssize_t)end,
                                      prefix, prefix_len);
        if (heads == NULL || heads == Py_None) {
            Py_DECREF(out);
            return heads;
        }
        PyList_SET_ITEM(out, r, heads);
        start = (Py_ssize_t)end;
    }
    if (runs == 0 && count != 0) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

