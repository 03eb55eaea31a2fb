/*
 * custom_header.c: a typed header from a command's extFields in one call, the C twin of
 * rocketq/remoting/protocol/custom_header.py's CommandCustomHeader.from_ext_fields (RocketMQ's
 * RemotingCommand.decodeCommandCustomHeader).
 *
 * The field table is not written here: custom_header.py builds it from each header
 * dataclass's declarations (attribute, wire name, kind, required, default) and passes it in.
 * Values take the common forms only: an int of ASCII digits with an optional sign (at most
 * 18 digits), a bool spelled true/false/1/0. Anything else (a missing required field, a
 * value that needs int()'s or strip()'s other rules, a float) returns None, and the Python
 * reader builds the header or raises the error naming the field.
 */
#include "remoting.h"

enum { K_STR = 0, K_INT = 1, K_BOOL = 2 }; /* custom_header.NATIVE_KINDS */

#define MAX_INT_TEXT 18

static PyObject *empty_tuple;

/* int of ASCII digits: a new int, or NULL without an exception for "not handled" */
static PyObject *int_of(const char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    int negative = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        negative = s[0] == '-';
        i = 1;
    }
    if (i >= n || n - i > MAX_INT_TEXT) return NULL;
    long long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return NULL;
        v = v * 10 + (s[i] - '0');
    }
    return PyLong_FromLongLong(negative ? -v : v);
}

static PyObject *bool_of(const char *s, Py_ssize_t n) {
    if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 1 && s[0] == '1')) Py_RETURN_TRUE;
    if ((n == 5 && memcmp(s, "false", 5) == 0) || (n == 1 && s[0] == '0') || n == 0)
        Py_RETURN_FALSE;
    return NULL;
}

/* header_from_fields(cls, ext_fields, specs): the header, or None when Python must read it.
 * specs: tuple of (attr, wire, kind, required, default) tuples. */
PyObject *header_from_fields(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyType_Check(args[0]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "header_from_fields(cls, ext_fields, specs: tuple)");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[0];
    PyObject *fields = args[1], *specs = args[2];
    if (fields != Py_None && !PyDict_CheckExact(fields)) Py_RETURN_NONE;
    if (empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL) return NULL;
    PyObject *header = cls->tp_new(cls, empty_tuple, NULL);
    if (header == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(specs); i++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, i);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 5) {
            PyErr_SetString(PyExc_TypeError, "a spec is (attr, wire, kind, required, default)");
            goto error;
        }
        PyObject *attr = PyTuple_GET_ITEM(spec, 0), *wire = PyTuple_GET_ITEM(spec, 1);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(spec, 2));
        if (kind == -1 && PyErr_Occurred()) goto error;
        int required = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 3));
        if (required < 0) goto error;
        PyObject *text = NULL;
        if (fields != Py_None) {
            text = PyDict_GetItemWithError(fields, wire);
            if (text == NULL && PyErr_Occurred()) goto error;
        }
        PyObject *value;
        if (text == NULL) {
            if (required) goto not_handled;
            value = Py_NewRef(PyTuple_GET_ITEM(spec, 4));
        } else if (!PyUnicode_Check(text)) {
            goto not_handled;
        } else if (kind == K_STR) {
            value = Py_NewRef(text);
        } else {
            Py_ssize_t n;
            const char *s = PyUnicode_AsUTF8AndSize(text, &n);
            if (s == NULL) goto not_handled; /* surrogates: Python words it */
            if (n == 0 && !required) {
                value = Py_NewRef(PyTuple_GET_ITEM(spec, 4)); /* an empty optional: default */
            } else {
                value = kind == K_INT ? int_of(s, n) : kind == K_BOOL ? bool_of(s, n) : NULL;
                if (value == NULL) {
                    if (PyErr_Occurred()) goto error;
                    goto not_handled;
                }
            }
        }
        /* the generic setter: a frozen dataclass's own __setattr__ refuses, as its
         * __init__ works around with object.__setattr__ */
        int rc = PyObject_GenericSetAttr(header, attr, value);
        Py_DECREF(value);
        if (rc < 0) goto error;
    }
    return header;
not_handled:
    PyErr_Clear();
    Py_DECREF(header);
    Py_RETURN_NONE;
error:
    Py_DECREF(header);
    return NULL;
}
