/*
 * stats.c: rocketq._native._stats, BrokerStatsManager's put figures of a flush's single sends
 * in one call (issue 22, sync 1: a lone send's flush).
 *
 * count_puts(manager, tables, by_topic, message_type) does, for each topic -> sizes of
 * by_topic, what BrokerStatsManager.record_single_puts' Python does (the reference):
 *   TOPIC_PUT_NUMS[topic] += (n, n), TOPIC_PUT_SIZE[topic] += (sum, n),
 *   BROKER_PUT_NUMS[cluster] += (n, n), manager.put_message_times_total += n,
 *   manager.put_message_size_total += sum, put_by_type[(topic, message_type)] += [n, sum],
 *   message_sizes[topic][bisect_left(bounds, size)] += 1 for each size.
 * tables is (nums items, size items, broker items, cluster, put_by_type, message_sizes,
 * bounds): the manager's own dicts (the StatsItemSets' _items), never copies, so every reader
 * sees the same values either way. A topic is counted only when all its entries already exist
 * and hold what C reads (exact ints, a counts list of len(bounds) + 1, every size an exact int
 * within +-2**52, at least one size); otherwise nothing of it is touched and the topic is in
 * the returned list, for the Python reference (which creates the entries). Checked before any
 * write, so a topic is counted once, by one of the two. The first topic declined ends the
 * counting: it and the topics after it are returned, so the Python way counts them in their
 * order (an exception there stops where the Python reference stops).
 *
 * count_flush(manager, tables, by_topic, message_type, elapsed_s) is a flush's figures in one
 * call: first BrokerStatsManager.record_put_latencies(elapsed_s) (v = int(x * 1000); bucket 0
 * when v <= 0, else bisect_right(latency bounds, v, lo=1) of manager.put_latency_counts;
 * manager.put_message_entire_time_max_ms = max(it, every v)), then count_puts. tables has two
 * more: (..., latency counts, latency bounds). None (nothing touched) when it does not read a
 * latency (not a float, not finite, out of range) or the latency tables: the Python way then.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#define MAX_BUCKETS 64
#define MAX_SIZE (1LL << 52)

static PyObject *s_value, *s_times, *s_put_times, *s_put_size, *s_time_max;

static Py_ssize_t bisect_left_ll(const long long *b, Py_ssize_t hi, long long v) {
    Py_ssize_t lo = 0;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (b[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* obj.name += inc (0 or -1 with an exception) */
static int add_attr(PyObject *obj, PyObject *name, PyObject *inc) {
    PyObject *old = PyObject_GetAttr(obj, name);
    if (old == NULL) return -1;
    PyObject *sum = PyNumber_InPlaceAdd(old, inc);
    Py_DECREF(old);
    if (sum == NULL) return -1;
    int rc = PyObject_SetAttr(obj, name, sum);
    Py_DECREF(sum);
    return rc;
}

/* list[i] += inc (list an exact list, i in range) */
static int add_item(PyObject *list, Py_ssize_t i, PyObject *inc) {
    PyObject *old = PyList_GET_ITEM(list, i);
    PyObject *sum = PyNumber_Add(old, inc);
    if (sum == NULL) return -1;
    PyList_SET_ITEM(list, i, sum);
    Py_DECREF(old);
    return 0;
}

static int exact_ints(PyObject *list, Py_ssize_t len) {
    if (!PyList_CheckExact(list) || PyList_GET_SIZE(list) != len) return 0;
    for (Py_ssize_t i = 0; i < len; i++)
        if (!PyLong_CheckExact(PyList_GET_ITEM(list, i))) return 0;
    return 1;
}

/* 1 counted, 0 declined (nothing touched), -1 an exception */
static int count_topic(PyObject *manager, PyObject *const *t, const long long *bounds,
                       Py_ssize_t nb, PyObject *topic, PyObject *sizes, PyObject *message_type) {
    if (!PyList_CheckExact(sizes)) return 0;
    Py_ssize_t n = PyList_GET_SIZE(sizes);
    if (n < 1) return 0;
    Py_ssize_t add[MAX_BUCKETS] = {0};
    long long total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = PyList_GET_ITEM(sizes, k);
        if (!PyLong_CheckExact(x)) return 0;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        if (v > MAX_SIZE || v < -MAX_SIZE) return 0;
        total += v; /* |total| <= n * 2**52: n < 2**11 or it is checked below */
        if (total > (1LL << 62) || total < -(1LL << 62)) return 0;
        add[bisect_left_ll(bounds, nb, v)]++;
    }
    /* each entry held as soon as found: a lookup may run Python (a key's __eq__) that
     * changes the dicts, and an attribute write below may too */
    PyObject *held[5] = {NULL, NULL, NULL, NULL, NULL};
    PyObject *key = PyTuple_Pack(2, topic, message_type);
    if (key == NULL) return -1;
    PyObject *dicts[5] = {t[0], t[1], t[2], t[4], t[5]};
    PyObject *keys[5] = {topic, topic, t[3], key, topic};
    int found = 1;
    for (int i = 0; i < 5 && found; i++) {
        PyObject *got = PyDict_GetItemWithError(dicts[i], keys[i]);
        if (got == NULL) {
            found = PyErr_Occurred() ? -1 : 0;
            break;
        }
        held[i] = Py_NewRef(got);
    }
    Py_DECREF(key);
    if (found == 1 && (!exact_ints(held[3], 2) || !exact_ints(held[4], nb + 1))) found = 0;
    if (found != 1) {
        for (int i = 0; i < 5; i++) Py_XDECREF(held[i]);
        return found;
    }
    PyObject *nums_item = held[0], *size_item = held[1], *broker_item = held[2];
    PyObject *pair = held[3], *counts = held[4];
    int rc = -1;
    PyObject *n_obj = PyLong_FromSsize_t(n);
    PyObject *total_obj = PyLong_FromLongLong(total);
    if (n_obj == NULL || total_obj == NULL) goto done;
    if (add_attr(nums_item, s_value, n_obj) < 0 || add_attr(nums_item, s_times, n_obj) < 0 ||
        add_attr(size_item, s_value, total_obj) < 0 ||
        add_attr(size_item, s_times, n_obj) < 0 ||
        add_attr(broker_item, s_value, n_obj) < 0 ||
        add_attr(broker_item, s_times, n_obj) < 0 ||
        add_attr(manager, s_put_times, n_obj) < 0 || add_attr(manager, s_put_size, total_obj) < 0)
        goto done;
    /* checked again: an attribute write may have run Python that changed them */
    if (!exact_ints(pair, 2) || !exact_ints(counts, nb + 1)) {
        PyErr_SetString(PyExc_RuntimeError, "count_puts: a figure's list changed under it");
        goto done;
    }
    if (add_item(pair, 0, n_obj) < 0 || add_item(pair, 1, total_obj) < 0) goto done;
    for (Py_ssize_t i = 0; i <= nb; i++) {
        if (!add[i]) continue;
        PyObject *step = PyLong_FromSsize_t(add[i]);
        if (step == NULL) goto done;
        int bad = add_item(counts, i, step);
        Py_DECREF(step);
        if (bad < 0) goto done;
    }
    rc = 1;
done:
    Py_XDECREF(n_obj);
    Py_XDECREF(total_obj);
    for (int i = 0; i < 5; i++) Py_DECREF(held[i]);
    return rc;
}

/* count_puts' work, args checked: tables a tuple of 7 or more, by_topic a dict */
static PyObject *puts_by_topic(PyObject *const *args) {
    PyObject *manager = args[0], *by_topic = args[2], *message_type = args[3];
    PyObject *const *t = &PyTuple_GET_ITEM(args[1], 0);
    PyObject *declined = PyList_New(0);
    if (declined == NULL) return NULL;
    int tables_ok = PyDict_CheckExact(t[0]) && PyDict_CheckExact(t[1]) &&
                    PyDict_CheckExact(t[2]) && PyDict_CheckExact(t[4]) &&
                    PyDict_CheckExact(t[5]) && PyTuple_CheckExact(t[6]);
    Py_ssize_t nb = tables_ok ? PyTuple_GET_SIZE(t[6]) : 0;
    long long bounds[MAX_BUCKETS];
    if (nb < 1 || nb + 1 > MAX_BUCKETS) tables_ok = 0;
    for (Py_ssize_t i = 0; tables_ok && i < nb; i++) {
        PyObject *b = PyTuple_GET_ITEM(t[6], i);
        int overflow = 0;
        bounds[i] = PyLong_CheckExact(b) ? PyLong_AsLongLongAndOverflow(b, &overflow) : 0;
        if (!PyLong_CheckExact(b) || overflow || PyErr_Occurred()) {
            PyErr_Clear();
            tables_ok = 0;
        }
    }
    /* a copy of the keys and values: a write may run Python that changes by_topic */
    PyObject *items = PyDict_Items(by_topic);
    if (items == NULL) {
        Py_DECREF(declined);
        return NULL;
    }
    int counting = tables_ok;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        PyObject *topic = PyTuple_GET_ITEM(item, 0);
        int rc = counting ? count_topic(manager, t, bounds, nb, topic, PyTuple_GET_ITEM(item, 1),
                                        message_type)
                          : 0;
        if (rc == 0) counting = 0; /* this topic and the rest: Python's, in order */
        if (rc < 0 || (rc == 0 && PyList_Append(declined, topic) < 0)) {
            Py_DECREF(items);
            Py_DECREF(declined);
            return NULL;
        }
    }
    Py_DECREF(items);
    return declined;
}

static PyObject *count_puts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_CheckExact(args[1]) || PyTuple_GET_SIZE(args[1]) < 7 ||
        !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "count_puts(manager, tables: tuple of 7, by_topic: dict, message_type)");
        return NULL;
    }
    return puts_by_topic(args);
}

/* record_put_latencies' work: 1 counted, 0 declined (nothing touched), -1 an exception */
static int count_latencies(PyObject *manager, PyObject *counts, PyObject *bounds_obj,
                           PyObject *elapsed) {
    if (!PyList_CheckExact(elapsed) || !PyTuple_CheckExact(bounds_obj)) return 0;
    Py_ssize_t nb = PyTuple_GET_SIZE(bounds_obj);
    if (nb < 2 || nb + 1 > MAX_BUCKETS || !exact_ints(counts, nb + 1)) return 0;
    long long bounds[MAX_BUCKETS];
    for (Py_ssize_t i = 0; i < nb; i++) {
        PyObject *b = PyTuple_GET_ITEM(bounds_obj, i);
        int overflow = 0;
        if (!PyLong_CheckExact(b)) return 0;
        bounds[i] = PyLong_AsLongLongAndOverflow(b, &overflow);
        if (overflow || (bounds[i] == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
    }
    PyObject *top_obj = PyObject_GetAttr(manager, s_time_max);
    if (top_obj == NULL) return -1;
    int overflow = 0;
    long long top = PyLong_CheckExact(top_obj) ? PyLong_AsLongLongAndOverflow(top_obj, &overflow)
                                               : 0;
    int readable = PyLong_CheckExact(top_obj) && !overflow && !PyErr_Occurred();
    PyErr_Clear();
    Py_DECREF(top_obj);
    if (!readable) return 0;
    Py_ssize_t add[MAX_BUCKETS] = {0};
    Py_ssize_t n = PyList_GET_SIZE(elapsed);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = PyList_GET_ITEM(elapsed, k);
        if (!PyFloat_CheckExact(x)) return 0;
        double v = PyFloat_AS_DOUBLE(x) * 1000.0;
        if (!isfinite(v) || v >= 9.0e15 || v <= -9.0e15) return 0;
        long long value = (long long)v; /* int(): toward zero */
        Py_ssize_t lo = 1, hi = nb;
        if (value <= 0)
            hi = lo = 0;
        while (lo < hi) { /* bisect_right(bounds, value, lo=1) */
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (value < bounds[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        add[lo]++;
        if (value > top) top = value;
    }
    PyObject *top_new = PyLong_FromLongLong(top);
    if (top_new == NULL) return -1;
    int rc = PyObject_SetAttr(manager, s_time_max, top_new);
    Py_DECREF(top_new);
    if (rc < 0) return -1;
    if (!exact_ints(counts, nb + 1)) { /* the write ran Python that changed the list */
        PyErr_SetString(PyExc_RuntimeError, "count_flush: the latency counts changed under it");
        return -1;
    }
    for (Py_ssize_t i = 0; i <= nb; i++) {
        if (!add[i]) continue;
        PyObject *step = PyLong_FromSsize_t(add[i]);
        if (step == NULL) return -1;
        int bad = add_item(counts, i, step);
        Py_DECREF(step);
        if (bad < 0) return -1;
    }
    return 1;
}

static PyObject *count_flush(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyTuple_CheckExact(args[1]) || PyTuple_GET_SIZE(args[1]) != 9 ||
        !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "count_flush(manager, tables: tuple of 9, by_topic: dict, message_type, "
                        "elapsed_s: list)");
        return NULL;
    }
    PyObject *tables = args[1];
    int rc = count_latencies(args[0], PyTuple_GET_ITEM(tables, 7), PyTuple_GET_ITEM(tables, 8),
                             args[4]);
    if (rc < 0) return NULL;
    if (rc == 0) Py_RETURN_NONE;
    return puts_by_topic(args);
}

static PyMethodDef methods[] = {
    {"count_puts", (PyCFunction)(void (*)(void))count_puts, METH_FASTCALL,
     "count_puts(manager, tables, by_topic, message_type) -> the topics left to Python"},
    {"count_flush", (PyCFunction)(void (*)(void))count_flush, METH_FASTCALL,
     "count_flush(manager, tables, by_topic, message_type, elapsed_s) -> the topics left to "
     "Python, or None: the latencies and the topics all left to Python"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._stats",
    "BrokerStatsManager's put figures in one call.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__stats(void) {
    s_value = PyUnicode_InternFromString("value");
    s_times = PyUnicode_InternFromString("times");
    s_put_times = PyUnicode_InternFromString("put_message_times_total");
    s_put_size = PyUnicode_InternFromString("put_message_size_total");
    s_time_max = PyUnicode_InternFromString("put_message_entire_time_max_ms");
    if (!s_value || !s_times || !s_put_times || !s_put_size || !s_time_max) return NULL;
    return PyModule_Create(&module);
}
