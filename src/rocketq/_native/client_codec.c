/*
 * rocketq._native._client: the producer's side of SEND_MESSAGE_V2 in C (issue 22, lever 2).
 *
 * send_v2_fields is the compiled twin of rocketq/client/send_codec.py's python_ext_fields
 * (RocketMQ's SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2 plus
 * MessageDecoder.messageProperties2String): the short-name extFields a..m of one send, in the
 * order the JSON header keeps, with the properties string "name 0x01 value 0x02 ..." built
 * from the message's property dict. The frame head is then written by the C command encoder
 * of rocketq._native._remoting (command_encode.c), and the body leaves as its own buffer.
 *
 * send_result_values is the twin of send_codec.py's python_result_values (RocketMQ's
 * MQClientAPIImpl.processSendResponse): the values of a SendResult from the reply's extFields
 * (msgId, queueId, queueOffset, transactionId, recallHandle, MSG_REGION, TRACE_ON).
 *
 * Both hand anything outside the common forms back to Python, the reference, by returning
 * None: a property name or value that is not a str or not UTF-8 (lone surrogates), an int
 * argument that is not an exact int of 64 bits, a reply field missing or not plain digits.
 * The Python code then builds the value or words the error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <string.h>

#define MAX_INT_TEXT 18 /* digits read here; longer numbers go to Python's int() */

static PyObject *KEYS[13];                 /* "a" .. "m", interned */
static PyObject *S_TRUE, *S_FALSE, *S_EMPTY; /* "true", "false", "" */
static PyObject *W_MSG_ID, *W_QUEUE_ID, *W_QUEUE_OFFSET, *W_TRANSACTION_ID, *W_RECALL_HANDLE,
    *W_REGION, *W_TRACE_ON, *S_DEFAULT_REGION;

static int intern_all(void) {
    static const char *const names[13] = {"a", "b", "c", "d", "e", "f", "g",
                                          "h", "i", "j", "k", "l", "m"};
    for (int i = 0; i < 13; i++) {
        if ((KEYS[i] = PyUnicode_InternFromString(names[i])) == NULL) return -1;
    }
    return (S_TRUE = PyUnicode_InternFromString("true")) == NULL ||
                   (S_FALSE = PyUnicode_InternFromString("false")) == NULL ||
                   (S_EMPTY = PyUnicode_InternFromString("")) == NULL ||
                   (W_MSG_ID = PyUnicode_InternFromString("msgId")) == NULL ||
                   (W_QUEUE_ID = PyUnicode_InternFromString("queueId")) == NULL ||
                   (W_QUEUE_OFFSET = PyUnicode_InternFromString("queueOffset")) == NULL ||
                   (W_TRANSACTION_ID = PyUnicode_InternFromString("transactionId")) == NULL ||
                   (W_RECALL_HANDLE = PyUnicode_InternFromString("recallHandle")) == NULL ||
                   (W_REGION = PyUnicode_InternFromString("MSG_REGION")) == NULL ||
                   (W_TRACE_ON = PyUnicode_InternFromString("TRACE_ON")) == NULL ||
                   (S_DEFAULT_REGION = PyUnicode_InternFromString("DefaultRegion")) == NULL
               ? -1
               : 0;
}

/* ------------------------------------------------------------------ the request fields */

/* str(value) of an exact int of 64 bits; NULL without an exception: not handled here */
static PyObject *int_text(PyObject *value) {
    if (!PyLong_CheckExact(value)) return NULL;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return NULL;
    }
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%lld", v);
    return PyUnicode_FromStringAndSize(digits, n);
}

/* "name\x01value\x02" per pair whose value is not None, as UTF-8 into a new str;
 * NULL without an exception: not handled (a name or value not a str, or not UTF-8) */
static PyObject *properties_text(PyObject *props) {
    Py_ssize_t pos = 0, total = 0;
    PyObject *key, *value;
    while (PyDict_Next(props, &pos, &key, &value)) {
        if (value == Py_None) continue;
        if (!PyUnicode_CheckExact(key) || !PyUnicode_CheckExact(value)) return NULL;
        Py_ssize_t kn, vn;
        if (PyUnicode_AsUTF8AndSize(key, &kn) == NULL ||
            PyUnicode_AsUTF8AndSize(value, &vn) == NULL) {
            PyErr_Clear();
            return NULL;
        }
        if (kn > PY_SSIZE_T_MAX / 4 - total - vn - 2) return NULL;
        total += kn + vn + 2;
    }
    char *buf = PyMem_Malloc(total ? (size_t)total : 1);
    if (buf == NULL) return PyErr_NoMemory();
    char *w = buf;
    pos = 0;
    while (PyDict_Next(props, &pos, &key, &value)) {
        if (value == Py_None) continue;
        Py_ssize_t kn, vn;
        const char *k = PyUnicode_AsUTF8AndSize(key, &kn); /* cached by the first walk */
        const char *v = PyUnicode_AsUTF8AndSize(value, &vn);
        if (k == NULL || v == NULL || w - buf + kn + vn + 2 > total) {
            /* the dict changed under us (it cannot without a callback; be safe) */
            PyErr_Clear();
            PyMem_Free(buf);
            return NULL;
        }
        memcpy(w, k, (size_t)kn);
        w += kn;
        *w++ = '\x01';
        memcpy(w, v, (size_t)vn);
        w += vn;
        *w++ = '\x02';
    }
    PyObject *text = PyUnicode_DecodeUTF8(buf, w - buf, NULL);
    PyMem_Free(buf);
    return text;
}

/* put KEYS[index] -> value (stolen) into fields; -1 on error */
static int put_field(PyObject *fields, int index, PyObject *value) {
    if (value == NULL) return -1;
    int rc = PyDict_SetItem(fields, KEYS[index], value);
    Py_DECREF(value);
    return rc;
}

/* send_v2_fields(group, topic, default_topic, default_topic_queue_nums, queue_id, sys_flag,
 *                born_timestamp, flag, properties, reconsume_times, unit_mode,
 *                max_reconsume_times, batch) -> dict[str, str] | None
 * properties: the message's property dict, a ready str (a batch's ""), or None */
static PyObject *send_v2_fields(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 13) {
        PyErr_SetString(PyExc_TypeError, "send_v2_fields takes 13 arguments");
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (!PyUnicode_CheckExact(args[i])) Py_RETURN_NONE;
    }
    PyObject *props = args[8];
    if (!(props == Py_None || PyUnicode_CheckExact(props) || PyDict_CheckExact(props)))
        Py_RETURN_NONE;
    int unit_mode = PyObject_IsTrue(args[10]), batch = PyObject_IsTrue(args[12]);
    if (unit_mode < 0 || batch < 0) return NULL;
    PyObject *fields = PyDict_New();
    if (fields == NULL) return NULL;
    for (int i = 0; i < 3; i++) {
        if (PyDict_SetItem(fields, KEYS[i], args[i]) < 0) goto error;
    }
    for (int i = 3; i < 8; i++) { /* d .. h: ints */
        PyObject *text = int_text(args[i]);
        if (text == NULL) goto fallback;
        if (put_field(fields, i, text) < 0) goto error;
    }
    if (props != Py_None) {
        PyObject *text = PyDict_CheckExact(props) ? properties_text(props) : Py_NewRef(props);
        if (text == NULL) goto fallback;
        if (put_field(fields, 8, text) < 0) goto error;
    }
    if (args[9] != Py_None) {
        PyObject *text = int_text(args[9]);
        if (text == NULL) goto fallback;
        if (put_field(fields, 9, text) < 0) goto error;
    }
    if (PyDict_SetItem(fields, KEYS[10], unit_mode ? S_TRUE : S_FALSE) < 0) goto error;
    if (args[11] != Py_None) {
        PyObject *text = int_text(args[11]);
        if (text == NULL) goto fallback;
        if (put_field(fields, 11, text) < 0) goto error;
    }
    if (PyDict_SetItem(fields, KEYS[12], batch ? S_TRUE : S_FALSE) < 0) goto error;
    return fields;
fallback:
    Py_DECREF(fields);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
error:
    Py_DECREF(fields);
    return NULL;
}

/* ------------------------------------------------------------------ the reply values */

/* an int of ASCII digits (at most 18, no sign: custom_header.parse_int's fast form);
 * NULL without an exception when not in that form */
static PyObject *digits_int(PyObject *text) {
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const char *s = (const char *)PyUnicode_DATA(text);
    if (n == 0 || n > MAX_INT_TEXT) return NULL;
    long long v = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return NULL;
        v = v * 10 + (s[i] - '0');
    }
    return PyLong_FromLongLong(v);
}

/* fields[key] when a str, else Py_None (an optional header field); a borrowed reference,
 * NULL with an exception on error */
static PyObject *optional_text(PyObject *fields, PyObject *key, PyObject *missing) {
    PyObject *value = PyDict_GetItemWithError(fields, key);
    if (value == NULL) return PyErr_Occurred() ? NULL : missing;
    return value;
}

/* send_result_values(ext_fields) -> (msg_id, queue_id, queue_offset, transaction_id,
 * recall_handle, region_id, trace_on) | None */
static PyObject *send_result_values(PyObject *self, PyObject *fields) {
    if (!PyDict_CheckExact(fields)) Py_RETURN_NONE;
    PyObject *msg_id = PyDict_GetItemWithError(fields, W_MSG_ID);
    if (msg_id == NULL || !PyUnicode_CheckExact(msg_id)) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *transaction = optional_text(fields, W_TRANSACTION_ID, Py_None);
    PyObject *recall = optional_text(fields, W_RECALL_HANDLE, Py_None);
    PyObject *region = optional_text(fields, W_REGION, S_DEFAULT_REGION);
    PyObject *trace = optional_text(fields, W_TRACE_ON, S_TRUE);
    PyObject *queue_id_text = optional_text(fields, W_QUEUE_ID, Py_None);
    PyObject *offset_text = optional_text(fields, W_QUEUE_OFFSET, Py_None);
    if (!transaction || !recall || !region || !trace || !queue_id_text || !offset_text)
        return NULL;
    if (!PyUnicode_CheckExact(trace)) Py_RETURN_NONE;
    PyObject *queue_id = digits_int(queue_id_text);
    if (queue_id == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *offset = digits_int(offset_text);
    if (offset == NULL) {
        Py_DECREF(queue_id);
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    int off = PyUnicode_CompareWithASCIIString(trace, "false") == 0;
    return Py_BuildValue("(ONNOOOO)", msg_id, queue_id, offset, transaction, recall, region,
                         off ? Py_False : Py_True);
}

static PyMethodDef methods[] = {
    {"send_v2_fields", (PyCFunction)(void (*)(void))send_v2_fields, METH_FASTCALL,
     "The SEND_MESSAGE_V2 extFields a..m of one send; None where Python must build them."},
    {"send_result_values", (PyCFunction)send_result_values, METH_O,
     "A send reply's SendResult values from its extFields; None where Python must read them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._client",
    "The producer's send codec in C; rocketq.client.send_codec selects it.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__client(void) {
    if (intern_all() < 0) return NULL;
    return PyModule_Create(&module);
}
