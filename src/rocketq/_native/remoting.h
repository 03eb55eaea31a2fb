/*
 * remoting.h: what the parts of rocketq._native._remoting share (see _remoting.c).
 *
 * The frame layout is rocketq/remoting/codec.py's (RocketMQ's RemotingCommand.encode and
 * RocketMQSerializable): a 4-byte length, a 4-byte word (serialize type << 24 | header
 * length), the header, the body. Everything here is internal to the extension: the build
 * hides every symbol but PyInit__remoting (-fvisibility=hidden in setup.py).
 */
#ifndef ROCKETQ_NATIVE_REMOTING_H
#define ROCKETQ_NATIVE_REMOTING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SERIALIZE_JSON 0
#define SERIALIZE_ROCKETMQ 1
#define HEADER_LENGTH_MASK 0xFFFFFFu
#define BINARY_HEADER_SIZE 13
#define LANGUAGE_COUNT 14 /* LanguageCode JAVA (0) .. NODE_JS (13); others are OTHER */

/* header decode outcomes */
#define HD_OK 0       /* *out is a new RemotingCommand */
#define HD_FALLBACK 1 /* not handled here: the Python decoder decides (and words any error) */
#define HD_ERROR -1   /* a Python exception is set (memory) */

static inline uint32_t rm_u32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline int32_t rm_i32(const unsigned char *p) { return (int32_t)rm_u32(p); }
static inline int16_t rm_i16(const unsigned char *p) {
    return (int16_t)(uint16_t)((uint16_t)p[0] << 8 | (uint16_t)p[1]);
}

/* RemotingCommand's fields, in its constructor's order */
#define COMMAND_FIELD_COUNT 9

/* what configure() hands the module: the classes the decoders build */
typedef struct {
    PyObject *command_cls;        /* RemotingCommand */
    PyObject *language_by_name;   /* dict: LanguageCode name -> member */
    PyObject *language_by_byte[LANGUAGE_COUNT];
    PyObject *language_names[LANGUAGE_COUNT]; /* their names, for the JSON encoder */
    PyObject *language_other;     /* LanguageCode.OTHER */
    PyObject *serialize_json;     /* SerializeType.JSON */
    PyObject *serialize_rocketmq; /* SerializeType.ROCKETMQ */
    /* the offsets of RemotingCommand's slots in its fields' order (COMMAND_FIELDS), read
     * from its member descriptors by configure; command_slots[0] 0: the class is called */
    Py_ssize_t command_slots[COMMAND_FIELD_COUNT];
} Types;

extern Types TYPES;

/* a RemotingCommand of its COMMAND_FIELD_COUNT fields (new reference, NULL on error) */
PyObject *new_command(PyObject *const *fields);

/* an extFields item of a JSON header as its bytes (the header's, or the unescaped copy in
 * the decoder's scratch): a null value is_null */
typedef struct {
    const unsigned char *key, *value;
    Py_ssize_t key_len, value_len;
    int is_null;
} FieldSpan;
#define MAX_SPANS 32

/* header.c: one header (JSON or ROCKETMQ) plus its body into a RemotingCommand; a JSON
 * header's code, flag and extFields (borrowed from the command) also in *meta when given.
 * With meta->spans (MAX_SPANS of them), a request of meta->lazy_code (not a response, not
 * oneway) whose extFields are plain items gets an empty extFields dict: its items are in
 * meta->spans (meta->lazy set; the bytes live until the caller frees meta->scratch) */
typedef struct {
    int32_t code;
    int32_t flag;
    PyObject *ext_fields;
    FieldSpan *spans;
    Py_ssize_t n_spans;
    long lazy_code;
    int lazy;
    unsigned char *scratch;
} HeaderMeta;
/* header.c: the extFields dict of spans (codec._ext_fields' rules), filled into fields;
 * HD_OK, HD_FALLBACK (an item that is not UTF-8) or HD_ERROR */
int fill_fields(PyObject *fields, const FieldSpan *spans, Py_ssize_t n);
int decode_json_header(const unsigned char *h, Py_ssize_t n, PyObject *body, PyObject **out,
                       HeaderMeta *meta);
int decode_binary_header(const unsigned char *h, Py_ssize_t n, PyObject *body, PyObject **out);

/* custom_header.c: a typed header from extFields by a table custom_header.py builds */
PyObject *header_from_fields(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* command_encode.c: a JSON command's frame head (the reply path) */
PyObject *encode_json_head(PyObject *self, PyObject *cmd);

/* send_reply.c: the reply heads of a burst of stored sends */
PyObject *send_reply_heads(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *send_reply_runs(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* send_reply.c's writer, shared with send_flush.c: a reply is PIECES pieces of JSON text
 * around its msgId, queueId, queueOffset and opaque */
#define PIECES 5
#define MAX_ID 64
#define MAX_NUMBER 24 /* an int64 in decimal, with its sign */
int reply_i64(PyObject *v, long long lo, long long hi, long long *out);
const char *reply_prefix(PyObject *v, Py_ssize_t *n);
int reply_pieces(PyObject *tuple, const char **piece, Py_ssize_t *piece_len, Py_ssize_t *fixed);
char *reply_frame(char *w, const char **piece, const Py_ssize_t *piece_len, long long opaque,
                  const char *id, Py_ssize_t id_len, long long offset, const char *prefix,
                  Py_ssize_t prefix_len, long long queue_id, long long queue_offset);

/* send_flush.c: the answers of a flush's sends in one call */
PyObject *send_answer_flush(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* send_put.c: a SEND_MESSAGE_V2 request's SendPut from its extFields (a dict, or spans:
 * args as send_put_of's, args[0] unused) */
PyObject *send_put_of(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *send_put_of_spans(const FieldSpan *spans, Py_ssize_t n, PyObject *const *args);
/* send_take.c: SendMessageProcessor.take of a read's leading sends in one call */
PyObject *take_sends(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* send_figures.c: a flush's figures counted into their buckets */
PyObject *count_figures(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* _remoting.c: the flag bits of RemotingCommand (RemotingCommand.RPC_TYPE, RPC_ONEWAY) */
#define FLAG_RESPONSE 1
#define FLAG_ONEWAY 2

#endif
