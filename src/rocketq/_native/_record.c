/*
 * rocketq._native._record: the CommitLog record paths in C (issue 13, lever 4).
 *
 * The record layout is rocketq/common/record_layout.py's (RocketMQ's CommitLog); this file
 * repeats its offsets as the R_* constants below. The entry points, each the compiled twin
 * of a pure-Python function that stays the reference (rocketq.common.native_record picks):
 *
 *   encode_record   - message_decoder.encode_message after the host bytes are known
 *   scan_records    - commitlog.check_message_and_return_size over a run of records
 *                     (recovery: validate only, GIL released; reput: DispatchRequests)
 *   decode_records  - message_decoder.decode_messages into MessageExt objects
 *   append_sends    - encode_message and CommitLog._append_locked for a run of sends,
 *                     written in place into the mapped file (append.c)
 *   batch_puts      - a batch send's body read into SendPuts for append_sends (send_batch.c)
 *   batch_msg_ids   - the batch's msgIds joined, from append_sends' slots (send_batch.c)
 *   collect_messages - message_reader.MessageReader._collect: a pull's records copied from
 *                     the mapped files into one body (get_message.c)
 *   pull_reply_head - a pull answer's frame head (pull_answer.py's reference; get_message.c)
 *   pull_columns    - spark/topic/pull_body's numpy columns of a pull body (columns.c)
 *   dispatch_runs, cq_units, index_puts - MessageStore.dispatch_batch's consume queue units
 *                     and index entries over a run of DispatchRequests (dispatch.c)
 *   dispatch_direct - a dispatch run's units and index keys straight from the commitlog's
 *                     bytes, no DispatchRequest, and (while a pull is held) each record's
 *                     arrival for the listener (reput_run.c)
 *   populate        - the pages of a mapping faulted in ahead of its writer (populate.c)
 *   sync_files      - a checkpoint's fdatasyncs and its commit record in one call (populate.c)
 *
 * Every length read from a record is checked against the buffer before it is used: a
 * corrupted TOTALSIZE, BODYLENGTH, TOPICLEN or PROPLEN stops the walk, it never reads past
 * the end. Where a record cannot be handled here (corrupt, compressed, bad UTF-8), the walk
 * stops at it and says so; the Python caller then asks the pure-Python code about that one
 * record, so error messages and edge cases come from one place.
 *
 * CRC32 is zlib's (reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF), the
 * fastest of three ways found at import: carry-less multiplication folding on x86-64 CPUs
 * with PCLMULQDQ (about 2x zlib's own crc32 here), else the crc32 of the libz.so.1 that
 * CPython's zlib module loads (dlopen), else slicing-by-8 tables. Nothing is linked at build
 * time beyond CPython: no zlib headers needed. CRC32_IMPL says which one runs.
 *
 * The parts: record.h (the layout and what the parts share), crc32.c, properties.c,
 * encode.c, append.c, scan.c, decode.c, get_message.c, columns.c, dispatch.c and populate.c; this file holds the
 * module table and its init.
 */
#include "record.h"

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"crc32", py_crc32, METH_O, "zlib.crc32 of a buffer, as the scans compute it."},
    {"crc32_table", py_crc32_table, METH_O, "zlib.crc32 of a buffer by the module's own tables."},
    {"crc32_libz", py_crc32_libz, METH_O, "zlib.crc32 of a buffer by libz.so.1's crc32."},
    {"encode_record", (PyCFunction)(void (*)(void))encode_record, METH_FASTCALL,
     "A commitlog record from a message's fields (message_decoder.encode_message)."},
    {"encode_message_ext", (PyCFunction)(void (*)(void))encode_message_ext, METH_FASTCALL,
     "encode_message in one call: a MessageExt's fields read in C."},
    {"write_record", (PyCFunction)(void (*)(void))write_record, METH_FASTCALL,
     "Copy a record into a mapped file and patch its offsets and store time there."},
    {"append_sends", (PyCFunction)(void (*)(void))append_sends, METH_FASTCALL,
     "Encode a flush's pass-through sends straight into a mapped file (CommitLog)."},
    {"batch_puts", (PyCFunction)(void (*)(void))batch_puts, METH_FASTCALL,
     "A batch send's body read into the SendPuts of its messages (send_batch.c)."},
    {"batch_msg_ids", (PyCFunction)(void (*)(void))batch_msg_ids, METH_FASTCALL,
     "A batch's msgIds joined by commas from append_sends' slots (send_batch.c)."},
    {"scan_records", (PyCFunction)(void (*)(void))scan_records, METH_FASTCALL,
     "Check a run of commitlog records; DispatchRequests or validate only."},
    {"record_starts", record_starts, METH_O,
     "Where each whole record of a pull body starts (int64s) and where the last ends."},
    {"pull_columns", pull_columns, METH_O,
     "The records of a pull body as Arrow column buffers (spark/topic/pull_body.py)."},
    {"decode_records", (PyCFunction)(void (*)(void))decode_records, METH_FASTCALL,
     "MessageExt objects of back-to-back records (a pull body)."},
    {"collect_messages", (PyCFunction)(void (*)(void))collect_messages, METH_FASTCALL,
     "DefaultMessageStore#getMessage's unit walk: the pull's records as one body."},
    {"pull_reply_head", (PyCFunction)(void (*)(void))pull_reply_head, METH_FASTCALL,
     "A pull answer's frame head from the reference's header pieces and its numbers."},
    {"dispatch_runs", dispatch_runs, METH_O,
     "The requests with a consume queue unit, by (topic, queue_id) (dispatch.c)."},
    {"cq_units", (PyCFunction)(void (*)(void))cq_units, METH_FASTCALL,
     "Write the consume queue units of a stretch of one queue's requests (dispatch.c)."},
    {"index_puts", (PyCFunction)(void (*)(void))index_puts, METH_FASTCALL,
     "IndexService.build_index over a run of requests into one index file (dispatch.c)."},
    {"dispatch_direct", (PyCFunction)(void (*)(void))dispatch_direct, METH_FASTCALL,
     "A dispatch run's units and index keys straight from commitlog bytes (reput_run.c)."},
    {"populate", (PyCFunction)(void (*)(void))populate, METH_FASTCALL,
     "madvise(MADV_POPULATE_WRITE or _READ) over whole pages of a buffer, GIL released."},
    {"sync_files", (PyCFunction)(void (*)(void))sync_files, METH_FASTCALL,
     "fdatasync each fd, then pwrite and fdatasync a commit record, GIL released once."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rocketq._native._record",
    "The CommitLog record paths in C; rocketq.common.native_record selects them.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__record(void) {
    if (crc32_setup() < 0 || properties_setup() < 0 || encode_setup() < 0 ||
        dispatch_setup() < 0 || reput_run_setup() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "ST_END", ST_END) < 0 ||
        PyModule_AddIntConstant(m, "ST_BLANK", ST_BLANK) < 0 ||
        PyModule_AddIntConstant(m, "ST_BAD", ST_BAD) < 0 ||
        PyModule_AddIntConstant(m, "ST_INCOMPLETE", ST_INCOMPLETE) < 0 ||
        PyModule_AddIntConstant(m, "GM_NO_MATCHED_MESSAGE", 0) < 0 ||
        PyModule_AddIntConstant(m, "GM_FOUND", 1) < 0 ||
        PyModule_AddIntConstant(m, "GM_MESSAGE_WAS_REMOVING", 2) < 0 ||
        PyModule_AddIntConstant(m, "GM_OFFSET_FOUND_NULL", 3) < 0 ||
        PyModule_AddStringConstant(m, "CRC32_IMPL",
                                   crc32_impl()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
