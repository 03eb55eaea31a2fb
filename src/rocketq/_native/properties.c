/* The property strings, Java hashes and topic cache that the scan and the decode share. */
#include "record.h"

PyObject *S_KEYS, *S_UNIQ_KEY, *S_TAGS, *S_DELAY, *S_EMPTY;

/* Java's String.hashCode step from h over the UTF-16 code units of s[from:to] (a character
 * past the BMP is its surrogate pair): the index's hash continues over topic#key */
uint32_t java_hash_units(uint32_t h, PyObject *s, Py_ssize_t from, Py_ssize_t to) {
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = from; i < to; i++) {
        h = java_hash_step(h, PyUnicode_READ(kind, data, i));
    }
    return h;
}

/* Java String.hashCode over the UTF-16 code units of a str, as a signed int32 */
int32_t java_hash(PyObject *s) {
    return (int32_t)java_hash_units(0, s, 0, PyUnicode_GET_LENGTH(s));
}

/* properties.decode_properties: split on 0x02, partition at the first 0x01, keep pairs with
 * a name and a value; strict UTF-8 over the whole string (skipped segments are checked too).
 * NULL with UnicodeDecodeError (or MemoryError) set on failure. */
PyObject *parse_properties(const unsigned char *p, Py_ssize_t n) {
    return parse_properties_keyed(NULL, p, n);
}

static PyObject *cached_key(KeyCache *kc, const unsigned char *p, Py_ssize_t n) {
    for (int i = 0; i < kc->n; i++) {
        if (kc->len[i] == n && memcmp(kc->bytes[i], p, (size_t)n) == 0) return Py_NewRef(kc->str[i]);
    }
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, n, NULL);
    if (s == NULL || kc->n == KEY_CACHE) return s;
    PyUnicode_InternInPlace(&s);
    kc->bytes[kc->n] = p;
    kc->len[kc->n] = n;
    kc->str[kc->n++] = Py_NewRef(s);
    return s;
}

void key_cache_clear(KeyCache *kc) {
    for (int i = 0; i < kc->n; i++) Py_DECREF(kc->str[i]);
    kc->n = 0;
}

/* the names through the cache give the same dict and the same strict UTF-8 (a cached name's
 * bytes were decoded once already) */
PyObject *parse_properties_keyed(KeyCache *kc, const unsigned char *p, Py_ssize_t n) {
    PyObject *d = PyDict_New();
    if (d == NULL || n == 0) return d;
    const unsigned char *end = p + n;
    while (p <= end) {
        const unsigned char *seg_end = memchr(p, 0x02, (size_t)(end - p));
        if (seg_end == NULL) seg_end = end;
        const unsigned char *sep = memchr(p, 0x01, (size_t)(seg_end - p));
        if (sep != NULL && sep > p && sep + 1 < seg_end) {
            PyObject *k = kc ? cached_key(kc, p, sep - p)
                             : PyUnicode_DecodeUTF8((const char *)p, sep - p, NULL);
            if (k == NULL) goto fail;
            PyObject *v = PyUnicode_DecodeUTF8((const char *)sep + 1, seg_end - sep - 1, NULL);
            if (v == NULL) {
                Py_DECREF(k);
                goto fail;
            }
            int rc = PyDict_SetItem(d, k, v);
            Py_DECREF(k);
            Py_DECREF(v);
            if (rc < 0) goto fail;
        } else if (seg_end > p) {
            PyObject *check = PyUnicode_DecodeUTF8((const char *)p, seg_end - p, NULL);
            if (check == NULL) goto fail;
            Py_DECREF(check);
        }
        p = seg_end + 1;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

PyObject *cached_topic(TopicCache *tc, const unsigned char *p, Py_ssize_t n) {
    if (tc->str != NULL && tc->len == n && memcmp(tc->bytes, p, (size_t)n) == 0) {
        Py_INCREF(tc->str);
        return tc->str;
    }
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, n, NULL);
    if (s == NULL) return NULL;
    Py_XDECREF(tc->str);
    Py_INCREF(s);
    tc->str = s;
    tc->bytes = p;
    tc->len = n;
    return s;
}


int properties_setup(void) {
    S_KEYS = PyUnicode_InternFromString("KEYS");
    S_UNIQ_KEY = PyUnicode_InternFromString("UNIQ_KEY");
    S_TAGS = PyUnicode_InternFromString("TAGS");
    S_DELAY = PyUnicode_InternFromString("DELAY");
    S_EMPTY = PyUnicode_InternFromString("");
    return S_KEYS && S_UNIQ_KEY && S_TAGS && S_DELAY && S_EMPTY ? 0 : -1;
}
