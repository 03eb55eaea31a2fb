/* scan_records: recovery's check and the reput's DispatchRequests over a run of records. */
#include "record.h"

static const char SCHEDULE_TOPIC[] = "SCHEDULE_TOPIC_XXXX";

/* The fields of the message record at b[pos:limit] after the structural checks that both
 * check_message_and_return_size and _decode_at make (magic, sizes, host bits, BODYLENGTH,
 * TOPICLEN, PROPLEN, in bounds). 0 when good, -1 when not. The caller checked the magic. */
int parse_record(const unsigned char *b, Py_ssize_t pos, Py_ssize_t limit, Record *r) {
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
int utf8_valid(const unsigned char *s, Py_ssize_t n) {
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
PyObject *scan_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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

/* record_starts(buf) -> (bytes, end): pull_body.record_starts in C (the Spark topic source).
 * The start of each whole record of buf (back-to-back records, a pull's body) as native
 * int64s, up to the first head that is not one (its TOTALSIZE and MAGICCODE checked only,
 * as the Python walk), and where the last of them ends. */
PyObject *record_starts(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t pos = 0, end = view.len, n = 0;
    Py_BEGIN_ALLOW_THREADS
    while (pos + RECORD_HEAD_SIZE <= end) {
        int32_t total = rd_i32(b + pos);
        uint32_t magic = rd_u32(b + pos + 4);
        if ((magic != MAGIC_V1 && magic != MAGIC_V2) || total < MIN_RECORD_SIZE || total > end - pos)
            break;
        n++;
        pos += total;
    }
    Py_END_ALLOW_THREADS
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    int64_t *starts = (int64_t *)PyBytes_AS_STRING(out);
    pos = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        starts[i] = pos;
        pos += rd_i32(b + pos);
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(Nn)", out, pos);
}
