/*
 * send_figures.c: a flush's figures counted into their buckets in one call each (issue 22,
 * lever 1).
 *
 * count_figures(counts, bounds, values, scale, mode, start) is the loop of one of three
 * Python figures, over every value of a flush's answered sends:
 *   mode 0, BrokerStatsManager.record_put_latencies: v = int(x * scale); bucket 0 when v <= 0,
 *     else bisect_right(bounds, v, lo=1); returns max(start, every v) (the maximum kept);
 *   mode 1, RpcLatencyStats.on_responses for one histogram: v = x * scale; bucket
 *     bisect_left(bounds, v); returns start + each v, added in order (its sum_ms);
 *   mode 2, BrokerStatsManager.record_single_puts' sizes: bucket bisect_left(bounds, v) of
 *     each int v; returns start.
 * counts is the figure's list (len(bounds) + 1 ints), bumped once a bucket at the end; None
 * (nothing counted) for a value it does not read (not a float in modes 0 and 1, not an int in
 * mode 2, not finite, out of range) or a list of another shape: the Python loop counts then.
 */
#include "remoting.h"

#include <math.h>

#define MAX_BUCKETS 64

static Py_ssize_t bisect_left_d(const double *b, Py_ssize_t lo, Py_ssize_t hi, double v) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (b[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static Py_ssize_t bisect_right_d(const double *b, Py_ssize_t lo, Py_ssize_t hi, double v) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (v < b[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

PyObject *count_figures(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !PyList_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "count_figures(counts: list, bounds: tuple, values: list, scale, mode, "
                        "start)");
        return NULL;
    }
    PyObject *counts = args[0], *bounds_obj = args[1], *values = args[2];
    double scale = PyFloat_AsDouble(args[3]);
    if (scale == -1.0 && PyErr_Occurred()) return NULL;
    long mode = PyLong_AsLong(args[4]);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    if (mode < 0 || mode > 2) {
        PyErr_SetString(PyExc_ValueError, "count_figures: mode 0, 1 or 2");
        return NULL;
    }
    Py_ssize_t nb = PyTuple_GET_SIZE(bounds_obj);
    if (nb < 1 || nb + 1 > MAX_BUCKETS || PyList_GET_SIZE(counts) != nb + 1) Py_RETURN_NONE;
    double bounds[MAX_BUCKETS];
    for (Py_ssize_t i = 0; i < nb; i++) {
        PyObject *b = PyTuple_GET_ITEM(bounds_obj, i);
        if (PyFloat_CheckExact(b))
            bounds[i] = PyFloat_AS_DOUBLE(b);
        else if (PyLong_CheckExact(b)) {
            long long l = PyLong_AsLongLong(b);
            if (l == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            if (l > (1LL << 52) || l < -(1LL << 52)) Py_RETURN_NONE;
            bounds[i] = (double)l;
        } else
            Py_RETURN_NONE;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(counts); i++)
        if (!PyLong_CheckExact(PyList_GET_ITEM(counts, i))) Py_RETURN_NONE;
    Py_ssize_t add[MAX_BUCKETS] = {0};
    long long top = 0;
    double sum = 0.0;
    if (mode == 0) {
        top = PyLong_AsLongLong(args[5]);
        if (top == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    } else if (mode == 1) {
        sum = PyFloat_AsDouble(args[5]);
        if (sum == -1.0 && PyErr_Occurred()) return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = PyList_GET_ITEM(values, k);
        if (mode == 2) {
            if (!PyLong_CheckExact(x)) Py_RETURN_NONE;
            long long l = PyLong_AsLongLong(x);
            if (l == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            if (l > (1LL << 52) || l < -(1LL << 52)) Py_RETURN_NONE;
            add[bisect_left_d(bounds, 0, nb, (double)l)]++;
            continue;
        }
        if (!PyFloat_CheckExact(x)) Py_RETURN_NONE;
        double v = PyFloat_AS_DOUBLE(x) * scale;
        if (!isfinite(v)) Py_RETURN_NONE;
        if (mode == 1) {
            add[bisect_left_d(bounds, 0, nb, v)]++;
            sum += v;
            continue;
        }
        if (v >= 9.0e15 || v <= -9.0e15) Py_RETURN_NONE; /* int() beyond exact long long */
        long long value = (long long)v;                   /* int(): toward zero */
        add[value <= 0 ? 0 : bisect_right_d(bounds, 1, nb, (double)value)]++;
        if (value > top) top = value;
    }
    for (Py_ssize_t i = 0; i <= nb; i++) {
        if (!add[i]) continue;
        PyObject *old = PyList_GET_ITEM(counts, i);
        PyObject *step = PyLong_FromSsize_t(add[i]);
        PyObject *sum_obj = step != NULL ? PyNumber_Add(old, step) : NULL;
        Py_XDECREF(step);
        if (sum_obj == NULL) return NULL;
        PyList_SET_ITEM(counts, i, sum_obj);
        Py_DECREF(old);
    }
    if (mode == 0) return PyLong_FromLongLong(top);
    if (mode == 1) return PyFloat_FromDouble(sum);
    return Py_NewRef(args[5]);
}
