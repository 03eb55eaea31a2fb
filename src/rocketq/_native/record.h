/*
 * record.h: what the parts of rocketq._native._record share (see _record.c for the whole).
 *
 * The record layout (rocketq/common/record_layout.py, RocketMQ's CommitLog) as the R_*
 * constants, big-endian readers and writers, the scan statuses, the parsed Record, and the
 * functions each part offers the others. Everything here is internal to the extension: the
 * build hides every symbol but PyInit__record (-fvisibility=hidden in setup.py).
 */
#ifndef ROCKETQ_NATIVE_RECORD_H
#define ROCKETQ_NATIVE_RECORD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

/* the topic str of a run of records: one object while the bytes repeat */
typedef struct {
    const unsigned char *bytes;
    Py_ssize_t len;
    PyObject *str;
} TopicCache;

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

/* crc32.c */
int crc32_setup(void);
const char *crc32_impl(void);
uint32_t crc32_of(const unsigned char *p, Py_ssize_t n);
PyObject *py_crc32(PyObject *self, PyObject *arg);
PyObject *py_crc32_libz(PyObject *self, PyObject *arg);
PyObject *py_crc32_table(PyObject *self, PyObject *arg);

static inline int32_t body_crc_of(const unsigned char *p, Py_ssize_t n) {
    return n ? (int32_t)(crc32_of(p, n) & 0x7FFFFFFFu) : 0;
}

/* Java's String.hashCode step over one code point c (one past the BMP is its UTF-16
 * surrogate pair, two steps) */
static inline uint32_t java_hash_step(uint32_t h, uint32_t c) {
    if (c > 0xFFFF) {
        c -= 0x10000;
        h = 31 * h + (0xD800 + (c >> 10));
        return 31 * h + (0xDC00 + (c & 0x3FF));
    }
    return 31 * h + c;
}

/* a call's property names decoded once: each repeat is the same interned str */
enum { KEY_CACHE = 16 };
typedef struct {
    int n;
    Py_ssize_t len[KEY_CACHE];
    const unsigned char *bytes[KEY_CACHE];
    PyObject *str[KEY_CACHE];
} KeyCache;

/* properties.c */
extern PyObject *S_KEYS, *S_UNIQ_KEY, *S_TAGS, *S_DELAY, *S_EMPTY;
void key_cache_clear(KeyCache *kc);
/* parse_properties with the names through kc (NULL: each name decoded) */
PyObject *parse_properties_keyed(KeyCache *kc, const unsigned char *p, Py_ssize_t n);
int properties_setup(void);
int32_t java_hash(PyObject *s);
uint32_t java_hash_units(uint32_t h, PyObject *s, Py_ssize_t from, Py_ssize_t to);
/* an int attribute of obj read into *out (dispatch.c): 0, or -1 with the error set */
int attr_i64(PyObject *obj, PyObject *name, int64_t *out);
PyObject *parse_properties(const unsigned char *p, Py_ssize_t n);
PyObject *cached_topic(TopicCache *tc, const unsigned char *p, Py_ssize_t n);

/* encode.c */
int encode_setup(void);
/* decode.c */
int decode_setup(void);
PyObject *encode_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *encode_message_ext(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *write_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* append.c */
PyObject *append_sends(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* send_batch.c */
PyObject *batch_puts(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *batch_msg_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* scan.c */
int parse_record(const unsigned char *b, Py_ssize_t pos, Py_ssize_t limit, Record *r);
PyObject *scan_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* pull_body.record_starts's walk: HEAD_STRUCT's size (record_layout.py) is what it needs */
#define RECORD_HEAD_SIZE 48
PyObject *record_starts(PyObject *self, PyObject *arg);
/* Python's strict UTF-8 decoder's verdict on s[:n], without making the str */
int utf8_valid(const unsigned char *s, Py_ssize_t n);

/* columns.c: pull_body's columns (the Spark topic source) */
PyObject *pull_columns(PyObject *self, PyObject *arg);

/* decode.c */
PyObject *decode_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* get_message.c: DefaultMessageStore#getMessage's unit walk and the pull body */
PyObject *collect_messages(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *pull_reply_head(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* dispatch.c: a dispatch run's consume queue units and index entries */
int dispatch_setup(void);
PyObject *dispatch_runs(PyObject *self, PyObject *requests);
PyObject *cq_units(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *index_puts(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* an index file's header fields and its mapped view while keys are put (dispatch.c; the
 * direct dispatch, reput_run.c, puts keys through the same functions) */
typedef struct {
    int64_t slot_num, index_num, begin_ts, end_ts, begin_phy, end_phy, slot_count, index_count;
    unsigned char *base;
    int dirty; /* a key was put: the header changed */
} IndexState;
void index_put_key(IndexState *st, uint32_t h, int64_t phy, int64_t store_ts);
int index_read_state(PyObject *f, Py_buffer *buf, IndexState *st);
int index_write_state(PyObject *f, const IndexState *st);

/* reput_run.c: a dispatch run straight from the commitlog's bytes */
PyObject *dispatch_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
int reput_run_setup(void);

/* populate.c: a mapping's pages faulted in ahead of its writer (madvise) */
PyObject *populate(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* populate.c: fdatasync a set of files, then write and sync a commit record, GIL released */
PyObject *sync_files(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
