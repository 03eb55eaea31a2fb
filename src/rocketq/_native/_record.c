/*
 * rocketq._native._record: the CommitLog record paths in C (issue 13, lever 4).
 *
 * The record layout is rocketq/common/record_layout.py's (store.md section 2.1); this file
 * repeats its offsets as the R_* constants below. Three entry points, each the compiled twin
 * of a pure-Python function that stays the reference (rocketq.common.native_record picks):
 *
 *   encode_record   - message_decoder.encode_message after the host bytes are known
 *   scan_records    - commitlog.check_message_and_return_size over a run of records
 *                     (recovery: validate only, GIL released; reput: DispatchRequests)
 *   decode_records  - message_decoder.decode_messages into MessageExt objects
 *
 * Every length read from a record is checked against the buffer before it is used: a
 * corrupted TOTALSIZE, BODYLENGTH, TOPICLEN or PROPLEN stops the walk, it never reads past
 * the end. Where a record cannot be handled here (corrupt, compressed, bad UTF-8), the walk
 * stops at it and says so; the Python caller then asks the pure-Python code about that one
 * record, so error messages and edge cases come from one place.
 *
 * CRC32 is zlib's (reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF), the
 * fastest of three ways found at import: carry-less multiplication folding on x86-64 CPUs
 * with PCLMULQDQ (about 2x zlib's own crc32 here), else the crc32 of the libz.so.1 that
 * CPython's zlib module loads (dlopen), else slicing-by-8 tables. Nothing is linked at build
 * time beyond CPython: no zlib headers needed. CRC32_IMPL says which one runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ layout */

#define MAGIC_V1 0xDAA320A7u
#define MAGIC_V2 0xDAA320ABu
#define MAGIC_BLANK 0xCBD43194u
#define BLANK_SIZE 8
#define MIN_RECORD_SIZE 91
#define FIXED_V4_SIZE 88
#define BORNHOST_V6 0x10
#define STOREHOST_V6 0x20
#define COMPRESSED_FLAG 0x1
#define V1_TOPIC_MAX 127
#define INT16_MAX_LEN 32767

#define R_TOTAL 0
#define R_MAGIC 4
#define R_CRC 8
#define R_QUEUE_ID 12
#define R_FLAG 16
#define R_QUEUE_OFFSET 20
#define R_PHY 28
#define R_SYSFLAG 36
#define R_BORN_TS 40
#define R_BORN_HOST 48

/* scan / decode statuses (mirrored in _record.pyi and native_record.py) */
#define ST_END 0        /* reached max_pos */
#define ST_BLANK 1      /* an END_OF_FILE blank record at pos */
#define ST_BAD 2        /* the record at pos fails the checks */
#define ST_INCOMPLETE 3 /* the record at pos continues past the written bytes */

static inline uint32_t rd_u32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline int32_t rd_i32(const unsigned char *p) { return (int32_t)rd_u32(p); }
static inline int64_t rd_i64(const unsigned char *p) {
    return (int64_t)((uint64_t)rd_u32(p) << 32 | (uint64_t)rd_u32(p + 4));
}
static inline void wr_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}
static inline void wr_u64(unsigned char *p, uint64_t v) {
    wr_u32(p, (uint32_t)(v >> 32));
    wr_u32(p + 4, (uint32_t)v);
}
static inline void wr_u16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static inline Py_ssize_t host_size(int32_t sys_flag, int bit) {
    return (sys_flag & bit) ? 20 : 8;
}
static inline Py_ssize_t fixed_size(int32_t sys_flag) {
    return FIXED_V4_SIZE + host_size(sys_flag, BORNHOST_V6) - 8 + host_size(sys_flag, STOREHOST_V6) - 8;
}

/* ------------------------------------------------------------------ crc32 */

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = crc_table[0][n];
        for (int k = 1; k < 8; k++) {
            c = crc_table[0][c & 0xff] ^ (c >> 8);
            crc_table[k][n] = c;
        }
    }
}

static inline uint32_t ld_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc32_table_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ld_le32(p), hi = ld_le32(p + 4);
        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
            crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
            crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_PCLMUL_CODE 1
#include <immintrin.h>

/* Carry-less multiplication folding (Intel, "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ"), constants for the bit-reflected polynomial 0xEDB88320: fold by 4 x 128
 * bits, then by 128, then 128 -> 64 -> 32 bits with a Barrett reduction. ``crc`` is the raw
 * register (not inverted); n is a multiple of 16, at least 64. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_pclmul_fold(
    uint32_t crc, const unsigned char *p, Py_ssize_t n) {
    const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
    const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x1 = _mm_loadu_si128((const __m128i *)p);
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    p += 64;
    n -= 64;
#define FOLD(x, k, next)                                                                    \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), \
                  next)
    while (n >= 64) {
        x1 = FOLD(x1, k1k2, _mm_loadu_si128((const __m128i *)p));
        x2 = FOLD(x2, k1k2, _mm_loadu_si128((const __m128i *)(p + 16)));
        x3 = FOLD(x3, k1k2, _mm_loadu_si128((const __m128i *)(p + 32)));
        x4 = FOLD(x4, k1k2, _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        n -= 64;
    }
    x1 = FOLD(x1, k3k4, x2);
    x1 = FOLD(x1, k3k4, x3);
    x1 = FOLD(x1, k3k4, x4);
    while (n >= 16) {
        x1 = FOLD(x1, k3k4, _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
#undef FOLD
    /* 128 -> 64 bits (appending 32 zero bits) */
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x10), _mm_srli_si128(x1, 8));
    /* 64 -> 32 */
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    /* Barrett reduction */
    x2 = x1;
    x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
    x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

static int have_pclmul = 0;

typedef unsigned long (*zlib_crc32_fn)(unsigned long, const unsigned char *, unsigned int);
static zlib_crc32_fn zlib_crc32 = NULL;

static void crc_find_zlib(void) {
    void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) return;
    void *sym = dlsym(lib, "crc32");
    if (sym != NULL) memcpy(&zlib_crc32, &sym, sizeof(zlib_crc32));
}

static uint32_t crc32_table_update(uint32_t c, const unsigned char *p, Py_ssize_t n) {
    while (n-- > 0) c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
#ifdef HAVE_PCLMUL_CODE
    if (have_pclmul && n >= 64) {
        Py_ssize_t folded = n & ~(Py_ssize_t)15;
        uint32_t c = crc32_pclmul_fold(0xFFFFFFFFu, p, folded);
        return crc32_table_update(c, p + folded, n - folded) ^ 0xFFFFFFFFu;
    }
#endif
    if (zlib_crc32 == NULL) return crc32_table_of(p, n);
    unsigned long c = 0;
    while (n > 0) {
        unsigned int chunk = n > (Py_ssize_t)(1u << 30) ? 1u << 30 : (unsigned int)n;
        c = zlib_crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

/* body_crc of message_decoder: masked to 31 bits, 0 for an empty body */
static inline int32_t body_crc_of(const unsigned char *p, Py_ssize_t n) {
    return n ? (int32_t)(crc32_of(p, n) & 0x7FFFFFFFu) : 0;
}

static PyObject *py_crc32(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = crc32_of((const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

static PyObject *py_crc32_libz(PyObject *self, PyObject *arg) {
    if (zlib_crc32 == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "libz.so.1 was not found");
        return NULL;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = (const unsigned char *)b.buf;
    unsigned long c = 0;
    for (Py_ssize_t n = b.len; n > 0;) {
        unsigned int chunk = n > (Py_ssize_t)(1u << 30) ? 1u << 30 : (unsigned int)n;
        c = zlib_crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

static PyObject *py_crc32_table(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = crc32_table_of((const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

/* ------------------------------------------------------------------ shared helpers */

static PyObject *S_KEYS, *S_UNIQ_KEY, *S_TAGS, *S_DELAY, *S_EMPTY;
static const char SCHEDULE_TOPIC[] = "SCHEDULE_TOPIC_XXXX";

/* Java String.hashCode over the UTF-16 code units of a str, as a signed int32 */
static int32_t java_hash(PyObject *s) {
    uint32_t h = 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c > 0xFFFF) {
            c -= 0x10000;
            h = 31 * h + (0xD800 + (c >> 10));
            h = 31 * h + (0xDC00 + (c & 0x3FF));
        } else {
            h = 31 * h + c;
        }
    }
    return (int32_t)h;
}

/* properties.decode_properties: split on 0x02, partition at the first 0x01, keep pairs with
 * a name and a value; strict UTF-8 over the whole string (skipped segments are checked too).
 * NULL with UnicodeDecodeError (or MemoryError) set on failure. */
static PyObject *parse_properties(const unsigned char *p, Py_ssize_t n) {
    PyObject *d = PyDict_New();
    if (d == NULL || n == 0) return d;
    const unsigned char *end = p + n;
    while (p <= end) {
        const unsigned char *seg_end = memchr(p, 0x02, (size_t)(end - p));
        if (seg_end == NULL) seg_end = end;
        const unsigned char *sep = memchr(p, 0x01, (size_t)(seg_end - p));
        if (sep != NULL && sep > p && sep + 1 < seg_end) {
            PyObject *k = PyUnicode_DecodeUTF8((const char *)p, sep - p, NULL);
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

/* the topic str of a run of records: one object while the bytes repeat */
typedef struct {
    const unsigned char *bytes;
    Py_ssize_t len;
    PyObject *str;
} TopicCache;

static PyObject *cached_topic(TopicCache *tc, const unsigned char *p, Py_ssize_t n) {
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

/* ------------------------------------------------------------------ encode */

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
static PyObject *encode_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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

static PyObject *encode_message_ext(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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
static PyObject *write_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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

/* ------------------------------------------------------------------ scan */

typedef struct {
    int32_t total;
    uint32_t magic;
    int32_t crc;
    int32_t queue_id;
    int32_t flag;
    int64_t queue_offset;
    int64_t phy;
    int32_t sys_flag;
    int64_t born_ts;
    const unsigned char *born;
    Py_ssize_t born_len;
    int64_t store_ts;
    const unsigned char *store;
    Py_ssize_t store_len;
    int32_t reconsume;
    int64_t prepared;
    const unsigned char *body;
    Py_ssize_t body_len;
    const unsigned char *topic;
    Py_ssize_t topic_len;
    const unsigned char *props;
    Py_ssize_t props_len;
} Record;

/* The fields of the message record at b[pos:limit] after the structural checks that both
 * check_message_and_return_size and _decode_at make (magic, sizes, host bits, BODYLENGTH,
 * TOPICLEN, PROPLEN, in bounds). 0 when good, -1 when not. The caller checked the magic. */
static int parse_record(const unsigned char *b, Py_ssize_t pos, Py_ssize_t limit, Record *r) {
    const unsigned char *s = b + pos;
    Py_ssize_t left = limit - pos;
    if (left < MIN_RECORD_SIZE) return -1;
    r->total = rd_i32(s + R_TOTAL);
    r->magic = rd_u32(s + R_MAGIC);
    if (r->total < MIN_RECORD_SIZE || r->total > left) return -1;
    r->crc = rd_i32(s + R_CRC);
    r->queue_id = rd_i32(s + R_QUEUE_ID);
    r->flag = rd_i32(s + R_FLAG);
    r->queue_offset = rd_i64(s + R_QUEUE_OFFSET);
    r->phy = rd_i64(s + R_PHY);
    r->sys_flag = rd_i32(s + R_SYSFLAG);
    r->born_ts = rd_i64(s + R_BORN_TS);
    Py_ssize_t fixed = fixed_size(r->sys_flag);
    if (r->total < fixed + MIN_RECORD_SIZE - FIXED_V4_SIZE) return -1;
    const unsigned char *p = s + R_BORN_HOST;
    r->born = p;
    r->born_len = host_size(r->sys_flag, BORNHOST_V6);
    p += r->born_len;
    r->store_ts = rd_i64(p);
    p += 8;
    r->store = p;
    r->store_len = host_size(r->sys_flag, STOREHOST_V6);
    p += r->store_len;
    r->reconsume = rd_i32(p);
    r->prepared = rd_i64(p + 4);
    int32_t body_len = rd_i32(p + 12);
    p += 16;
    const unsigned char *end = s + r->total;
    if (body_len < 0 || body_len > end - p) return -1;
    r->body = p;
    r->body_len = body_len;
    p += body_len;
    Py_ssize_t topic_len;
    if (r->magic == MAGIC_V2) {
        if (end - p < 2) return -1;
        topic_len = (Py_ssize_t)p[0] << 8 | p[1];
        p += 2;
    } else {
        if (end - p < 1) return -1;
        topic_len = (int8_t)p[0];
        p += 1;
    }
    if (topic_len < 0 || topic_len + 2 > end - p) return -1;
    r->topic = p;
    r->topic_len = topic_len;
    p += topic_len;
    Py_ssize_t props_len = (int16_t)((uint16_t)p[0] << 8 | p[1]);
    p += 2;
    if (props_len < 0 || props_len != end - p) return -1;
    r->props = p;
    r->props_len = props_len;
    return 0;
}

/* Python's strict UTF-8 decoder's verdict, without making the str (no overlong forms, no
 * surrogates, nothing past U+10FFFF): the recovery scan checks topics this way. */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
        } else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if (c == 0xE0 ? (c1 < 0xA0 || c1 > 0xBF)
                          : c == 0xED ? (c1 < 0x80 || c1 > 0x9F) : (c1 & 0xC0) != 0x80)
                return 0;
            if ((s[i + 2] & 0xC0) != 0x80) return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if (c == 0xF0 ? (c1 < 0x90 || c1 > 0xBF)
                          : c == 0xF4 ? (c1 < 0x80 || c1 > 0x8F) : (c1 & 0xC0) != 0x80)
                return 0;
            if ((s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* _incomplete_tail of commitlog.py: the bytes at pos start a record a slave has part of */
static int incomplete_tail(const unsigned char *b, Py_ssize_t pos, Py_ssize_t wrote, Py_ssize_t file_size) {
    Py_ssize_t left = wrote - pos;
    if (left < BLANK_SIZE) return wrote < file_size;
    int32_t total = rd_i32(b + pos);
    uint32_t magic = rd_u32(b + pos + 4);
    return (magic == MAGIC_V1 || magic == MAGIC_V2) && left < total && total <= file_size - pos;
}

/* One record at pos: ST_END when it is a good message (its size in *size), ST_BLANK, or ST_BAD. */
static int check_record(const unsigned char *b, Py_ssize_t pos, Py_ssize_t limit,
                        int64_t file_from, int check_crc, Record *r) {
    if (limit - pos < BLANK_SIZE) return ST_BAD;
    int32_t total = rd_i32(b + pos);
    uint32_t magic = rd_u32(b + pos + 4);
    if (magic == MAGIC_BLANK) return (total >= BLANK_SIZE && total <= limit - pos) ? ST_BLANK : ST_BAD;
    if (magic != MAGIC_V1 && magic != MAGIC_V2) return ST_BAD;
    if (parse_record(b, pos, limit, r) < 0) return ST_BAD;
    if (r->phy != file_from + pos) return ST_BAD;
    if (check_crc && body_crc_of(r->body, r->body_len) != r->crc) return ST_BAD;
    return ST_END;
}

static PyObject *dispatch_request(const Record *r, TopicCache *tc, int read_props,
                                  PyObject *factory, PyObject *schedule_tags) {
    PyObject *topic = cached_topic(tc, r->topic, r->topic_len);
    if (topic == NULL) return NULL;
    PyObject *props = read_props ? parse_properties(r->props, r->props_len) : PyDict_New();
    if (props == NULL) {
        Py_DECREF(topic);
        return NULL;
    }
    PyObject *keys = NULL, *uniq = NULL, *tags_code = NULL, *out = NULL;
    keys = PyDict_GetItemWithError(props, S_KEYS);
    if (keys == NULL && PyErr_Occurred()) goto done;
    keys = keys ? Py_NewRef(keys) : Py_NewRef(S_EMPTY);
    uniq = PyDict_GetItemWithError(props, S_UNIQ_KEY);
    if (uniq == NULL && PyErr_Occurred()) goto done;
    uniq = uniq ? Py_NewRef(uniq) : Py_NewRef(Py_None);
    if (r->topic_len == (Py_ssize_t)sizeof(SCHEDULE_TOPIC) - 1 &&
        memcmp(r->topic, SCHEDULE_TOPIC, sizeof(SCHEDULE_TOPIC) - 1) == 0 &&
        schedule_tags != Py_None) {
        PyObject *ts = PyLong_FromLongLong(r->store_ts);
        if (ts == NULL) goto done;
        tags_code = PyObject_CallFunctionObjArgs(schedule_tags, topic, props, ts, NULL);
        Py_DECREF(ts);
        if (tags_code == NULL) goto done;
    } else {
        PyObject *tags = PyDict_GetItemWithError(props, S_TAGS);
        if (tags == NULL && PyErr_Occurred()) goto done;
        int32_t h = (tags != NULL && PyUnicode_GET_LENGTH(tags) > 0) ? java_hash(tags) : 0;
        tags_code = PyLong_FromLong(h);
        if (tags_code == NULL) goto done;
    }
    PyObject *a[13];
    a[0] = topic;
    a[1] = PyLong_FromLong(r->queue_id);
    a[2] = PyLong_FromLongLong(r->phy);
    a[3] = PyLong_FromLong(r->total);
    a[4] = tags_code;
    a[5] = PyLong_FromLongLong(r->store_ts);
    a[6] = PyLong_FromLongLong(r->queue_offset);
    a[7] = keys;
    a[8] = uniq;
    a[9] = PyLong_FromLong(r->sys_flag);
    a[10] = PyLong_FromLongLong(r->prepared);
    a[11] = props;
    a[12] = PyLong_FromLong(r->crc);
    int ok = a[1] && a[2] && a[3] && a[5] && a[6] && a[9] && a[10] && a[12];
    if (ok) out = PyObject_Vectorcall(factory, a, 13, NULL);
    Py_XDECREF(a[1]);
    Py_XDECREF(a[2]);
    Py_XDECREF(a[3]);
    Py_XDECREF(a[5]);
    Py_XDECREF(a[6]);
    Py_XDECREF(a[9]);
    Py_XDECREF(a[10]);
    Py_XDECREF(a[12]);
done:
    Py_DECREF(topic);
    Py_DECREF(props);
    Py_XDECREF(keys);
    Py_XDECREF(uniq);
    Py_XDECREF(tags_code);
    return out;
}

/* scan_records(buf, pos, limit, file_size, file_from_offset, max_pos, check_crc, tail_check,
 *              factory, read_properties, schedule_tags) -> (list, pos, status)
 * Walks records from pos while pos < max_pos, each checked against limit (the written bytes).
 * factory None: validate only (recovery), the list stays empty and the GIL is released.
 * Otherwise each good record becomes factory(<the 13 DispatchRequest fields>). */
static PyObject *scan_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "scan_records takes 11 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]), limit = PyLong_AsSsize_t(args[2]);
    Py_ssize_t file_size = PyLong_AsSsize_t(args[3]);
    long long file_from = PyLong_AsLongLong(args[4]);
    Py_ssize_t max_pos = PyLong_AsSsize_t(args[5]);
    int check_crc = PyObject_IsTrue(args[6]), tail_check = PyObject_IsTrue(args[7]);
    PyObject *factory = args[8];
    int read_props = PyObject_IsTrue(args[9]);
    PyObject *schedule_tags = args[10];
    if (PyErr_Occurred()) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *list = PyList_New(0);
    if (list == NULL) goto fail;
    if (pos < 0 || limit < pos || limit > view.len || file_size < limit) {
        PyErr_SetString(PyExc_ValueError, "scan bounds outside the buffer");
        goto fail;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    int status = ST_END;
    Record r;
    if (factory == Py_None) {
        Py_BEGIN_ALLOW_THREADS
        while (pos < max_pos) {
            if (tail_check && incomplete_tail(b, pos, limit, file_size)) {
                status = ST_INCOMPLETE;
                break;
            }
            status = check_record(b, pos, limit, file_from, check_crc, &r);
            if (status != ST_END) break;
            if (!utf8_valid(r.topic, r.topic_len)) { /* the Python check decodes the topic */
                status = ST_BAD;
                break;
            }
            pos += r.total;
        }
        Py_END_ALLOW_THREADS
    } else {
        TopicCache tc = {NULL, 0, NULL};
        while (pos < max_pos) {
            if (tail_check && incomplete_tail(b, pos, limit, file_size)) {
                status = ST_INCOMPLETE;
                break;
            }
            status = check_record(b, pos, limit, file_from, check_crc, &r);
            if (status != ST_END) break;
            PyObject *req = dispatch_request(&r, &tc, read_props, factory, schedule_tags);
            if (req == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                    Py_XDECREF(tc.str);
                    goto fail;
                }
                PyErr_Clear(); /* bad UTF-8 in the topic or properties: a bad record */
                status = ST_BAD;
                break;
            }
            int rc = PyList_Append(list, req);
            Py_DECREF(req);
            if (rc < 0) {
                Py_XDECREF(tc.str);
                goto fail;
            }
            pos += r.total;
        }
        Py_XDECREF(tc.str);
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(Nni)", list, pos, status);
fail:
    Py_XDECREF(list);
    PyBuffer_Release(&view);
    return NULL;
}

/* ------------------------------------------------------------------ decode */

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
static PyObject *decode_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"crc32", py_crc32, METH_O, "zlib.crc32 of a buffer, as the scans compute it."},
    {"crc32_table", py_crc32_table, METH_O, "zlib.crc32 of a buffer by the module's own tables."},
    {"crc32_libz", py_crc32_libz, METH_O, "zlib.crc32 of a buffer by libz.so.1's crc32."},
    {"encode_record", (PyCFunction)(void (*)(void))encode_record, METH_FASTCALL,
     "A commitlog record from a message's fields (message_decoder.encode_message)."},
    {"encode_message_ext", (PyCFunction)(void (*)(void))encode_message_ext, METH_FASTCALL,
     "encode_message in one call: a MessageExt's fields read in C."},
    {"write_record", (PyCFunction)(void (*)(void))write_record, METH_FASTCALL,
     "Copy a record into a mapped file and patch its offsets and store time there."},
    {"scan_records", (PyCFunction)(void (*)(void))scan_records, METH_FASTCALL,
     "Check a run of commitlog records; DispatchRequests or validate only."},
    {"decode_records", (PyCFunction)(void (*)(void))decode_records, METH_FASTCALL,
     "MessageExt objects of back-to-back records (a pull body)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._record",
    "The CommitLog record paths in C; rocketq.common.native_record selects them.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__record(void) {
    crc_init();
    crc_find_zlib();
#ifdef HAVE_PCLMUL_CODE
    __builtin_cpu_init();
    have_pclmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
    S_KEYS = PyUnicode_InternFromString("KEYS");
    S_UNIQ_KEY = PyUnicode_InternFromString("UNIQ_KEY");
    S_TAGS = PyUnicode_InternFromString("TAGS");
    S_DELAY = PyUnicode_InternFromString("DELAY");
    S_EMPTY = PyUnicode_InternFromString("");
    if (!S_KEYS || !S_UNIQ_KEY || !S_TAGS || !S_DELAY || !S_EMPTY) return NULL;
    for (int i = 0; i < 14; i++) {
        S_ATTR[i] = PyUnicode_InternFromString(ATTR_NAMES[i]);
        if (S_ATTR[i] == NULL) return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "ST_END", ST_END) < 0 ||
        PyModule_AddIntConstant(m, "ST_BLANK", ST_BLANK) < 0 ||
        PyModule_AddIntConstant(m, "ST_BAD", ST_BAD) < 0 ||
        PyModule_AddIntConstant(m, "ST_INCOMPLETE", ST_INCOMPLETE) < 0 ||
        PyModule_AddStringConstant(m, "CRC32_IMPL",
                                   have_pclmul ? "pclmul" : zlib_crc32 ? "libz" : "table") < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
