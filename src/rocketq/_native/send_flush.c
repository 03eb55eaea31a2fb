/*
 * send_flush.c: the answers of a flush's single sends in one call (issue 22, lever 1): what
 * rocketq/broker/processors/send_answer.py's SendAnswers.answer_sends did a send in Python
 * (which puts C answers, their connections' runs, send_reply_runs' buffers) and the lists its
 * figures take (the requests and their latencies for the rpc histogram, the sizes by topic
 * for BrokerStatsManager), read straight from the flush's DeferredReplys, SendPuts and the
 * store's four values a put. The replies are send_reply.c's frames, byte for byte.
 */
#include "remoting.h"

/* one answerable send of a flush (send_answer_flush) */
typedef struct {
    PyObject *request; /* deferred.request (a reference held) */
    PyObject *topic;   /* put.topic (borrowed from puts) */
    PyObject *size;    /* values[4i + 2] (borrowed) */
    double started;
    long long opaque, offset, queue_id, queue_offset;
    Py_ssize_t run;
} Answer;

static PyObject *s_channel, *s_request, *s_started, *s_opaque, *s_flag, *s_serialize;

static int intern_names(void) {
    if (s_serialize != NULL) return 0;
    if ((s_channel = PyUnicode_InternFromString("channel")) == NULL ||
        (s_request = PyUnicode_InternFromString("request")) == NULL ||
        (s_started = PyUnicode_InternFromString("started")) == NULL ||
        (s_opaque = PyUnicode_InternFromString("opaque")) == NULL ||
        (s_flag = PyUnicode_InternFromString("flag")) == NULL ||
        (s_serialize = PyUnicode_InternFromString("serialize_type")) == NULL)
        return -1;
    return 0;
}

/* 0: put i's request and fields read into *a (answerable), 1: the Python path answers it
 * alone, 2: a value this code does not handle (the caller returns None), -1: an error */
static int read_answer(PyObject *deferred, PyObject *put, PyObject *values, Py_ssize_t k,
                       PyObject *skip, PyObject *json, PyObject *channels, PyObject *runs,
                       Answer *a) {
    if (!PyTuple_Check(put) || PyTuple_GET_SIZE(put) < 2) return 2;
    PyObject *status = PyList_GET_ITEM(values, k);
    if (!PyLong_CheckExact(status)) return 2;
    int failed = PyObject_IsTrue(status);
    if (failed) return failed < 0 ? -1 : 1;
    a->topic = PyTuple_GET_ITEM(put, 0);
    int system = PySet_Contains(skip, a->topic);
    if (system) return system < 0 ? -1 : 1;
    PyObject *request = PyObject_GetAttr(deferred, s_request);
    if (request == NULL) return -1;
    PyObject *serialize = PyObject_GetAttr(request, s_serialize);
    PyObject *flag = serialize == NULL ? NULL : PyObject_GetAttr(request, s_flag);
    Py_XDECREF(serialize); /* only its identity is read */
    if (flag == NULL) {
        Py_DECREF(request);
        return -1;
    }
    long long flags;
    int rc = reply_i64(flag, LLONG_MIN, LLONG_MAX, &flags) ? 2 : 0;
    Py_DECREF(flag);
    if (rc == 0 && (serialize != json || flags & FLAG_ONEWAY)) rc = 1;
    PyObject *opaque = rc == 0 ? PyObject_GetAttr(request, s_opaque) : NULL;
    PyObject *started = opaque == NULL ? NULL : PyObject_GetAttr(deferred, s_started);
    PyObject *channel = started == NULL ? NULL : PyObject_GetAttr(deferred, s_channel);
    if (rc == 0 && channel == NULL) rc = -1;
    if (rc == 0 && (reply_i64(opaque, INT32_MIN, INT32_MAX, &a->opaque) ||
                    reply_i64(PyList_GET_ITEM(values, k + 1), 0, INT64_MAX, &a->offset) ||
                    reply_i64(PyTuple_GET_ITEM(put, 1), INT32_MIN, INT32_MAX, &a->queue_id) ||
                    reply_i64(PyList_GET_ITEM(values, k + 3), INT64_MIN, INT64_MAX,
                           &a->queue_offset) ||
                    !PyFloat_CheckExact(started)))
        rc = 2;
    if (rc == 0) {
        a->started = PyFloat_AS_DOUBLE(started);
        a->size = PyList_GET_ITEM(values, k + 2);
        PyObject *run = PyDict_GetItemWithError(runs, channel);
        if (run != NULL) {
            a->run = PyLong_AsSsize_t(run);
        } else if (PyErr_Occurred()) {
            rc = -1;
        } else {
            a->run = PyList_GET_SIZE(channels);
            PyObject *number = PyLong_FromSsize_t(a->run);
            if (number == NULL || PyDict_SetItem(runs, channel, number) < 0 ||
                PyList_Append(channels, channel) < 0)
                rc = -1;
            Py_XDECREF(number);
        }
    }
    Py_XDECREF(opaque);
    Py_XDECREF(started);
    Py_XDECREF(channel);
    if (rc == 0)
        a->request = request;
    else
        Py_DECREF(request);
    return rc;
}

/* the outputs of send_answer_flush from its answers (grouped by run, in order) */
static PyObject *flush_outputs(const char **piece, const Py_ssize_t *piece_len,
                               Py_ssize_t fixed, const char *prefix, Py_ssize_t prefix_len,
                               Answer *answers, Py_ssize_t count, PyObject *alone,
                               PyObject *channels, double now) {
    Py_ssize_t runs = PyList_GET_SIZE(channels);
    Py_ssize_t per_frame = 8 + fixed + MAX_ID + 3 * MAX_NUMBER;
    PyObject *frames = PyList_New(runs), *counts = PyList_New(runs);
    PyObject *requests = PyList_New(count), *elapsed = PyList_New(count);
    PyObject *sizes = PyDict_New(), *out = NULL;
    Py_ssize_t *order = PyMem_Calloc((size_t)runs + 1, sizeof(Py_ssize_t));
    if (frames == NULL || counts == NULL || requests == NULL || elapsed == NULL ||
        sizes == NULL || order == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) order[answers[i].run + 1]++;
    for (Py_ssize_t r = 0; r < runs; r++) {
        Py_ssize_t n = order[r + 1];
        PyObject *number = PyLong_FromSsize_t(n);
        PyObject *heads = n > PY_SSIZE_T_MAX / per_frame
                              ? NULL
                              : PyBytes_FromStringAndSize(NULL, n * per_frame);
        if (number == NULL || heads == NULL) {
            Py_XDECREF(number);
            Py_XDECREF(heads);
            if (!PyErr_Occurred()) PyErr_NoMemory();
            goto done;
        }
        PyList_SET_ITEM(counts, r, number);
        PyList_SET_ITEM(frames, r, heads);
        order[r + 1] += order[r]; /* order[r]: where run r's answers start */
    }
    /* each run's frames in the answers' order; the figures in runs' order */
    Py_ssize_t *at = PyMem_Malloc(((size_t)runs + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *by_slot = PyMem_Malloc(((size_t)count + 1) * sizeof(Py_ssize_t));
    char **w = PyMem_Malloc(((size_t)runs + 1) * sizeof(char *));
    if (at == NULL || by_slot == NULL || w == NULL) {
        PyMem_Free(at);
        PyMem_Free(by_slot);
        PyMem_Free(w);
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < runs; r++) {
        at[r] = order[r];
        w[r] = PyBytes_AS_STRING(PyList_GET_ITEM(frames, r));
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        Answer *a = &answers[i];
        Py_ssize_t slot = at[a->run]++;
        by_slot[slot] = i;
        w[a->run] = reply_frame(w[a->run], piece, piece_len, a->opaque, NULL, 0, a->offset,
                                prefix, prefix_len, a->queue_id, a->queue_offset);
        PyObject *spent = PyFloat_FromDouble(now - a->started);
        if (spent == NULL) {
            failed = 1;
            break;
        }
        PyList_SET_ITEM(requests, slot, Py_NewRef(a->request));
        PyList_SET_ITEM(elapsed, slot, spent);
    }
    for (Py_ssize_t r = 0; r < runs && !failed; r++) {
        PyObject *heads = PyList_GET_ITEM(frames, r);
        char *base = PyBytes_AS_STRING(heads);
        if (_PyBytes_Resize(&heads, w[r] - base) < 0) {
            PyList_SET_ITEM(frames, r, Py_NewRef(Py_None)); /* the resize freed it */
            failed = 1;
            break;
        }
        PyList_SET_ITEM(frames, r, heads);
    }
    PyMem_Free(w);
    /* the sizes by topic, in the requests' order (the runs' order) */
    for (Py_ssize_t slot = 0; slot < count && !failed; slot++) {
        Answer *a = &answers[by_slot[slot]];
        PyObject *list = PyDict_GetItemWithError(sizes, a->topic);
        if (list == NULL) {
            if (PyErr_Occurred() || (list = PyList_New(0)) == NULL) {
                failed = 1;
                break;
            }
            int rc = PyDict_SetItem(sizes, a->topic, list);
            Py_DECREF(list);
            if (rc < 0) {
                failed = 1;
                break;
            }
        }
        if (PyList_Append(list, a->size) < 0) failed = 1;
    }
    PyMem_Free(at);
    PyMem_Free(by_slot);
    if (!failed) out = PyTuple_Pack(7, alone, channels, frames, counts, requests, elapsed, sizes);
done:
    PyMem_Free(order);
    Py_XDECREF(frames);
    Py_XDECREF(counts);
    Py_XDECREF(requests);
    Py_XDECREF(elapsed);
    Py_XDECREF(sizes);
    return out;
}

/* send_answer_flush(pieces, prefix, deferreds, puts, values, indexes, skip_topics, json, now)
 * -> (alone, channels, frames, counts, requests, elapsed, sizes) | None: the answers of a
 * flush's sends (send_answer.SendAnswers.answer_sends' loop and _record's lists) in one
 * call. For each index i: the put answered by the Python path (``alone``: a status other than
 * PUT_OK, a topic of ``skip_topics``, a request not JSON or oneway) or its reply written into
 * its connection's buffer (``channels`` in first-seen order, ``frames`` and ``counts`` one a
 * connection: send_reply_runs' bytes), its request and its seconds since ``started`` in
 * ``requests`` and ``elapsed`` (the runs' order), its size in its topic's list of ``sizes``.
 * None when a value is one this code does not handle (nothing done: the Python path answers
 * the flush as it would). */
PyObject *send_answer_flush(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 9 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != PIECES ||
        !PyList_Check(args[2]) || !PyList_Check(args[3]) || !PyList_Check(args[4]) ||
        !PyAnySet_Check(args[6]) || !PyFloat_Check(args[8])) {
        PyErr_SetString(PyExc_TypeError,
                        "send_answer_flush(pieces, prefix: bytes, deferreds: list, puts: list, "
                        "values: list, indexes, skip_topics: set, json, now: float)");
        return NULL;
    }
    if (intern_names() < 0) return NULL;
    const char *prefix;
    Py_ssize_t prefix_len = 0;
    if ((prefix = reply_prefix(args[1], &prefix_len)) == NULL) Py_RETURN_NONE;
    const char *piece[PIECES];
    Py_ssize_t piece_len[PIECES], fixed;
    int bad = reply_pieces(args[0], piece, piece_len, &fixed);
    if (bad == 1) return NULL;
    if (bad == 2) Py_RETURN_NONE;
    PyObject *deferreds = args[2], *puts = args[3], *values = args[4];
    double now = PyFloat_AsDouble(args[8]);
    PyObject *indexes = PySequence_Fast(args[5], "send_answer_flush: indexes is a sequence");
    if (indexes == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(indexes), count = 0;
    Answer *answers = PyMem_Malloc(((size_t)n + 1) * sizeof(Answer));
    PyObject *alone = PyList_New(0), *channels = PyList_New(0), *runs = PyDict_New();
    PyObject *out = NULL;
    if (answers == NULL || alone == NULL || channels == NULL || runs == NULL) {
        if (answers == NULL) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *index = PySequence_Fast_GET_ITEM(indexes, j);
        Py_ssize_t i = PyLong_CheckExact(index) ? PyLong_AsSsize_t(index) : -1;
        if (i == -1 && PyErr_Occurred()) PyErr_Clear();
        if (i < 0 || i >= PyList_GET_SIZE(deferreds) || i >= PyList_GET_SIZE(puts) ||
            i >= PyList_GET_SIZE(values) / 4) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        Answer *a = &answers[count];
        int rc = read_answer(PyList_GET_ITEM(deferreds, i), PyList_GET_ITEM(puts, i), values,
                             4 * i, args[6], args[7], channels, runs, a);
        if (rc == 0) {
            count++;
        } else if (rc == 1) {
            if (PyList_Append(alone, index) < 0) goto done;
        } else {
            if (rc == 2) out = Py_NewRef(Py_None);
            goto done;
        }
    }
    out = flush_outputs(piece, piece_len, fixed, prefix, prefix_len, answers, count, alone,
                        channels, now);
done:
    if (answers != NULL)
        for (Py_ssize_t i = 0; i < count; i++) Py_DECREF(answers[i].request);
    PyMem_Free(answers);
    Py_XDECREF(alone);
    Py_XDECREF(channels);
    Py_XDECREF(runs);
    Py_DECREF(indexes);
    return out;
}
