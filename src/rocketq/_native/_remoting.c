/*
 * rocketq._native._remoting: the request frames of one socket read in one call (issue 22).
 *
 * split_frames is the compiled twin of rocketq/remoting/codec.py's FrameDecoder.feed plus
 * decode_frame_body (RocketMQ's NettyDecoder and RemotingCommand.decode): it walks the
 * complete frames of a buffer and decodes each header (JSON or ROCKETMQ, header.c) into a
 * RemotingCommand. A frame whose header it does not handle comes back as its bytes after the
 * length field, for the Python decoder, which stays the reference (and words every header
 * error). A bad length field (below 4, over the limit) stops the walk: the frames before it
 * are returned with the error, the caller answers them and closes the connection.
 *
 * Every length is checked against the buffer before it is read; the frame length is read as
 * a signed int32 and compared in 64 bits, so no sum overflows.
 *
 * split_sends is the same walk for the broker's reads (issue 22, lever 1: a read in one call):
 * each JSON SEND_MESSAGE_V2 request whose put send_put.c reads comes back as the triple
 * (command, put, header), so the broker queues it without another call per send; its
 * extFields are read into the put straight from the header's text, and the command's dict
 * stays empty until the Python path needs it (ext_fields_of the header: a send the fast path
 * declines).
 *
 * The other parts: header.c and custom_header.c (headers), command_encode.c and send_reply.c
 * (reply heads), send_flush.c (a flush's answers), send_put.c (a SEND_MESSAGE_V2's put read
 * from its extFields), send_take.c (the take of a read's sends), send_figures.c (a flush's
 * figures in their buckets).
 */
#include "remoting.h"

#include <structmember.h>

/* spec of split_sends: (code, rules, put_cls, born_host, store_host), send_put_of's
 * arguments after (fields, body) */
#define SPEC_SIZE 5

/* a request frame of the spec's code read into its put: the triple (command, put, header
 * bytes), or the command alone (a new reference either way) when send_put_of declines; NULL
 * on error. Extfields C left as spans (meta->lazy) are read into the put from the header's
 * text, and the command's dict stays empty (ext_fields_of the header reads it when the Python
 * path needs the request), but for a send send_put_of declines: its dict is filled now
 * (*rc HD_FALLBACK when an item is not UTF-8: Python decodes the frame) */
static PyObject *with_put(PyObject *cmd, const HeaderMeta *meta, PyObject *body,
                          PyObject *spec, const unsigned char *header, Py_ssize_t n, int *rc) {
    PyObject *args[6] = {meta->ext_fields,
                         body,
                         PyTuple_GET_ITEM(spec, 1),
                         PyTuple_GET_ITEM(spec, 2),
                         PyTuple_GET_ITEM(spec, 3),
                         PyTuple_GET_ITEM(spec, 4)};
    PyObject *put = meta->lazy ? send_put_of_spans(meta->spans, meta->n_spans, args)
                               : send_put_of(NULL, args, 6);
    if (put == NULL) return NULL;
    if (put == Py_None) {
        Py_DECREF(put);
        if (meta->lazy) {
            *rc = fill_fields(meta->ext_fields, meta->spans, meta->n_spans);
            if (*rc != HD_OK) return NULL;
        }
        return Py_NewRef(cmd);
    }
    PyObject *text = PyBytes_FromStringAndSize((const char *)header, n);
    if (text == NULL) {
        Py_DECREF(put);
        return NULL;
    }
    PyObject *triple = PyTuple_Pack(3, cmd, put, text);
    Py_DECREF(put);
    Py_DECREF(text);
    return triple;
}

/* the walk of split_frames and split_sends; spec is NULL for split_frames */
static PyObject *walk(PyObject *buffer, PyObject *max_obj, PyObject *spec) {
    if (TYPES.command_cls == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "split_frames before configure");
        return NULL;
    }
    long long max_frame = PyLong_AsLongLong(max_obj);
    if (max_frame == -1 && PyErr_Occurred()) return NULL;
    long send_code = -1;
    if (spec != NULL) {
        send_code = PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
        if (send_code == -1 && PyErr_Occurred()) return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *b = view.buf;
    Py_ssize_t end = view.len, pos = 0;
    PyObject *items = PyList_New(0), *error = NULL;
    if (items == NULL) goto fail;
    while (end - pos >= 4) {
        int64_t length = rm_i32(b + pos);
        if (length < 4) {
            error = PyUnicode_FromFormat("frame length %lld is below 4", (long long)length);
            if (error == NULL) goto fail;
            break;
        }
        if (length + 4 > max_frame) {
            error = PyUnicode_FromFormat("frame of %lld bytes exceeds the limit %lld",
                                         (long long)(length + 4), max_frame);
            if (error == NULL) goto fail;
            break;
        }
        if (end - pos - 4 < length) break;
        const unsigned char *frame = b + pos + 4; /* W, header, body: length bytes */
        uint32_t word = rm_u32(frame);
        Py_ssize_t header_length = (Py_ssize_t)(word & HEADER_LENGTH_MASK);
        unsigned type = word >> 24;
        PyObject *item = NULL;
        int rc = HD_FALLBACK;
        if (header_length <= length - 4 && type <= SERIALIZE_ROCKETMQ) {
            const unsigned char *header = frame + 4;
            PyObject *body = PyBytes_FromStringAndSize(
                (const char *)header + header_length, (Py_ssize_t)length - 4 - header_length);
            if (body == NULL) goto fail;
            FieldSpan spans[MAX_SPANS];
            HeaderMeta meta = {0, 0, NULL, spec != NULL ? spans : NULL, 0, send_code, 0, NULL};
            rc = type == SERIALIZE_JSON
                     ? decode_json_header(header, header_length, body, &item, &meta)
                     : decode_binary_header(header, header_length, body, &item);
            if (spec != NULL && rc == HD_OK && meta.ext_fields != NULL &&
                meta.code == send_code && (meta.flag & (FLAG_RESPONSE | FLAG_ONEWAY)) == 0) {
                int lazy_rc = HD_OK;
                PyObject *taken =
                    with_put(item, &meta, body, spec, header, header_length, &lazy_rc);
                Py_DECREF(item);
                item = taken;
                if (item == NULL) rc = lazy_rc == HD_FALLBACK ? HD_FALLBACK : HD_ERROR;
            }
            PyMem_Free(meta.scratch);
            Py_DECREF(body);
            if (rc == HD_ERROR) goto fail;
        }
        if (rc == HD_FALLBACK) {
            item = PyBytes_FromStringAndSize((const char *)frame, (Py_ssize_t)length);
            if (item == NULL) goto fail;
        }
        int appended = PyList_Append(items, item);
        Py_DECREF(item);
        if (appended < 0) goto fail;
        pos += 4 + (Py_ssize_t)length;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NnN)", items, pos, error != NULL ? error : Py_NewRef(Py_None));
fail:
    PyBuffer_Release(&view);
    Py_XDECREF(items);
    Py_XDECREF(error);
    return NULL;
}

static PyObject *split_frames(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "split_frames(buffer, max_frame_size)");
        return NULL;
    }
    return walk(args[0], args[1], NULL);
}

/* split_sends(buffer, max_frame_size, spec): split_frames, where every JSON request (not
 * oneway) of the spec's code whose put send_put_of reads (send_put.c) is the triple
 * (command, put) instead of the command: the frame split and the reading of the read's
 * fast-path sends in one call */
static PyObject *split_sends(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != SPEC_SIZE ||
        !PyLong_Check(PyTuple_GET_ITEM(args[2], 0))) {
        PyErr_SetString(PyExc_TypeError,
                        "split_sends(buffer, max_frame_size, (code, rules, put_cls, born, store))");
        return NULL;
    }
    return walk(args[0], args[1], args[2]);
}

/* split_take(buffer, max_frame_size, spec, channel, room, taker, config): split_sends and
 * take_sends (send_take.c) of its leading sends in one call, for a read that waits on no
 * partial frame. None, with nothing split, when the broker's config is no longer ``config``
 * (the spec was made from it: the caller makes it again and splits the slow way) or cannot
 * be read. The count taken (an int) when the read was whole frames, every one of them a send
 * taken; else (items, consumed, reason, taken): split_sends' answer with the taken sends left out (they
 * led the list: what is left keeps its order) and their count */
static PyObject *split_take(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != SPEC_SIZE ||
        !PyLong_Check(PyTuple_GET_ITEM(args[2], 0)) || !PyTuple_Check(args[5]) ||
        PyTuple_GET_SIZE(args[5]) < 3) {
        PyErr_SetString(PyExc_TypeError, "split_take(buffer, max_frame_size, spec, channel, "
                                         "room, taker, config)");
        return NULL;
    }
    PyObject *config = PyObject_GetAttrString(PyTuple_GET_ITEM(args[5], 2), "config");
    if (config == NULL) PyErr_Clear(); /* a broker without one: as take_sends, the slow way */
    Py_XDECREF(config);                /* only its identity is compared */
    if (config == NULL || config != args[6]) Py_RETURN_NONE;
    Py_ssize_t length = PyObject_Length(args[0]);
    if (length < 0) return NULL;
    PyObject *split = walk(args[0], args[1], args[2]);
    if (split == NULL) return NULL;
    PyObject *items = PyTuple_GET_ITEM(split, 0), *reason = PyTuple_GET_ITEM(split, 2);
    Py_ssize_t consumed = PyLong_AsSsize_t(PyTuple_GET_ITEM(split, 1));
    Py_ssize_t taken = 0;
    if (PyList_GET_SIZE(items) > 0) {
        PyObject *take_args[4] = {items, args[3], args[4], args[5]};
        PyObject *count = take_sends(NULL, take_args, 4);
        if (count == NULL) {
            Py_DECREF(split);
            return NULL;
        }
        taken = PyLong_AsSsize_t(count);
        Py_DECREF(count);
        if (taken < 0 || PyList_SetSlice(items, 0, taken, NULL) < 0) {
            Py_DECREF(split);
            return NULL;
        }
    }
    if (consumed == length && reason == Py_None && PyList_GET_SIZE(items) == 0) {
        Py_DECREF(split);
        return PyLong_FromSsize_t(taken);
    }
    PyObject *answer = Py_BuildValue("(OOOn)", items, PyTuple_GET_ITEM(split, 1), reason, taken);
    Py_DECREF(split);
    return answer;
}

/* ext_fields_of(header: bytes) -> dict | None: the extFields of a JSON header split_sends
 * left as spans (its third item), as split_frames reads them; None when C does not read it */
static PyObject *ext_fields_of(PyObject *self, PyObject *header) {
    if (!PyBytes_Check(header)) {
        PyErr_SetString(PyExc_TypeError, "ext_fields_of(header: bytes)");
        return NULL;
    }
    if (TYPES.command_cls == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ext_fields_of before configure");
        return NULL;
    }
    PyObject *body = PyBytes_FromStringAndSize(NULL, 0), *cmd = NULL;
    if (body == NULL) return NULL;
    HeaderMeta meta = {0, 0, NULL, NULL, 0, -1, 0, NULL};
    int rc = decode_json_header((const unsigned char *)PyBytes_AS_STRING(header),
                                PyBytes_GET_SIZE(header), body, &cmd, &meta);
    Py_DECREF(body);
    if (rc == HD_ERROR) return NULL;
    if (rc != HD_OK) Py_RETURN_NONE;
    PyObject *fields = Py_NewRef(meta.ext_fields);
    Py_DECREF(cmd);
    return fields;
}

static const char *const COMMAND_FIELDS[COMMAND_FIELD_COUNT] = {
    "code", "language", "version", "opaque", "flag",
    "remark", "ext_fields", "body", "serialize_type"};

/* the offsets of cls's slots for COMMAND_FIELDS into slots, where cls is a class of plain
 * object slots of those names whose __init__ only stores its arguments (a slots dataclass,
 * no __post_init__, no __new__ of its own); else slots[0] 0 (the decoders call the class).
 * 0, or -1 with an exception set */
static int find_command_slots(PyObject *cls, Py_ssize_t *slots) {
    slots[0] = 0;
    if (!PyType_Check(cls)) return 0;
    PyTypeObject *type = (PyTypeObject *)cls;
    if (type->tp_itemsize != 0 || type->tp_alloc == NULL ||
        type->tp_new != PyBaseObject_Type.tp_new)
        return 0;
    PyObject *fields = PyObject_GetAttrString(cls, "__dataclass_fields__");
    if (fields == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_ssize_t count = PyDict_Check(fields) ? PyDict_GET_SIZE(fields) : -1;
    Py_DECREF(fields);
    int post_init = PyObject_HasAttrString(cls, "__post_init__");
    if (count != COMMAND_FIELD_COUNT || post_init) return 0;
    Py_ssize_t found[COMMAND_FIELD_COUNT];
    for (int i = 0; i < COMMAND_FIELD_COUNT; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, COMMAND_FIELDS[i]);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return 0;
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY) ||
            member->offset < (Py_ssize_t)sizeof(PyObject) ||
            member->offset + (Py_ssize_t)sizeof(PyObject *) > type->tp_basicsize)
            return 0;
        found[i] = member->offset;
    }
    memcpy(slots, found, sizeof(found));
    return 0;
}

PyObject *new_command(PyObject *const *fields) {
    if (TYPES.command_slots[0] <= 0)
        return PyObject_Vectorcall(TYPES.command_cls, fields, COMMAND_FIELD_COUNT, NULL);
    /* the dataclass's __init__ stores its arguments in its slots and does nothing else
     * (find_command_slots checked the shape): the same stores, without a Python frame */
    PyTypeObject *type = (PyTypeObject *)TYPES.command_cls;
    PyObject *cmd = type->tp_alloc(type, 0);
    if (cmd == NULL) return NULL;
    for (int i = 0; i < COMMAND_FIELD_COUNT; i++) {
        PyObject **slot = (PyObject **)((char *)cmd + TYPES.command_slots[i]);
        Py_XSETREF(*slot, Py_NewRef(fields[i]));
    }
    return cmd;
}

/* configure(command_cls, language_members, other, serialize_json, serialize_rocketmq):
 * language_members is LanguageCode's members in byte order (its __members__ give the names) */
static PyObject *configure(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "configure(command_cls, languages: list, other, json, rocketmq)");
        return NULL;
    }
    PyObject *languages = args[1];
    if (PyList_GET_SIZE(languages) < LANGUAGE_COUNT) {
        PyErr_SetString(PyExc_ValueError, "configure: fewer languages than LanguageCode has");
        return NULL;
    }
    PyObject *by_name = PyDict_New();
    if (by_name == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(languages); i++) {
        PyObject *member = PyList_GET_ITEM(languages, i);
        PyObject *name = PyObject_GetAttrString(member, "name");
        if (name == NULL || PyDict_SetItem(by_name, name, member) < 0) {
            Py_XDECREF(name);
            Py_DECREF(by_name);
            return NULL;
        }
        if (i < LANGUAGE_COUNT) {
            Py_XSETREF(TYPES.language_by_byte[i], Py_NewRef(member));
            Py_XSETREF(TYPES.language_names[i], Py_NewRef(name));
        }
        Py_DECREF(name);
    }
    Py_XSETREF(TYPES.language_by_name, by_name);
    TYPES.command_slots[0] = 0; /* the class call until its slots are found */
    Py_XSETREF(TYPES.command_cls, Py_NewRef(args[0]));
    if (find_command_slots(args[0], TYPES.command_slots) < 0) return NULL;
    Py_XSETREF(TYPES.language_other, Py_NewRef(args[2]));
    Py_XSETREF(TYPES.serialize_json, Py_NewRef(args[3]));
    Py_XSETREF(TYPES.serialize_rocketmq, Py_NewRef(args[4]));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"split_frames", (PyCFunction)(void (*)(void))split_frames, METH_FASTCALL,
     "The complete frames of a buffer: (commands or frame bytes, bytes consumed, error)."},
    {"split_sends", (PyCFunction)(void (*)(void))split_sends, METH_FASTCALL,
     "split_frames, with each fast-path send as (command, its put, its header)."},
    {"header_from_fields", (PyCFunction)(void (*)(void))header_from_fields, METH_FASTCALL,
     "A header dataclass from extFields by its field table; None where Python must read it."},
    {"encode_json_head", (PyCFunction)encode_json_head, METH_O,
     "The frame head of a JSON command (codec.encode_head); None where Python must write it."},
    {"send_reply_heads", (PyCFunction)(void (*)(void))send_reply_heads, METH_FASTCALL,
     "The frame heads of the replies to a burst of stored sends, back to back; or None."},
    {"send_reply_runs", (PyCFunction)(void (*)(void))send_reply_runs, METH_FASTCALL,
     "send_reply_heads of each run of a flush's replies (one bytes a connection); or None."},
    {"send_answer_flush", (PyCFunction)(void (*)(void))send_answer_flush, METH_FASTCALL,
     "A flush's sends' answers: those left to Python, one reply buffer a connection, the "
     "figures' lists; or None."},
    {"split_take", (PyCFunction)(void (*)(void))split_take, METH_FASTCALL,
     "split_sends and take_sends of a read in one call: None, the count, or the rest."},
    {"take_sends", (PyCFunction)(void (*)(void))take_sends, METH_FASTCALL,
     "SendMessageProcessor.take of a read's leading sends (split_sends' triples): the count."},
    {"count_figures", (PyCFunction)(void (*)(void))count_figures, METH_FASTCALL,
     "A flush's figures counted into a figure's buckets (the stats' loops); or None."},
    {"ext_fields_of", (PyCFunction)ext_fields_of, METH_O,
     "The extFields of a header split_sends left unread (its item's third), or None."},
    {"send_put_of", (PyCFunction)(void (*)(void))send_put_of, METH_FASTCALL,
     "A SEND_MESSAGE_V2 request's SendPut from its extFields, or None (send.py decides)."},
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "Give the module RemotingCommand, LanguageCode's members and the SerializeTypes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._remoting",
    "Request frames in C; rocketq.remoting.native_frames selects them.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__remoting(void) { return PyModule_Create(&module); }
