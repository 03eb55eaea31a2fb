/* A growing text buffer for the JSON and header text the POP paths write (pop.c, the pop's
 * answer fields; pop_client.c, a consumer's batch ack body). Header-only: each module gets its
 * own static copy. */
#ifndef ROCKETQ_TEXT_H
#define ROCKETQ_TEXT_H

#include <Python.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len, cap;
} Text;

/* append n bytes; -1 with MemoryError set */
static inline int text_put(Text *t, const char *s, size_t n) {
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n) cap *= 2;
        char *grown = PyMem_Realloc(t->data, cap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    return 0;
}

static inline int text_str(Text *t, const char *s) { return text_put(t, s, strlen(s)); }

/* a 64-bit int as decimal */
static inline int text_ll(Text *t, long long x) {
    char digits[24];
    int i = (int)sizeof digits;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        digits[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) digits[--i] = '-';
    return text_put(t, digits + i, sizeof digits - (size_t)i);
}

#endif
