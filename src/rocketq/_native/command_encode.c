/*
 * command_encode.c: the head of a JSON frame (length, header word, header) in one call, the
 * C twin of rocketq/remoting/codec.py's encode_head for the JSON serialize type (RocketMQ's
 * RemotingCommand.encodeHeader with fastjson's shape: keys sorted, compact, extFields values
 * as strings, in the dict's order).
 *
 * The strings are escaped as json.encoder.encode_basestring does (ensure_ascii=False):
 * quote, backslash and \b \f \n \r \t by name, the other controls as \u00xx, everything else
 * as its UTF-8 bytes. A command it does not handle (a value that is not a str, text with lone
 * surrogates, a number outside 64 bits, an unknown language, a header over 16 MiB) returns
 * None, and the Python encoder, the reference, writes it or words the error.
 */
#include "remoting.h"

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int reserve(Out *o, Py_ssize_t more) {
    if (o->cap - o->len >= more) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 256;
    while (cap - o->len < more) {
        if (cap > PY_SSIZE_T_MAX / 2) return -1;
        cap *= 2;
    }
    char *grown = PyMem_Realloc(o->buf, (size_t)cap);
    if (grown == NULL) return -1;
    o->buf = grown;
    o->cap = cap;
    return 0;
}

static int put(Out *o, const char *s, Py_ssize_t n) {
    if (reserve(o, n) < 0) return -1;
    memcpy(o->buf + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

#define PUT_LITERAL(o, s) put((o), (s), (Py_ssize_t)sizeof(s) - 1)

static const char HEX[] = "0123456789abcdef";

/* a str as a JSON string; 1 when not handled (lone surrogates), -1 on memory */
static int put_quoted(Out *o, PyObject *text) {
    if (!PyUnicode_Check(text)) return 1;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (s == NULL) {
        PyErr_Clear();
        return 1;
    }
    if (n > PY_SSIZE_T_MAX / 6 - 2 || reserve(o, n * 6 + 2) < 0) return -1;
    char *w = o->buf + o->len;
    *w++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            *w++ = (char)ch;
            continue;
        }
        *w++ = '\\';
        switch (ch) {
        case '"': *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '\b': *w++ = 'b'; break;
        case '\f': *w++ = 'f'; break;
        case '\n': *w++ = 'n'; break;
        case '\r': *w++ = 'r'; break;
        case '\t': *w++ = 't'; break;
        default:
            *w++ = 'u';
            *w++ = '0';
            *w++ = '0';
            *w++ = HEX[ch >> 4];
            *w++ = HEX[ch & 0xF];
        }
    }
    *w++ = '"';
    o->len = w - o->buf;
    return 0;
}

/* an int attribute as decimal; 1 when not handled */
static int put_int(Out *o, PyObject *value) {
    if (!PyLong_Check(value)) return 1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 1;
    }
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", v);
    return put(o, digits, n);
}

static PyObject *S_CODE, *S_LANGUAGE, *S_VERSION, *S_OPAQUE, *S_FLAG, *S_REMARK, *S_EXT,
    *S_BODY, *S_SERIALIZE;

static int intern_names(void) {
    if (S_CODE != NULL) return 0;
    return (S_CODE = PyUnicode_InternFromString("code")) == NULL ||
                   (S_LANGUAGE = PyUnicode_InternFromString("language")) == NULL ||
                   (S_VERSION = PyUnicode_InternFromString("version")) == NULL ||
                   (S_OPAQUE = PyUnicode_InternFromString("opaque")) == NULL ||
                   (S_FLAG = PyUnicode_InternFromString("flag")) == NULL ||
                   (S_REMARK = PyUnicode_InternFromString("remark")) == NULL ||
                   (S_EXT = PyUnicode_InternFromString("ext_fields")) == NULL ||
                   (S_BODY = PyUnicode_InternFromString("body")) == NULL ||
                   (S_SERIALIZE = PyUnicode_InternFromString("serialize_type")) == NULL
               ? -1
               : 0;
}

/* the header text of cmd after the prefix; 0 done, 1 not handled, -1 error */
static int put_header(Out *o, PyObject *cmd, PyObject **fields) {
    enum { CODE, LANGUAGE, VERSION, OPAQUE, FLAG, REMARK, EXT, COUNT };
    PyObject *names[COUNT] = {S_CODE, S_LANGUAGE, S_VERSION, S_OPAQUE, S_FLAG, S_REMARK, S_EXT};
    int rc = -1;
    for (int i = 0; i < COUNT; i++) {
        if ((fields[i] = PyObject_GetAttr(cmd, names[i])) == NULL) return -1;
    }
    if (PUT_LITERAL(o, "{\"code\":") < 0) return -1;
    if ((rc = put_int(o, fields[CODE])) != 0) return rc;
    PyObject *ext = fields[EXT];
    if (!PyDict_Check(ext)) return 1;
    if (PyDict_GET_SIZE(ext) > 0) {
        if (PUT_LITERAL(o, ",\"extFields\":{") < 0) return -1;
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        int first = 1;
        while (PyDict_Next(ext, &pos, &key, &value)) {
            if (!first && put(o, ",", 1) < 0) return -1;
            first = 0;
            if ((rc = put_quoted(o, key)) != 0) return rc;
            if (put(o, ":", 1) < 0) return -1;
            if ((rc = put_quoted(o, value)) != 0) return rc;
        }
        if (put(o, "}", 1) < 0) return -1;
    }
    if (PUT_LITERAL(o, ",\"flag\":") < 0) return -1;
    if ((rc = put_int(o, fields[FLAG])) != 0) return rc;
    if (PUT_LITERAL(o, ",\"language\":") < 0) return -1;
    int overflow;
    long language = PyLong_Check(fields[LANGUAGE])
                        ? PyLong_AsLongAndOverflow(fields[LANGUAGE], &overflow)
                        : -1;
    if (PyErr_Occurred()) PyErr_Clear();
    if (language < 0 || language >= LANGUAGE_COUNT ||
        fields[LANGUAGE] != TYPES.language_by_byte[language])
        return 1; /* only LanguageCode members: their names are in the table */
    if ((rc = put_quoted(o, TYPES.language_names[language])) != 0) return rc;
    if (PUT_LITERAL(o, ",\"opaque\":") < 0) return -1;
    if ((rc = put_int(o, fields[OPAQUE])) != 0) return rc;
    if (fields[REMARK] != Py_None) {
        if (PUT_LITERAL(o, ",\"remark\":") < 0) return -1;
        if ((rc = put_quoted(o, fields[REMARK])) != 0) return rc;
    }
    if (PUT_LITERAL(o, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":") < 0) return -1;
    if ((rc = put_int(o, fields[VERSION])) != 0) return rc;
    return put(o, "}", 1);
}

/* encode_json_head(cmd): the frame head of a JSON command as bytes, or None */
PyObject *encode_json_head(PyObject *self, PyObject *cmd) {
    if (TYPES.command_cls == NULL || intern_names() < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "encode before configure");
        return NULL;
    }
    PyObject *serialize = PyObject_GetAttr(cmd, S_SERIALIZE);
    if (serialize == NULL) return NULL;
    int is_json = serialize == TYPES.serialize_json;
    Py_DECREF(serialize);
    if (!is_json) Py_RETURN_NONE;
    PyObject *body = PyObject_GetAttr(cmd, S_BODY);
    if (body == NULL) return NULL;
    Py_ssize_t body_len = PyBytes_Check(body) ? PyBytes_GET_SIZE(body) : -1;
    Py_DECREF(body);
    if (body_len < 0) Py_RETURN_NONE;
    PyObject *fields[7] = {NULL};
    Out o = {NULL, 0, 0};
    PyObject *result = NULL;
    int rc = reserve(&o, 512) < 0 ? -1 : put(&o, "\0\0\0\0\0\0\0\0", 8);
    if (rc == 0) rc = put_header(&o, cmd, fields);
    Py_ssize_t header_len = o.len - 8;
    if (rc == 0 && (header_len > (Py_ssize_t)HEADER_LENGTH_MASK ||
                    (int64_t)4 + header_len + body_len > INT32_MAX))
        rc = 1;
    if (rc == 0) {
        unsigned char *p = (unsigned char *)o.buf;
        uint32_t total = (uint32_t)(4 + header_len + body_len), word = (uint32_t)header_len;
        for (int i = 0; i < 4; i++) {
            p[i] = (unsigned char)(total >> (24 - 8 * i));
            p[4 + i] = (unsigned char)(word >> (24 - 8 * i));
        }
        result = PyBytes_FromStringAndSize(o.buf, o.len);
    } else if (rc == 1) {
        result = Py_NewRef(Py_None);
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    for (int i = 0; i < 7; i++) Py_XDECREF(fields[i]);
    PyMem_Free(o.buf);
    return result;
}
