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
