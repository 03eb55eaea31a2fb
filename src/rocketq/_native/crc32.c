/* CRC32 as zlib computes it: pclmul folding, libz.so.1 or slicing-by-8 tables (see _record.c). */
#include "record.h"

#include <dlfcn.h>


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

uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
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
PyObject *py_crc32(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = crc32_of((const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

PyObject *py_crc32_libz(PyObject *self, PyObject *arg) {
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

PyObject *py_crc32_table(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = crc32_table_of((const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}


int crc32_setup(void) {
    crc_init();
    crc_find_zlib();
#ifdef HAVE_PCLMUL_CODE
    __builtin_cpu_init();
    have_pclmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
    return 0;
}

const char *crc32_impl(void) { return have_pclmul ? "pclmul" : zlib_crc32 ? "libz" : "table"; }
