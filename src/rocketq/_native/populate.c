/*
 * populate: fault in the pages of a stretch of a shared file mapping ahead of its writer
 * (issue 22), the job RocketMQ's MappedFile.warmMappedFile does by writing a zero byte into
 * every page of a new file (store/logfile/DefaultMappedFile.java, called by
 * AllocateMappedFileService when warmMapedFileEnable is set).
 *
 * Here the kernel does it: madvise(MADV_POPULATE_WRITE) (Linux 5.14) allocates, zeroes and
 * maps the page cache pages of the range writable without changing a byte, so it may run
 * while the writer appends below the range, and a writer that reaches the range finds its
 * pages mapped (no page fault, no memset of a new page under the event loop). A zero store,
 * as warmMappedFile does, would race the append. MADV_POPULATE_READ (write=False) maps them
 * read-only: no page is dirtied, the writer then takes a cheaper write-protect fault.
 *
 * The GIL is released during the call; the caller's buffer stays exported (and so the
 * mapping cannot be closed) until it returns. Returns True when the kernel populated the
 * range, False when it does not know the advice (EINVAL, ENOSYS: a kernel before 5.14, or
 * not Linux): the caller then warms nothing. Other errors raise OSError (ENOMEM, EFAULT: a
 * page past the end of the file, EIO, EHWPOISON).
 */
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

PyObject *populate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "populate(buffer, offset, length, write)");
        return NULL;
    }
    Py_ssize_t offset = PyLong_AsSsize_t(args[1]);
    if (offset == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t length = PyLong_AsSsize_t(args[2]);
    if (length == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int write = PyObject_IsTrue(args[3]);
    if (write < 0) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, write ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (offset < 0 || length < 0 || offset > view.len || length > view.len - offset) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "range %zd+%zd outside a buffer of %zd bytes", offset,
                     length, view.len);
        return NULL;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) {
        page = 4096;
    }
    uintptr_t base = (uintptr_t)view.buf;
    uintptr_t start = base + (uintptr_t)offset;
    uintptr_t end = start + (uintptr_t)length;
    /* whole pages inside the buffer only: a page the buffer shares with memory around it is
       left alone (a mapping's own buffer starts and ends on page boundaries) */
    uintptr_t first = (start + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t last = end & ~((uintptr_t)page - 1);
    if (first < base) {
        first = base;
    }
    int rc = 0, err = 0;
    if (last > first) {
        int advice = write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
        Py_BEGIN_ALLOW_THREADS;
        for (int tries = 0; tries < 8; tries++) {
            rc = madvise((void *)first, (size_t)(last - first), advice);
            err = errno;
            if (rc == 0 || (err != EINTR && err != EAGAIN)) {
                break;
            }
        }
        Py_END_ALLOW_THREADS;
    }
    PyBuffer_Release(&view);
    if (rc == 0) {
        Py_RETURN_TRUE;
    }
    if (err == EINVAL || err == ENOSYS) {
        Py_RETURN_FALSE;
    }
    errno = err;
    return PyErr_SetFromErrno(PyExc_OSError);
}

/*
 * sync_files(fds, last_fd, last_data): fdatasync every fd of ``fds`` in turn, then (when
 * ``last_fd`` >= 0) pwrite ``last_data`` at offset 0 of ``last_fd`` and fdatasync it, all in
 * one stretch with the GIL released (issue 22: the dispatch checkpoint's ~10 syncs a second,
 * each a GIL release and re-acquire against the event loop, made most of the messages sent
 * meanwhile slower than 1 ms). The last write is a commit record: it happens only once every
 * fd before it is synced. The first failure stops the run and raises OSError with its errno
 * (the last write then never happens). The caller keeps the files open until it returns.
 */
PyObject *sync_files(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "sync_files(fds, last_fd, last_data)");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[0], "sync_files: fds must be a sequence");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int *fds = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (fds == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long fd = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if ((fd == -1 && PyErr_Occurred()) || fd < 0 || fd > INT_MAX) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_ValueError, "sync_files: bad fd %ld", fd);
            }
            PyMem_Free(fds);
            Py_DECREF(seq);
            return NULL;
        }
        fds[i] = (int)fd;
    }
    Py_DECREF(seq);
    long last_fd = PyLong_AsLong(args[1]);
    if ((last_fd == -1 && PyErr_Occurred()) || last_fd > INT_MAX) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "sync_files: bad last fd");
        }
        PyMem_Free(fds);
        return NULL;
    }
    Py_buffer data;
    if (PyObject_GetBuffer(args[2], &data, PyBUF_SIMPLE) < 0) {
        PyMem_Free(fds);
        return NULL;
    }
    int err = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < n && err == 0; i++) {
        while (fdatasync(fds[i]) != 0) {
            if (errno != EINTR) {
                err = errno;
                break;
            }
        }
    }
    if (err == 0 && last_fd >= 0) {
        Py_ssize_t done = 0;
        while (done < data.len) {
            ssize_t wrote =
                pwrite((int)last_fd, (const char *)data.buf + done, (size_t)(data.len - done), done);
            if (wrote < 0) {
                if (errno == EINTR) {
                    continue;
                }
                err = errno;
                break;
            }
            done += wrote;
        }
        while (err == 0 && fdatasync((int)last_fd) != 0) {
            if (errno != EINTR) {
                err = errno;
            }
        }
    }
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&data);
    PyMem_Free(fds);
    if (err != 0) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_NONE;
}
