/*
 * header.c: the two header decoders of rocketq._native._remoting, C twins of
 * rocketq/remoting/codec.py's decode_json_header and decode_binary_header (RocketMQ's
 * RemotingSerializable / RocketMQSerializable.rocketMQProtocolDecode).
 *
 * They handle the shapes real clients send and nothing else: a JSON header is one object
 * whose code/language/version/opaque/flag/remark are scalars and whose extFields is an object
 * of scalars. Anything else (nested values, floats or out-of-range numbers where an int32 is
 * read, NaN, escaped surrogates, bytes that are not UTF-8, a missing code, bad lengths) is
 * HD_FALLBACK: the Python decoder, the reference, decodes that header or words its error.
 * Every read is bounded by the header's length; nothing is read past it.
 */
#include "remoting.h"

Types TYPES;

#define MAX_INT_DIGITS 10

typedef struct {
    const unsigned char *p;   /* next byte */
    const unsigned char *end; /* one past the header */
    unsigned char *scratch;   /* unescaped string bytes (never longer than the header) */
} Cursor;

/* a scalar JSON value: its kind and, for strings and numbers, its text */
enum { V_STRING, V_INT, V_FLOAT, V_TRUE, V_FALSE, V_NULL };

typedef struct {
    int kind;
    const unsigned char *text; /* V_STRING: unescaped UTF-8; numbers: the literal */
    Py_ssize_t len;
} Scalar;

static void skip_ws(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int hex4(const unsigned char *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char ch = p[i];
        v <<= 4;
        if (ch >= '0' && ch <= '9') v |= (uint32_t)(ch - '0');
        else if (ch >= 'a' && ch <= 'f') v |= (uint32_t)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F') v |= (uint32_t)(ch - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* a string at c->p (the opening quote): its unescaped bytes in s; -1 for fallback */
static int parse_string(Cursor *c, Scalar *s) {
    const unsigned char *p = c->p + 1, *end = c->end;
    const unsigned char *start = p;
    while (p < end && *p != '"' && *p != '\\') {
        if (*p < 0x20) return -1; /* a raw control character: strict JSON refuses it */
        p++;
    }
    if (p >= end) return -1;
    if (*p == '"') { /* no escapes: the bytes as they are */
        s->kind = V_STRING;
        s->text = start;
        s->len = p - start;
        c->p = p + 1;
        return 0;
    }
    unsigned char *out = c->scratch;
    Py_ssize_t head = p - start;
    memcpy(out, start, (size_t)head);
    out += head;
    while (p < end) {
        unsigned char ch = *p;
        if (ch == '"') {
            s->kind = V_STRING;
            s->text = c->scratch;
            s->len = out - c->scratch;
            c->scratch = out; /* the next string's bytes go after these */
            c->p = p + 1;
            return 0;
        }
        if (ch < 0x20) return -1;
        if (ch != '\\') {
            *out++ = ch;
            p++;
            continue;
        }
        if (end - p < 2) return -1;
        ch = p[1];
        p += 2;
        switch (ch) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '/': *out++ = '/'; break;
        case 'b': *out++ = '\b'; break;
        case 'f': *out++ = '\f'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        case 't': *out++ = '\t'; break;
        case 'u': {
            uint32_t v;
            if (end - p < 4 || hex4(p, &v) < 0) return -1;
            p += 4;
            if (v >= 0xD800 && v <= 0xDFFF) return -1; /* surrogates: the Python decoder */
            if (v < 0x80) {
                *out++ = (unsigned char)v;
            } else if (v < 0x800) {
                *out++ = (unsigned char)(0xC0 | (v >> 6));
                *out++ = (unsigned char)(0x80 | (v & 0x3F));
            } else {
                *out++ = (unsigned char)(0xE0 | (v >> 12));
                *out++ = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
                *out++ = (unsigned char)(0x80 | (v & 0x3F));
            }
            break;
        }
        default: return -1;
        }
    }
    return -1;
}

static int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }

/* a number as json's NUMBER_RE reads it: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? */
static int parse_number(Cursor *c, Scalar *s) {
    const unsigned char *p = c->p, *end = c->end, *start = c->p;
    if (p < end && *p == '-') p++;
    if (p >= end || !is_digit(*p)) return -1;
    if (*p == '0') p++;
    else while (p < end && is_digit(*p)) p++;
    int is_float = 0;
    if (end - p >= 2 && *p == '.' && is_digit(p[1])) {
        is_float = 1;
        p += 2;
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        const unsigned char *q = p + 1;
        if (q < end && (*q == '-' || *q == '+')) q++;
        if (q < end && is_digit(*q)) {
            is_float = 1;
            p = q;
            while (p < end && is_digit(*p)) p++;
        }
    }
    s->kind = is_float ? V_FLOAT : V_INT;
    s->text = start;
    s->len = p - start;
    c->p = p;
    return 0;
}

static int parse_word(Cursor *c, const char *word, Py_ssize_t n) {
    if (c->end - c->p < n || memcmp(c->p, word, (size_t)n) != 0) return -1;
    c->p += n;
    return 0;
}

/* a scalar value at c->p; -1 for anything else (objects, arrays, NaN, bad syntax) */
static int parse_scalar(Cursor *c, Scalar *s) {
    if (c->p >= c->end) return -1;
    switch (*c->p) {
    case '"': return parse_string(c, s);
    case 't': s->kind = V_TRUE; return parse_word(c, "true", 4);
    case 'f': s->kind = V_FALSE; return parse_word(c, "false", 5);
    case 'n': s->kind = V_NULL; return parse_word(c, "null", 4);
    default: return parse_number(c, s);
    }
}

/* the text fastjson (and codec._text) gives a scalar read into a String; NULL for null */
static PyObject *scalar_text(const Scalar *s, int *failed) {
    *failed = 0;
    switch (s->kind) {
    case V_TRUE: return PyUnicode_FromStringAndSize("true", 4);
    case V_FALSE: return PyUnicode_FromStringAndSize("false", 5);
    case V_NULL: return NULL;
    default: {
        PyObject *text = PyUnicode_DecodeUTF8((const char *)s->text, s->len, NULL);
        if (text == NULL) *failed = 1;
        return text;
    }
    }
}

/* an int32 field (code, version, opaque, flag) as codec._int_field reads it; -1 fallback */
static int scalar_int32(const Scalar *s, int32_t *out) {
    if (s->kind == V_NULL) {
        *out = 0;
        return 0;
    }
    if (s->kind != V_INT && s->kind != V_STRING) return -1;
    const unsigned char *p = s->text, *end = s->text + s->len;
    int negative = 0;
    if (p < end && *p == '-') {
        negative = 1;
        p++;
    }
    if (p >= end || end - p > MAX_INT_DIGITS) return -1; /* int()'s other forms: Python */
    int64_t v = 0;
    for (; p < end; p++) {
        if (!is_digit(*p)) return -1;
        v = v * 10 + (*p - '0');
    }
    if (negative) v = -v;
    if (v < INT32_MIN || v > INT32_MAX) return -1;
    *out = (int32_t)v;
    return 0;
}

static int key_is(const Scalar *k, const char *name) {
    size_t n = strlen(name);
    return (size_t)k->len == n && memcmp(k->text, name, n) == 0;
}

/* drop the None values extFields held (codec._ext_fields skips null items, keeping the
 * order of the object json built: a later duplicate key replaces the value in place) */
static int drop_nulls(PyObject *fields) {
    PyObject *key, *value, *gone = NULL;
    Py_ssize_t pos = 0;
    while (PyDict_Next(fields, &pos, &key, &value)) {
        if (value != Py_None) continue;
        if (gone == NULL && (gone = PyList_New(0)) == NULL) return -1;
        if (PyList_Append(gone, key) < 0) {
            Py_DECREF(gone);
            return -1;
        }
    }
    if (gone == NULL) return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(gone); i++) {
        if (PyDict_DelItem(fields, PyList_GET_ITEM(gone, i)) < 0) {
            Py_DECREF(gone);
            return -1;
        }
    }
    Py_DECREF(gone);
    return 0;
}

/* the extFields object at c->p into a new dict; HD_FALLBACK / HD_ERROR as the decoders */
static int parse_ext_fields(Cursor *c, PyObject **out) {
    PyObject *fields = PyDict_New();
    if (fields == NULL) return HD_ERROR;
    int has_null = 0, failed;
    c->p++; /* '{' */
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        *out = fields;
        return HD_OK;
    }
    for (;;) {
        Scalar k, v;
        skip_ws(c);
        if (c->p >= c->end || *c->p != '"' || parse_string(c, &k) < 0) goto fallback;
        skip_ws(c);
        if (c->p >= c->end || *c->p != ':') goto fallback;
        c->p++;
        skip_ws(c);
        if (parse_scalar(c, &v) < 0) goto fallback;
        PyObject *key = PyUnicode_DecodeUTF8((const char *)k.text, k.len, NULL);
        if (key == NULL) goto fallback;
        PyObject *value = scalar_text(&v, &failed);
        if (failed) {
            Py_DECREF(key);
            goto fallback;
        }
        if (value == NULL) {
            has_null = 1;
            value = Py_NewRef(Py_None);
        }
        int rc = PyDict_SetItem(fields, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (rc < 0) goto error;
        skip_ws(c);
        if (c->p >= c->end) goto fallback;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p != '}') goto fallback;
        c->p++;
        break;
    }
    if (has_null && drop_nulls(fields) < 0) goto error;
    *out = fields;
    return HD_OK;
fallback:
    PyErr_Clear();
    Py_DECREF(fields);
    return HD_FALLBACK;
error:
    Py_DECREF(fields);
    return HD_ERROR;
}

/* the extFields object at c->p as spans into meta->spans: HD_OK, HD_FALLBACK (not plain
 * items: the caller's Python decoder decides) or 1 when there are more than MAX_SPANS of them
 * (the caller parses them into a dict then) */
static int parse_ext_spans(Cursor *c, HeaderMeta *meta) {
    Py_ssize_t n = 0;
    c->p++; /* '{' */
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        meta->n_spans = 0;
        return HD_OK;
    }
    for (;;) {
        Scalar k, v;
        skip_ws(c);
        if (c->p >= c->end || *c->p != '"' || parse_string(c, &k) < 0) return HD_FALLBACK;
        skip_ws(c);
        if (c->p >= c->end || *c->p != ':') return HD_FALLBACK;
        c->p++;
        skip_ws(c);
        if (parse_scalar(c, &v) < 0) return HD_FALLBACK;
        if (n == MAX_SPANS) return 1;
        FieldSpan *s = &meta->spans[n++];
        s->key = k.text;
        s->key_len = k.len;
        s->is_null = v.kind == V_NULL;
        /* scalar_text's text: true and false as words, numbers as their literal */
        s->value = v.kind == V_TRUE    ? (const unsigned char *)"true"
                   : v.kind == V_FALSE ? (const unsigned char *)"false"
                                       : v.text;
        s->value_len = v.kind == V_TRUE ? 4 : v.kind == V_FALSE ? 5 : v.len;
        skip_ws(c);
        if (c->p >= c->end) return HD_FALLBACK;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p != '}') return HD_FALLBACK;
        c->p++;
        break;
    }
    meta->n_spans = n;
    return HD_OK;
}

int fill_fields(PyObject *fields, const FieldSpan *spans, Py_ssize_t n) {
    int has_null = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const FieldSpan *s = &spans[i];
        PyObject *key = PyUnicode_DecodeUTF8((const char *)s->key, s->key_len, NULL);
        if (key == NULL) {
            PyErr_Clear();
            return HD_FALLBACK;
        }
        PyObject *value = s->is_null ? Py_NewRef(Py_None)
                                     : PyUnicode_DecodeUTF8((const char *)s->value,
                                                            s->value_len, NULL);
        if (value == NULL) {
            Py_DECREF(key);
            PyErr_Clear();
            return HD_FALLBACK;
        }
        has_null |= s->is_null;
        int rc = PyDict_SetItem(fields, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (rc < 0) return HD_ERROR;
    }
    if (has_null && drop_nulls(fields) < 0) return HD_ERROR;
    return HD_OK;
}

static PyObject *language_of_text(PyObject *text) {
    PyObject *member = PyDict_GetItemWithError(TYPES.language_by_name, text);
    if (member == NULL) {
        if (PyErr_Occurred()) return NULL;
        member = TYPES.language_other;
    }
    return Py_NewRef(member);
}

static PyObject *build_command(int32_t code, PyObject *language, int32_t version,
                               int32_t opaque, int32_t flag, PyObject *remark,
                               PyObject *ext_fields, PyObject *body, PyObject *serialize) {
    PyObject *args[9] = {NULL};
    args[0] = PyLong_FromLong(code);
    args[2] = PyLong_FromLong(version);
    args[3] = PyLong_FromLong(opaque);
    args[4] = PyLong_FromLong(flag);
    PyObject *cmd = NULL;
    if (args[0] && args[2] && args[3] && args[4]) {
        args[1] = language;
        args[5] = remark;
        args[6] = ext_fields;
        args[7] = body;
        args[8] = serialize;
        cmd = new_command(args);
    }
    Py_XDECREF(args[0]);
    Py_XDECREF(args[2]);
    Py_XDECREF(args[3]);
    Py_XDECREF(args[4]);
    return cmd;
}

int decode_json_header(const unsigned char *h, Py_ssize_t n, PyObject *body, PyObject **out,
                       HeaderMeta *meta) {
    /* codec.decode_json_header reads a header starting "{" and a non-zero byte as UTF-8;
     * other encodings it sniffs: the Python decoder */
    if (n < 2 || h[0] != '{' || h[1] == 0) return HD_FALLBACK;
    /* the Python decoder decodes the whole header first: a byte that is not UTF-8 anywhere
     * (an ignored key included) fails it; strict here, surrogatepass there: Python decides */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (h[i] < 0x80) continue;
        PyObject *whole = PyUnicode_DecodeUTF8((const char *)h, n, NULL);
        if (whole == NULL) {
            PyErr_Clear();
            return HD_FALLBACK;
        }
        Py_DECREF(whole);
        break;
    }
    unsigned char *scratch = PyMem_Malloc((size_t)n);
    if (scratch == NULL) {
        PyErr_NoMemory();
        return HD_ERROR;
    }
    Cursor c = {h + 1, h + n, scratch};
    int rc = HD_FALLBACK, has_code = 0, failed, spans = 0, lazy = 0;
    int32_t code = 0, version = 0, opaque = 0, flag = 0;
    PyObject *remark = Py_NewRef(Py_None), *ext = NULL, *language = NULL;
    Scalar language_value = {V_NULL, NULL, 0};
    skip_ws(&c);
    if (c.p < c.end && *c.p == '}') {
        c.p++;
        goto done; /* no code: the Python decoder words the error */
    }
    for (;;) {
        Scalar k, v;
        skip_ws(&c);
        if (c.p >= c.end || *c.p != '"' || parse_string(&c, &k) < 0) goto done;
        skip_ws(&c);
        if (c.p >= c.end || *c.p != ':') goto done;
        c.p++;
        skip_ws(&c);
        if (key_is(&k, "extFields")) {
            PyObject *fields = NULL;
            spans = 0;
            if (c.p < c.end && *c.p == '{') {
                const unsigned char *at = c.p;
                unsigned char *scratch_at = c.scratch;
                int ext_rc = meta != NULL && meta->spans != NULL ? parse_ext_spans(&c, meta) : 1;
                if (ext_rc == 1) { /* no spans wanted, or too many: the dict */
                    c.p = at;
                    c.scratch = scratch_at;
                    ext_rc = parse_ext_fields(&c, &fields);
                } else if (ext_rc == HD_OK) {
                    spans = 1;
                }
                if (ext_rc != HD_OK) {
                    rc = ext_rc;
                    goto done;
                }
            } else {
                if (parse_scalar(&c, &v) < 0 || v.kind != V_NULL) goto done;
            }
            Py_XSETREF(ext, fields);
        } else {
            if (parse_scalar(&c, &v) < 0) goto done;
            if (key_is(&k, "code")) {
                if (v.kind == V_NULL || scalar_int32(&v, &code) < 0) goto done;
                has_code = 1;
            } else if (key_is(&k, "version")) {
                if (scalar_int32(&v, &version) < 0) goto done;
            } else if (key_is(&k, "opaque")) {
                if (scalar_int32(&v, &opaque) < 0) goto done;
            } else if (key_is(&k, "flag")) {
                if (scalar_int32(&v, &flag) < 0) goto done;
            } else if (key_is(&k, "language")) {
                language_value = v; /* its text stays put: scratch only grows */
            } else if (key_is(&k, "remark")) {
                PyObject *text = scalar_text(&v, &failed);
                if (failed) goto done;
                Py_XSETREF(remark, text != NULL ? text : Py_NewRef(Py_None));
            }
            /* any other key (serializeTypeCurrentRPC ...) is read and ignored */
        }
        skip_ws(&c);
        if (c.p >= c.end) goto done;
        if (*c.p == ',') {
            c.p++;
            continue;
        }
        if (*c.p != '}') goto done;
        c.p++;
        break;
    }
    skip_ws(&c);
    if (c.p != c.end || !has_code) goto done; /* extra data, or no code: Python */
    if (language_value.kind == V_STRING || language_value.kind == V_INT ||
        language_value.kind == V_FLOAT) { /* numbers arrive as text (parse_int=str) */
        PyObject *text = PyUnicode_DecodeUTF8((const char *)language_value.text,
                                              language_value.len, NULL);
        if (text == NULL) goto done;
        language = language_of_text(text);
        Py_DECREF(text);
        if (language == NULL) {
            rc = HD_ERROR;
            goto done;
        }
    } else {
        language = Py_NewRef(TYPES.language_other);
    }
    if (ext == NULL && (ext = PyDict_New()) == NULL) {
        rc = HD_ERROR;
        goto done;
    }
    if (spans) { /* the items stay spans for a request of lazy_code, else go to the dict */
        lazy = code == meta->lazy_code && (flag & (FLAG_RESPONSE | FLAG_ONEWAY)) == 0;
        if (!lazy) {
            int fill_rc = fill_fields(ext, meta->spans, meta->n_spans);
            if (fill_rc != HD_OK) {
                rc = fill_rc;
                goto done;
            }
        }
    }
    *out = build_command(code, language, version, opaque, flag, remark, ext, body,
                         TYPES.serialize_json);
    rc = *out != NULL ? HD_OK : HD_ERROR;
    if (meta != NULL && rc == HD_OK) {
        meta->code = code;
        meta->flag = flag;
        meta->ext_fields = ext; /* borrowed: the command holds it */
        if (lazy) { /* the spans' bytes live in scratch: the caller frees it */
            meta->lazy = 1;
            meta->scratch = scratch;
            scratch = NULL;
        }
    }
done:
    if (rc == HD_FALLBACK) PyErr_Clear();
    Py_XDECREF(language);
    Py_XDECREF(remark);
    Py_XDECREF(ext);
    PyMem_Free(scratch);
    return rc;
}

int decode_binary_header(const unsigned char *h, Py_ssize_t n, PyObject *body, PyObject **out) {
    if (n < BINARY_HEADER_SIZE + 8) return HD_FALLBACK;
    int32_t code = rm_i16(h), version = rm_i16(h + 3), opaque = rm_i32(h + 5),
            flag = rm_i32(h + 9);
    unsigned language_byte = h[2];
    Py_ssize_t pos = BINARY_HEADER_SIZE;
    int32_t remark_len = rm_i32(h + pos);
    pos += 4;
    if (remark_len < 0 || remark_len > n - pos) return HD_FALLBACK;
    const unsigned char *remark_bytes = h + pos;
    pos += remark_len;
    if (n - pos < 4) return HD_FALLBACK;
    int32_t ext_len = rm_i32(h + pos);
    pos += 4;
    if (ext_len < 0 || ext_len > n - pos) return HD_FALLBACK;
    const unsigned char *e = h + pos, *e_end = h + pos + ext_len;
    PyObject *remark = NULL, *fields = PyDict_New(), *cmd = NULL;
    if (fields == NULL) return HD_ERROR;
    int rc = HD_FALLBACK;
    while (e < e_end) {
        if (e_end - e < 2) goto done;
        int16_t key_len = rm_i16(e);
        if (key_len < 0 || e_end - (e + 2) < (Py_ssize_t)key_len + 4) goto done;
        const unsigned char *key_bytes = e + 2;
        int32_t value_len = rm_i32(key_bytes + key_len);
        const unsigned char *value_bytes = key_bytes + key_len + 4;
        if (value_len < 0 || value_len > e_end - value_bytes) goto done;
        PyObject *key = PyUnicode_DecodeUTF8((const char *)key_bytes, key_len, NULL);
        if (key == NULL) goto done;
        PyObject *value = PyUnicode_DecodeUTF8((const char *)value_bytes, value_len, NULL);
        if (value == NULL) {
            Py_DECREF(key);
            goto done;
        }
        int set = PyDict_SetItem(fields, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (set < 0) {
            rc = HD_ERROR;
            goto done;
        }
        e = value_bytes + value_len;
    }
    if (remark_len > 0) {
        remark = PyUnicode_DecodeUTF8((const char *)remark_bytes, remark_len, NULL);
        if (remark == NULL) goto done;
    } else {
        remark = Py_NewRef(Py_None);
    }
    PyObject *language = language_byte < LANGUAGE_COUNT ? TYPES.language_by_byte[language_byte]
                                                        : TYPES.language_other;
    cmd = build_command(code, language, version, opaque, flag, remark, fields, body,
                        TYPES.serialize_rocketmq);
    rc = cmd != NULL ? HD_OK : HD_ERROR;
    *out = cmd;
done:
    if (rc == HD_FALLBACK) PyErr_Clear();
    Py_XDECREF(remark);
    Py_DECREF(fields);
    return rc;
}
