/*
 * send_take.c: the take of a read's sends in one call (issue 22, lever 1).
 *
 * take_sends(items, channel, room, taker) is SendMessageProcessor.take (broker/processors/
 * send.py) for the leading items of a read split_sends gave, in their order: an item is taken
 * when it is a (request, put, header) triple, the connection has room for one more answer in
 * flight, the broker is writable and the put's topic is in the processor's takes table with
 * the very config the topic table holds now and a queue id below that entry's limit. A taken
 * send gets its DeferredReply (channel, request, started: time.perf_counter's clock, built by
 * storing the class's slots when it is a plain slotted class, else by calling it) and goes to
 * the batcher's lists (PutBatcher.submit_send's steps); the counters the Python take keeps
 * (the batcher's lane count, the processor's native and split reads) get the count. The walk
 * stops at the first item it does not take: that one and every later one go to the Python
 * path in order (a connection's later send is never queued before an earlier one). Returns
 * the number taken; the caller adds it to its connection's deferred count. A failure past
 * the argument checks (memory, a broker without its config) takes no more and drops the error:
 * the Python take meets it again and answers that send SYSTEM_ERROR, as it always has.
 *
 * taker is (takes: dict topic -> (config, queue limit), topic table: dict topic -> config,
 * broker (its .config.broker_permission read each call), DeferredReply class, batcher,
 * processor, the write permission bit). Nothing here reads network bytes: the items are the
 * objects split_sends built.
 */
#include "remoting.h"

#include <structmember.h>
#include <time.h>

#define TAKER_SIZE 7
#define DEFERRED_FIELDS 3

static const char *const DEFERRED_SLOTS[DEFERRED_FIELDS] = {"channel", "request", "started"};

/* the DeferredReply class whose slots' offsets are known (a strong reference), and them;
 * offsets[0] 0: the class is called */
static PyObject *deferred_cls;
static Py_ssize_t deferred_offsets[DEFERRED_FIELDS];

/* the offsets of cls's slots "channel", "request", "started" when cls is a plain slotted
 * class (no __dict__, object's tp_new): its __init__ stores the three and nothing else (the
 * caller's class, DeferredReply, is checked by the tests against this build) */
static void find_deferred_slots(PyObject *cls) {
    Py_XSETREF(deferred_cls, Py_NewRef(cls));
    deferred_offsets[0] = 0;
    if (!PyType_Check(cls)) return;
    PyTypeObject *type = (PyTypeObject *)cls;
    if (type->tp_itemsize != 0 || type->tp_alloc == NULL || type->tp_dictoffset != 0 ||
        type->tp_new != PyBaseObject_Type.tp_new || type->tp_base != &PyBaseObject_Type)
        return;
    Py_ssize_t found[DEFERRED_FIELDS];
    for (int i = 0; i < DEFERRED_FIELDS; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, DEFERRED_SLOTS[i]);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return;
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY) ||
            member->offset < (Py_ssize_t)sizeof(PyObject) ||
            member->offset + (Py_ssize_t)sizeof(PyObject *) > type->tp_basicsize)
            return;
        found[i] = member->offset;
    }
    memcpy(deferred_offsets, found, sizeof(found));
}

/* time.perf_counter() as CPython on Linux computes it (CLOCK_MONOTONIC, _PyTime_AsSecondsDouble) */
static double perf_counter(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (ns % 1000000000LL == 0) return (double)(ns / 1000000000LL);
    return (double)ns / 1e9;
}

static PyObject *new_deferred(PyObject *cls, PyObject *channel, PyObject *request) {
    if (deferred_cls != cls) find_deferred_slots(cls);
    if (deferred_offsets[0] <= 0) {
        PyObject *args[2] = {channel, request};
        return PyObject_Vectorcall(cls, args, 2, NULL);
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    PyObject *started = PyFloat_FromDouble(perf_counter());
    if (started == NULL) return NULL;
    PyObject *deferred = type->tp_alloc(type, 0);
    if (deferred == NULL) {
        Py_DECREF(started);
        return NULL;
    }
    PyObject *values[DEFERRED_FIELDS] = {channel, request, started};
    for (int i = 0; i < DEFERRED_FIELDS; i++) {
        PyObject **slot = (PyObject **)((char *)deferred + deferred_offsets[i]);
        Py_XSETREF(*slot, Py_NewRef(values[i]));
    }
    Py_DECREF(started);
    return deferred;
}

/* the attribute names take_sends reads and writes, interned once (an interned name hits
 * the type's attribute cache; a name made from C text a call is hashed and missed each time) */
enum { N_CONFIG, N_PERMISSION, N_PUTS, N_DONES, N_LANE_COUNT, N_NATIVE_READS, N_SPLIT_READS,
       N_NAMES };
static const char *const NAME_TEXT[N_NAMES] = {"config",      "broker_permission", "_puts",
                                               "_dones",      "_lane_count",       "native_reads",
                                               "split_reads"};
static PyObject *names[N_NAMES];

static int intern_names(void) {
    if (names[N_NAMES - 1] != NULL) return 0;
    for (int i = 0; i < N_NAMES; i++) {
        if (names[i] == NULL && (names[i] = PyUnicode_InternFromString(NAME_TEXT[i])) == NULL)
            return -1;
    }
    return 0;
}

/* obj.name += n for an int attribute; 0, or -1 with an exception set */
static int add_to(PyObject *obj, PyObject *name, Py_ssize_t n) {
    PyObject *old = PyObject_GetAttr(obj, name);
    if (old == NULL) return -1;
    PyObject *step = PyLong_FromSsize_t(n);
    PyObject *sum = step != NULL ? PyNumber_Add(old, step) : NULL;
    Py_DECREF(old);
    Py_XDECREF(step);
    if (sum == NULL) return -1;
    int rc = PyObject_SetAttr(obj, name, sum);
    Py_DECREF(sum);
    return rc;
}

/* 1 when the taker's table lets a send of topic and queue_id through (SendMessageProcessor
 * .take's remembered case), 0 when not, -1 with an exception set */
static int topic_takes(PyObject *takes, PyObject *table, PyObject *topic, PyObject *queue_id) {
    PyObject *taken = PyDict_GetItemWithError(takes, topic);
    if (taken == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_CheckExact(taken) || PyTuple_GET_SIZE(taken) != 2) return 0;
    PyObject *config = PyDict_GetItemWithError(table, topic);
    if (config == NULL) return PyErr_Occurred() ? -1 : 0;
    if (config != PyTuple_GET_ITEM(taken, 0)) return 0;
    int below = PyObject_RichCompareBool(queue_id, PyTuple_GET_ITEM(taken, 1), Py_LT);
    return below;
}

/* a failure past the argument checks (a taker of another shape, memory): nothing taken,
 * the error dropped; the Python path (take) takes the sends, meets the error in its own
 * steps and answers it (SYSTEM_ERROR with the reason) instead of the connection closing */
static PyObject *declined(void) {
    PyErr_Clear();
    return PyLong_FromLong(0);
}

PyObject *take_sends(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_Check(args[0]) || !PyTuple_Check(args[3]) ||
        PyTuple_GET_SIZE(args[3]) != TAKER_SIZE ||
        !PyDict_Check(PyTuple_GET_ITEM(args[3], 0)) ||
        !PyDict_Check(PyTuple_GET_ITEM(args[3], 1))) {
        PyErr_SetString(PyExc_TypeError,
                        "take_sends(items: list, channel, room: int, (takes: dict, table: dict, "
                        "broker, deferred_cls, batcher, processor, perm_write))");
        return NULL;
    }
    PyObject *items = args[0], *channel = args[1], *taker = args[3];
    Py_ssize_t room = PyLong_AsSsize_t(args[2]);
    if (room == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(items);
    if (n == 0 || room <= 0) return PyLong_FromLong(0);
    PyObject *takes = PyTuple_GET_ITEM(taker, 0), *table = PyTuple_GET_ITEM(taker, 1);
    PyObject *cls = PyTuple_GET_ITEM(taker, 3), *batcher = PyTuple_GET_ITEM(taker, 4);
    long perm_write = PyLong_AsLong(PyTuple_GET_ITEM(taker, 6));
    if (perm_write == -1 && PyErr_Occurred()) return declined();
    /* the broker writable: config.broker_permission & PERM_WRITE, read now */
    if (intern_names() < 0) return NULL;
    PyObject *config = PyObject_GetAttr(PyTuple_GET_ITEM(taker, 2), names[N_CONFIG]);
    if (config == NULL) return declined();
    PyObject *perm_obj = PyObject_GetAttr(config, names[N_PERMISSION]);
    Py_DECREF(config);
    if (perm_obj == NULL) return declined();
    long perm = PyLong_AsLong(perm_obj);
    Py_DECREF(perm_obj);
    if (perm == -1 && PyErr_Occurred()) return declined();
    if (!(perm & perm_write)) return PyLong_FromLong(0);
    PyObject *puts = PyObject_GetAttr(batcher, names[N_PUTS]);
    PyObject *dones = puts != NULL ? PyObject_GetAttr(batcher, names[N_DONES]) : NULL;
    if (dones == NULL || !PyList_Check(puts) || !PyList_Check(dones)) {
        Py_XDECREF(puts);
        Py_XDECREF(dones);
        return declined();
    }
    Py_ssize_t taken = 0;
    int failed = 0;
    /* the size read each round and the item held: a DeferredReply class that is called
     * runs Python, which could change the list */
    for (; taken < PyList_GET_SIZE(items) && taken < room; taken++) {
        PyObject *item = PyList_GET_ITEM(items, taken);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 3) break;
        Py_INCREF(item);
        PyObject *put = PyTuple_GET_ITEM(item, 1);
        if (!PyTuple_Check(put) || PyTuple_GET_SIZE(put) < 2) {
            Py_DECREF(item);
            break;
        }
        PyObject *topic = PyTuple_GET_ITEM(put, 0), *queue_id = PyTuple_GET_ITEM(put, 1);
        if (!PyUnicode_CheckExact(topic) || !PyLong_CheckExact(queue_id)) {
            Py_DECREF(item);
            break;
        }
        int ok = topic_takes(takes, table, topic, queue_id);
        if (ok <= 0) {
            Py_DECREF(item);
            failed = ok < 0;
            break;
        }
        PyObject *deferred = new_deferred(cls, channel, PyTuple_GET_ITEM(item, 0));
        if (deferred == NULL) {
            Py_DECREF(item);
            failed = 1;
            break;
        }
        Py_ssize_t queued = PyList_GET_SIZE(puts);
        int rc = PyList_Append(puts, put);
        if (rc == 0) {
            rc = PyList_Append(dones, deferred);
            if (rc < 0) { /* the put without its deferred leaves again: the lists stay paired */
                PyObject *err_type, *err_value, *err_tb;
                PyErr_Fetch(&err_type, &err_value, &err_tb);
                if (PyList_SetSlice(puts, queued, PyList_GET_SIZE(puts), NULL) < 0) PyErr_Clear();
                PyErr_Restore(err_type, err_value, err_tb);
            }
        }
        Py_DECREF(deferred);
        Py_DECREF(item);
        if (rc < 0) {
            failed = 1;
            break;
        }
    }
    Py_DECREF(puts);
    Py_DECREF(dones);
    /* the sends taken so far stay taken (their counts below); the one that failed goes to
     * the Python path, which meets the error again in its own steps and answers it */
    if (failed) PyErr_Clear();
    if (taken) {
        /* the batcher's lane count (a flush of lane sends alone goes the lane's way; one
         * short of it goes the general way, which answers them too) and the processor's
         * counters (tests and benches): the sends are queued whatever these do */
        if (add_to(batcher, names[N_LANE_COUNT], taken) < 0 ||
            add_to(PyTuple_GET_ITEM(taker, 5), names[N_NATIVE_READS], taken) < 0 ||
            add_to(PyTuple_GET_ITEM(taker, 5), names[N_SPLIT_READS], taken) < 0)
            PyErr_Clear();
    }
    return PyLong_FromSsize_t(taken);
}
