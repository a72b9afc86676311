/*
 * The collectors' optional C speedups. Each function has a pure-Python reference that the
 * collectors use when this extension is not built, and the tests compare the two.
 *
 * records(): decoded OTLP/JSON structs -> span records.
 * step_attributes(): the attributes a step keeps (``_step_attributes``, normalize/_build.py).
 * construct(): a trace-model object from all its field values (``cls(*values)``).
 * evidence(): decoded ``groundtrace.evidence`` items -> Evidence (``_typed_evidence``).
 * structure(): ``check_structure`` (normalize/_structure.py) for a trace it has nothing to say
   about; any finding sends the trace to the Python check.
 * untrack(), retrack(): the grouping window's spans are left out of the cyclic collector's
   passes while it holds them (no Python reference: without them the collector walks them).
 * The pure-Python reference is ``_records`` in ``readers/_otlp_structs.py``; this does the
 * same walk in C. msgspec has already decoded (and type-checked) the line into its structs;
 * here their slots are read at the offsets of their member descriptors, and the records are
 * filled the same way (SpanRecord, SpanStatus and SpanEvent are slotted dataclasses whose
 * generated ``__init__`` only stores each field).
 *
 * ``records`` returns the list of records, or ``None`` where the Python walk would raise
 * one of its "not for this path" exceptions (the caller then reads the line with the dict
 * decoders, which alone word the errors). It may also return ``None`` where the Python walk
 * would read the line (an id with whitespace, an array nested deeper than MAX_DEPTH): the
 * dict path reads those lines exactly as the Python walk does. Only MemoryError propagates.
 *
 * Attribute keys, span and event names and short string values are shared: one object per
 * distinct text (``share``), as ``json.loads`` does for the keys of an object. The texts
 * repeat from span to span, and the spans a reader holds while it groups them into traces
 * are then much smaller. Only identity differs from the Python walk, never a value.
 *
 * The layouts (types and field names) come from Python through ``setup``: nothing here
 * repeats a field name, and every object is type-checked before a slot is read.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>

#define MAX_DEPTH 64
#define MAX_FIELDS 14

/* Struct kinds, in the order ``setup`` receives their layouts. */
enum {
    L_REQUEST,
    L_RESOURCE_SPANS,
    L_RESOURCE,
    L_SCOPE_SPANS,
    L_SCOPE,
    L_SPAN,
    L_STATUS,
    L_EVENT,
    L_KEY_VALUE,
    L_VALUE,
    L_ARRAY,
    L_SPAN_RECORD,
    L_SPAN_STATUS,
    L_SPAN_EVENT,
    N_LAYOUTS
};

/* Field counts each layout must have, in the order of the Python field tuples. */
static const Py_ssize_t FIELD_COUNTS[N_LAYOUTS] = {1, 2, 1, 2, 2, 10, 2, 3, 2, 7, 1, 14, 2, 3};

/* Field positions (must match the tuples passed by ``_otlp_structs.py``). */
enum { REQUEST_RESOURCE_SPANS };
enum { RS_RESOURCE, RS_SCOPE_SPANS };
enum { RESOURCE_ATTRIBUTES };
enum { SS_SCOPE, SS_SPANS };
enum { SCOPE_NAME, SCOPE_VERSION };
enum {
    SPAN_TRACE_ID,
    SPAN_SPAN_ID,
    SPAN_PARENT,
    SPAN_NAME,
    SPAN_KIND,
    SPAN_START,
    SPAN_END,
    SPAN_ATTRIBUTES,
    SPAN_EVENTS,
    SPAN_STATUS
};
enum { STATUS_CODE, STATUS_MESSAGE };
enum { RECORD_ATTRIBUTES = 6, RECORD_EVENTS = 8 }; /* in SpanRecord's field order */
enum { EVENT_RECORD_ATTRIBUTES = 2 };              /* in SpanEvent's field order */
enum { EVENT_NAME, EVENT_TIME, EVENT_ATTRIBUTES };
enum { KV_KEY, KV_VALUE };
enum { V_STRING, V_INT, V_DOUBLE, V_BOOL, V_ARRAY, V_KVLIST, V_BYTES };
enum { ARRAY_VALUES };

typedef struct {
    PyTypeObject *type;
    Py_ssize_t offsets[MAX_FIELDS];
} Layout;

static Layout layouts[N_LAYOUTS];
static int ready = 0;
static PyObject *unset = NULL;          /* msgspec.UNSET */
static PyObject *span_kinds = NULL;     /* tuple of kind names */
static PyObject *status_codes = NULL;   /* tuple of status code names */
static PyObject *status_by_code = NULL; /* tuple of shared SpanStatus(code, "") */
static PyObject *shared = NULL;         /* str -> the same str: the shared texts */

#define MAX_SHARED 8192      /* entries; the table is emptied when full, so it stays bounded */
#define MAX_SHARED_KEY 128   /* longest attribute key or name shared */
#define MAX_SHARED_VALUE 32  /* longest string value shared (enum-like values, ids, versions) */

/* A new reference to the shared object equal to ``text``: ``text`` itself the first time,
 * or when it is longer than ``max_length``. NULL only on MemoryError. */
static PyObject *
share(PyObject *text, Py_ssize_t max_length)
{
    if (!PyUnicode_CheckExact(text) || PyUnicode_GET_LENGTH(text) > max_length) {
        return Py_NewRef(text);
    }
    if (PyDict_GET_SIZE(shared) >= MAX_SHARED) {
        PyDict_Clear(shared);
    }
    return Py_XNewRef(PyDict_SetDefault(shared, text, text));
}

/* Borrowed slot ``field`` of ``obj``, which must be exactly of layout ``kind`` (NULL: no). */
static inline PyObject *
slot(PyObject *obj, int kind, int field)
{
    if (!Py_IS_TYPE(obj, layouts[kind].type)) {
        return NULL;
    }
    return *(PyObject **)((char *)obj + layouts[kind].offsets[field]);
}

/* A new instance of a slotted output class, its slots filled (steals every value). */
static PyObject *
fill(int kind, PyObject **values)
{
    PyTypeObject *type = layouts[kind].type;
    Py_ssize_t n = FIELD_COUNTS[kind];
    PyObject *obj = type->tp_alloc(type, 0);
    if (obj == NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_XDECREF(values[i]);
        }
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        *(PyObject **)((char *)obj + layouts[kind].offsets[i]) = values[i];
    }
    return obj;
}

static PyObject *any_value(PyObject *value, int depth);

/* A new list of ``convert(item, depth)`` for each item of ``list``; NULL: decline or error. */
static PyObject *
map_list(PyObject *list, PyObject *(*convert)(PyObject *, int), int depth)
{
    if (!PyList_CheckExact(list)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *converted = convert(PyList_GET_ITEM(list, i), depth);
        if (converted == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, converted);
    }
    return out;
}

/* An item of an ``arrayValue``'s list: ``null`` stays ``None``. */
static PyObject *
array_item(PyObject *item, int depth)
{
    return item == Py_None ? Py_NewRef(Py_None) : any_value(item, depth);
}

/* The list of an ``arrayValue``; NULL: decline or error. */
static PyObject *
array_value(PyObject *array, int depth)
{
    PyObject *values = slot(array, L_ARRAY, ARRAY_VALUES);
    return values == NULL ? NULL : map_list(values, array_item, depth + 1);
}

/* The Python value of an ``AnyValue`` (``_value`` in ``_otlp_structs.py``). */
static PyObject *
any_value(PyObject *value, int depth)
{
    if (depth > MAX_DEPTH || !Py_IS_TYPE(value, layouts[L_VALUE].type)) {
        return NULL;
    }
    PyObject *text = slot(value, L_VALUE, V_STRING);
    PyObject *integer = slot(value, L_VALUE, V_INT);
    PyObject *number = slot(value, L_VALUE, V_DOUBLE);
    PyObject *flag = slot(value, L_VALUE, V_BOOL);
    PyObject *array = slot(value, L_VALUE, V_ARRAY);
    PyObject *kvlist = slot(value, L_VALUE, V_KVLIST);
    PyObject *bytes = slot(value, L_VALUE, V_BYTES);
    if (!text || !integer || !number || !flag || !array || !kvlist || !bytes) {
        return NULL;
    }
    if (kvlist != unset || bytes != unset) {
        return NULL;
    }
    if (integer != unset) {
        if (text == unset && number == unset && flag == unset && array == unset) {
            return PyNumber_Long(integer); /* ValueError: not a decimal integer */
        }
    }
    else if (number != unset) {
        if (text == unset && flag == unset && array == unset) {
            return PyNumber_Float(number);
        }
    }
    else if (text != unset) {
        if (flag == unset && array == unset) {
            return share(text, MAX_SHARED_VALUE);
        }
    }
    else if (array != unset) {
        if (flag == unset) {
            return array_value(array, depth);
        }
    }
    else if (flag != unset) {
        return Py_NewRef(flag);
    }
    else {
        Py_RETURN_NONE;
    }
    return NULL; /* two kinds: key order decides, which only the dict path sees */
}

/* Attributes dict of a list of key-value structs (``_attributes``). */
static PyObject *
attributes(PyObject *items)
{
    if (!PyList_CheckExact(items)) {
        return NULL;
    }
    PyObject *out = PyDict_New();
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        PyObject *key = slot(item, L_KEY_VALUE, KV_KEY);
        PyObject *value = slot(item, L_KEY_VALUE, KV_VALUE);
        if (key == NULL || value == NULL) {
            goto fail;
        }
        PyObject *converted;
        if (value == Py_None) {
            converted = Py_NewRef(Py_None);
        }
        else {
            PyObject *text = slot(value, L_VALUE, V_STRING);
            if (text == NULL) {
                goto fail;
            }
            converted = text != unset ? share(text, MAX_SHARED_VALUE) : any_value(value, 0);
            if (converted == NULL) {
                goto fail;
            }
        }
        PyObject *shared_key = share(key, MAX_SHARED_KEY);
        if (shared_key == NULL) {
            Py_DECREF(converted);
            goto fail;
        }
        int rc = PyDict_SetItem(out, shared_key, converted);
        Py_DECREF(shared_key);
        Py_DECREF(converted);
        if (rc < 0) {
            goto fail;
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static inline int
is_hex(Py_UCS4 c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A canonical hex id, validated once per request (``canonical_id``); NULL: decline. */
static PyObject *
canonical_id(PyObject *value, Py_ssize_t size, PyObject *cache)
{
    if (!PyUnicode_CheckExact(value) || PyUnicode_GET_LENGTH(value) != size) {
        return NULL;
    }
    PyObject *known = PyDict_GetItemWithError(cache, value);
    if (known != NULL) {
        return Py_NewRef(known);
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    int kind = PyUnicode_KIND(value);
    const void *data = PyUnicode_DATA(value);
    int upper = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (!is_hex(c)) {
            return NULL; /* e.g. whitespace: the dict path decides */
        }
        upper |= (c >= 'A' && c <= 'F');
    }
    known = upper ? PyObject_CallMethod(value, "lower", NULL) : Py_NewRef(value);
    if (known == NULL) {
        return NULL;
    }
    if (PyDict_SetItem(cache, value, known) < 0) {
        Py_DECREF(known);
        return NULL;
    }
    return known;
}

/* Unix nanoseconds from a decimal string or an int (``_nanos``). */
static PyObject *
nanos(PyObject *value)
{
    if (PyLong_CheckExact(value)) {
        return Py_NewRef(value);
    }
    if (PyUnicode_CheckExact(value)) {
        return PyLong_FromUnicodeObject(value, 10);
    }
    return NULL;
}

/* Index ``value`` (an int) into ``table``; NULL when out of range or not an int. */
static PyObject *
lookup(PyObject *table, PyObject *value)
{
    if (!PyLong_CheckExact(value)) {
        return NULL;
    }
    int overflow = 0;
    long index = PyLong_AsLongAndOverflow(value, &overflow);
    if (overflow || index < 0 || index >= PyTuple_GET_SIZE(table)) {
        return NULL; /* an error from the conversion, if any, stays set */
    }
    return PyTuple_GET_ITEM(table, index);
}

static PyObject *
status_record(PyObject *status)
{
    if (status == Py_None) {
        return Py_NewRef(PyTuple_GET_ITEM(status_by_code, 0));
    }
    PyObject *code = slot(status, L_STATUS, STATUS_CODE);
    PyObject *message = slot(status, L_STATUS, STATUS_MESSAGE);
    if (code == NULL || message == NULL || !PyUnicode_CheckExact(message)) {
        return NULL;
    }
    PyObject *name = lookup(status_codes, code);
    if (name == NULL) {
        return NULL;
    }
    if (PyUnicode_GET_LENGTH(message) == 0) {
        return Py_NewRef(lookup(status_by_code, code));
    }
    PyObject *values[2] = {Py_NewRef(name), Py_NewRef(message)};
    return fill(L_SPAN_STATUS, values);
}

/* One span event (``depth`` is unused: events do not nest). */
static PyObject *
event_record(PyObject *event, int depth)
{
    PyObject *name = slot(event, L_EVENT, EVENT_NAME);
    PyObject *time = slot(event, L_EVENT, EVENT_TIME);
    PyObject *attrs = slot(event, L_EVENT, EVENT_ATTRIBUTES);
    if (name == NULL || time == NULL || attrs == NULL) {
        return NULL;
    }
    PyObject *values[3] = {share(name, MAX_SHARED_KEY), nanos(time), attributes(attrs)};
    if (values[0] == NULL || values[1] == NULL || values[2] == NULL) {
        Py_XDECREF(values[0]);
        Py_XDECREF(values[1]);
        Py_XDECREF(values[2]);
        return NULL;
    }
    return fill(L_SPAN_EVENT, values);
}

/* One span record; ``resource``, ``scope_name``, ``scope_version``, ``location`` borrowed. */
static PyObject *
span_record(PyObject *span, PyObject *resource, PyObject *scope_name, PyObject *scope_version,
            PyObject *location, PyObject *ids)
{
    PyObject *raw[10];
    for (int i = 0; i < 10; i++) {
        raw[i] = slot(span, L_SPAN, i);
        if (raw[i] == NULL) {
            return NULL;
        }
    }
    if (!PyUnicode_CheckExact(raw[SPAN_PARENT]) || !PyUnicode_CheckExact(raw[SPAN_NAME])) {
        return NULL;
    }
    PyObject *kind_name;
    if (raw[SPAN_KIND] == unset) {
        kind_name = PyTuple_GET_ITEM(span_kinds, 0);
    }
    else if ((kind_name = lookup(span_kinds, raw[SPAN_KIND])) == NULL) {
        return NULL;
    }
    PyObject *values[MAX_FIELDS] = {NULL};
    values[0] = canonical_id(raw[SPAN_TRACE_ID], 32, ids);
    values[1] = values[0] ? canonical_id(raw[SPAN_SPAN_ID], 16, ids) : NULL;
    if (values[1] == NULL) {
        goto fail;
    }
    values[2] = PyUnicode_GET_LENGTH(raw[SPAN_PARENT]) == 0
                    ? Py_NewRef(Py_None)
                    : canonical_id(raw[SPAN_PARENT], 16, ids);
    if (values[2] == NULL) {
        goto fail;
    }
    if ((values[3] = share(raw[SPAN_NAME], MAX_SHARED_KEY)) == NULL ||
        (values[4] = nanos(raw[SPAN_START])) == NULL ||
        (values[5] = nanos(raw[SPAN_END])) == NULL ||
        (values[RECORD_ATTRIBUTES] = attributes(raw[SPAN_ATTRIBUTES])) == NULL ||
        (values[7] = status_record(raw[SPAN_STATUS])) == NULL) {
        goto fail;
    }
    PyObject *event_list = raw[SPAN_EVENTS];
    if (!PyList_CheckExact(event_list)) {
        goto fail;
    }
    values[RECORD_EVENTS] =
        PyList_GET_SIZE(event_list) ? map_list(event_list, event_record, 0) : PyList_New(0);
    if (values[RECORD_EVENTS] == NULL) {
        goto fail;
    }
    values[9] = Py_NewRef(kind_name);
    values[10] = Py_NewRef(resource);
    values[11] = Py_NewRef(scope_name);
    values[12] = Py_NewRef(scope_version);
    values[13] = Py_NewRef(location);
    return fill(L_SPAN_RECORD, values);
fail:
    for (int i = 0; i < MAX_FIELDS; i++) {
        Py_XDECREF(values[i]);
    }
    return NULL;
}

static int
scope_spans(PyObject *item, PyObject *resource, PyObject *location, PyObject *ids, PyObject *out,
            PyObject *empty)
{
    PyObject *scope = slot(item, L_SCOPE_SPANS, SS_SCOPE);
    PyObject *spans = slot(item, L_SCOPE_SPANS, SS_SPANS);
    if (scope == NULL || spans == NULL || !PyList_CheckExact(spans)) {
        return -1;
    }
    PyObject *name = empty, *version = empty;
    if (scope != Py_None) {
        name = slot(scope, L_SCOPE, SCOPE_NAME);
        version = slot(scope, L_SCOPE, SCOPE_VERSION);
        if (name == NULL || version == NULL) {
            return -1;
        }
    }
    Py_ssize_t n = PyList_GET_SIZE(spans);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *record =
            span_record(PyList_GET_ITEM(spans, i), resource, name, version, location, ids);
        if (record == NULL) {
            return -1;
        }
        int rc = PyList_Append(out, record);
        Py_DECREF(record);
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *
walk(PyObject *request, PyObject *location, PyObject *ids, PyObject *empty)
{
    PyObject *all = slot(request, L_REQUEST, REQUEST_RESOURCE_SPANS);
    if (all == NULL || !PyList_CheckExact(all)) {
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(all);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(all, i);
        PyObject *resource_obj = slot(item, L_RESOURCE_SPANS, RS_RESOURCE);
        PyObject *scopes = slot(item, L_RESOURCE_SPANS, RS_SCOPE_SPANS);
        if (resource_obj == NULL || scopes == NULL || !PyList_CheckExact(scopes)) {
            goto fail;
        }
        PyObject *resource;
        if (resource_obj == Py_None) {
            resource = PyDict_New();
        }
        else {
            PyObject *attrs = slot(resource_obj, L_RESOURCE, RESOURCE_ATTRIBUTES);
            resource = attrs == NULL ? NULL : attributes(attrs);
        }
        if (resource == NULL) {
            goto fail;
        }
        Py_ssize_t m = PyList_GET_SIZE(scopes);
        for (Py_ssize_t j = 0; j < m; j++) {
            if (scope_spans(PyList_GET_ITEM(scopes, j), resource, location, ids, out, empty) < 0) {
                Py_DECREF(resource);
                goto fail;
            }
        }
        Py_DECREF(resource);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

PyDoc_STRVAR(records_doc,
             "records(request, location)\n--\n\n"
             "The span records of a decoded request, or None: read the line with the dict "
             "path.");

static PyObject *
records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "setup() has not been called");
        return NULL;
    }
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "records() takes exactly 2 arguments");
        return NULL;
    }
    PyObject *ids = PyDict_New();
    PyObject *empty = PyUnicode_New(0, 0);
    if (ids == NULL || empty == NULL) {
        Py_XDECREF(ids);
        Py_XDECREF(empty);
        return NULL;
    }
    PyObject *out = walk(args[0], args[1], ids, empty);
    Py_DECREF(ids);
    Py_DECREF(empty);
    if (out != NULL) {
        return out;
    }
    if (PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) {
            return NULL;
        }
        PyErr_Clear();
    }
    Py_RETURN_NONE;
}

/* ---- step_attributes(): ``_step_attributes`` in ``normalize/_build.py`` ------------------- */

#define MAX_STEP_STRING 256
#define MAX_STEP_LIST 32

/* At most 32 items, each a number, a boolean or a string of at most 256 characters. */
static int
small_list(PyObject *list)
{
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n > MAX_STEP_LIST) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(list, i);
        if (PyUnicode_Check(x)) {
            if (PyUnicode_GET_LENGTH(x) > MAX_STEP_STRING) {
                return 0;
            }
        }
        else if (!PyLong_Check(x) && !PyFloat_Check(x)) { /* bool is an int */
            return 0;
        }
    }
    return 1;
}

PyDoc_STRVAR(step_attributes_doc,
             "step_attributes(attrs)\n--\n\n"
             "A new dict of the scalars, strings of at most 256 characters and short lists of "
             "them in attrs, in attrs' order (None values are left out).");

static PyObject *
step_attributes(PyObject *module, PyObject *attrs)
{
    if (!PyDict_Check(attrs)) {
        PyErr_SetString(PyExc_TypeError, "step_attributes() takes a dict");
        return NULL;
    }
    PyObject *out = PyDict_New();
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        int keep;
        if (PyUnicode_CheckExact(value)) {
            keep = PyUnicode_GET_LENGTH(value) <= MAX_STEP_STRING;
        }
        else if (value == Py_None) {
            keep = 0;
        }
        else if (PyList_Check(value)) {
            keep = small_list(value);
        }
        else {
            keep = 1;
        }
        if (keep && PyDict_SetItem(out, key, value) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

/* ---- untrack(), retrack(): spans held by the grouping window -------------------------------
 *
 * The grouping window holds thousands of records, and every pass of the cyclic garbage
 * collector walked them: about a tenth of the time of building traces. A record made by the
 * readers holds no reference cycle, and while the window holds it nothing else refers to it,
 * so the collector can only find it alive. ``untrack`` leaves a held record out of its passes
 * (the record, its attributes dict and the lists in it, its events); ``retrack`` puts it back
 * before the record is handed on. Tracking an object again is always safe; only objects the
 * caller owns are untracked (``owned`` in normalize/_stream.py). */

static void
set_tracked(PyObject *obj, int on)
{
    if (on) {
        if (!PyObject_GC_IsTracked(obj)) {
            PyObject_GC_Track(obj);
        }
    }
    else if (PyObject_GC_IsTracked(obj)) {
        PyObject_GC_UnTrack(obj);
    }
}

/* A list value and the lists nested in it (other values are not containers we made). */
static void
set_tracked_value(PyObject *value, int on, int depth)
{
    if (!PyList_CheckExact(value) || depth > MAX_DEPTH) {
        return;
    }
    set_tracked(value, on);
    Py_ssize_t n = PyList_GET_SIZE(value);
    for (Py_ssize_t i = 0; i < n; i++) {
        set_tracked_value(PyList_GET_ITEM(value, i), on, depth + 1);
    }
}

static void
set_tracked_attributes(PyObject *attrs, int on)
{
    if (!PyDict_CheckExact(attrs)) {
        return;
    }
    set_tracked(attrs, on);
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        set_tracked_value(value, on, 0);
    }
}

/* The record, its attributes and its events (not the resource: the spans of a line share it). */
static void
set_tracked_record(PyObject *record, int on)
{
    PyObject *attrs = slot(record, L_SPAN_RECORD, RECORD_ATTRIBUTES);
    PyObject *events = slot(record, L_SPAN_RECORD, RECORD_EVENTS);
    if (attrs == NULL || events == NULL || !PyList_CheckExact(events)) {
        return;
    }
    set_tracked(record, on);
    set_tracked_attributes(attrs, on);
    set_tracked(events, on);
    Py_ssize_t n = PyList_GET_SIZE(events);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *event = PyList_GET_ITEM(events, i);
        PyObject *event_attrs = slot(event, L_SPAN_EVENT, EVENT_RECORD_ATTRIBUTES);
        if (event_attrs != NULL) {
            set_tracked(event, on);
            set_tracked_attributes(event_attrs, on);
        }
    }
}

PyDoc_STRVAR(untrack_doc,
             "untrack(record)\n--\n\n"
             "Leave a span record the caller owns out of the cyclic collector's passes "
             "(anything but a SpanRecord is left as it is).");

static PyObject *
untrack(PyObject *module, PyObject *record)
{
    if (ready) {
        set_tracked_record(record, 0);
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(retrack_doc,
             "retrack(records)\n--\n\n"
             "Undo untrack() for each record of a list.");

static PyObject *
retrack(PyObject *module, PyObject *records)
{
    if (!PyList_CheckExact(records)) {
        PyErr_SetString(PyExc_TypeError, "retrack() takes a list");
        return NULL;
    }
    if (ready) {
        Py_ssize_t n = PyList_GET_SIZE(records);
        for (Py_ssize_t i = 0; i < n; i++) {
            set_tracked_record(PyList_GET_ITEM(records, i), 1);
        }
    }
    Py_RETURN_NONE;
}

/* ---- construct(): a model object from every field value, in field order ------------------ */

#define MAX_MODELS 32
#define MAX_MODEL_FIELDS 24

typedef struct {
    PyTypeObject *type;
    Py_ssize_t count;
    Py_ssize_t offsets[MAX_MODEL_FIELDS];
} Model;

static Model models[MAX_MODELS];
static int n_models = 0;

static Py_ssize_t member_offset(PyTypeObject *type, PyObject *name);

PyDoc_STRVAR(register_model_doc,
             "register_model(cls, field_names)\n--\n\n"
             "Let construct() fill instances of cls (a slotted dataclass whose __init__ only "
             "stores its fields) directly.");

static PyObject *
register_model(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyType_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "register_model(cls, field_names: tuple)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0];
    PyObject *names = args[1];
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    if (count > MAX_MODEL_FIELDS) {
        PyErr_Format(PyExc_ValueError, "%s has more than %d fields", type->tp_name,
                     MAX_MODEL_FIELDS);
        return NULL;
    }
    Model model = {type, count, {0}};
    for (Py_ssize_t i = 0; i < count; i++) {
        model.offsets[i] = member_offset(type, PyTuple_GET_ITEM(names, i));
        if (model.offsets[i] < 0) {
            return NULL;
        }
    }
    for (int k = 0; k < n_models; k++) {
        if (models[k].type == type) {
            models[k] = model; /* re-registered: the layout is the class's, replace it */
            Py_RETURN_NONE;
        }
    }
    if (n_models == MAX_MODELS) {
        PyErr_Format(PyExc_ValueError, "more than %d model classes", MAX_MODELS);
        return NULL;
    }
    Py_INCREF(type);
    models[n_models++] = model;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(construct_doc,
             "construct(cls, *values)\n--\n\n"
             "cls(*values): filled directly when cls is registered and values gives every "
             "field, else by calling cls.");

static PyObject *
construct(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "construct() needs a class");
        return NULL;
    }
    PyObject *cls = args[0];
    for (int k = 0; k < n_models; k++) {
        Model *model = &models[k];
        if ((PyObject *)model->type != cls) {
            continue;
        }
        if (nargs - 1 != model->count) {
            break;
        }
        PyObject *obj = model->type->tp_alloc(model->type, 0);
        if (obj == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < model->count; i++) {
            *(PyObject **)((char *)obj + model->offsets[i]) = Py_NewRef(args[i + 1]);
        }
        return obj;
    }
    return PyObject_Vectorcall(cls, args + 1, nargs - 1, NULL);
}

/* ---- evidence(): decoded ``groundtrace.evidence`` items -> Evidence objects ----------------- */

enum {
    ITEM_ID,
    ITEM_RANK,
    ITEM_SCORE,
    ITEM_TITLE,
    ITEM_SOURCE,
    ITEM_VERSION,
    ITEM_CONTENT,
    ITEM_CONTENT_HASH,
    ITEM_LENGTH,
    ITEM_METADATA,
    N_ITEM_FIELDS
};
#define N_EVIDENCE_FIELDS 12

static PyTypeObject *item_type = NULL;
static Py_ssize_t item_offsets[N_ITEM_FIELDS];
static PyTypeObject *evidence_type = NULL;

static Model *find_model(PyTypeObject *type);

PyDoc_STRVAR(setup_evidence_doc,
             "setup_evidence(item_cls, item_fields, evidence_cls)\n--\n\n"
             "Register the decoded item struct (its 10 fields in the order of _typed_evidence) "
             "and the Evidence model class (registered with register_model).");

static PyObject *
setup_evidence(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyType_Check(args[0]) || !PyTuple_Check(args[1]) ||
        PyTuple_GET_SIZE(args[1]) != N_ITEM_FIELDS || !PyType_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "setup_evidence(item_cls, 10 field names, evidence_cls)");
        return NULL;
    }
    Model *model = find_model((PyTypeObject *)args[2]);
    if (model == NULL || model->count != N_EVIDENCE_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "the evidence class is not a registered 12-field model");
        return NULL;
    }
    Py_ssize_t offsets[N_ITEM_FIELDS];
    for (int i = 0; i < N_ITEM_FIELDS; i++) {
        offsets[i] = member_offset((PyTypeObject *)args[0], PyTuple_GET_ITEM(args[1], i));
        if (offsets[i] < 0) {
            return NULL;
        }
    }
    memcpy(item_offsets, offsets, sizeof(offsets));
    Py_XSETREF(item_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_XSETREF(evidence_type, (PyTypeObject *)Py_NewRef(args[2]));
    Py_RETURN_NONE;
}

PyDoc_STRVAR(evidence_doc,
             "evidence(items, span_id, stage)\n--\n\n"
             "Evidence objects of decoded items, or None: convert them in Python (a score that "
             "is not a finite float, or anything unexpected).");

static PyObject *
evidence(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "evidence() takes exactly 3 arguments");
        return NULL;
    }
    PyObject *items = args[0], *span_id = args[1], *stage = args[2];
    Model *model = evidence_type == NULL ? NULL : find_model(evidence_type);
    if (model == NULL || !PyList_CheckExact(items)) {
        Py_RETURN_NONE;
    }
    Py_ssize_t n = PyList_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < n; i++) { /* every score first: one bad item declines all */
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!Py_IS_TYPE(item, item_type)) {
            Py_RETURN_NONE;
        }
        PyObject *score = *(PyObject **)((char *)item + item_offsets[ITEM_SCORE]);
        if (score == NULL || (score != Py_None && !(PyFloat_CheckExact(score) &&
                                                    isfinite(PyFloat_AS_DOUBLE(score))))) {
            Py_RETURN_NONE;
        }
        for (int f = 0; f < N_ITEM_FIELDS; f++) {
            if (*(PyObject **)((char *)item + item_offsets[f]) == NULL) {
                Py_RETURN_NONE;
            }
        }
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
#define ITEM(f) (*(PyObject **)((char *)item + item_offsets[f]))
        PyObject *rank = ITEM(ITEM_RANK);
        PyObject *metadata = ITEM(ITEM_METADATA);
        PyObject *values[N_EVIDENCE_FIELDS] = {
            Py_NewRef(ITEM(ITEM_ID)),
            Py_NewRef(span_id),
            Py_NewRef(stage),
            rank == Py_None ? PyLong_FromSsize_t(i + 1) : Py_NewRef(rank),
            Py_NewRef(ITEM(ITEM_SCORE)),
            Py_NewRef(ITEM(ITEM_TITLE)),
            Py_NewRef(ITEM(ITEM_SOURCE)),
            Py_NewRef(ITEM(ITEM_VERSION)),
            Py_NewRef(ITEM(ITEM_CONTENT)),
            Py_NewRef(ITEM(ITEM_CONTENT_HASH)),
            Py_NewRef(ITEM(ITEM_LENGTH)),
            PyObject_IsTrue(metadata) == 1 ? Py_NewRef(metadata) : PyDict_New(),
        };
#undef ITEM
        if (values[3] == NULL || values[11] == NULL) {
            for (int f = 0; f < N_EVIDENCE_FIELDS; f++) {
                Py_XDECREF(values[f]);
            }
            Py_DECREF(out);
            return NULL;
        }
        PyObject *obj = model->type->tp_alloc(model->type, 0);
        if (obj == NULL) {
            for (int f = 0; f < N_EVIDENCE_FIELDS; f++) {
                Py_DECREF(values[f]);
            }
            Py_DECREF(out);
            return NULL;
        }
        for (int f = 0; f < N_EVIDENCE_FIELDS; f++) {
            *(PyObject **)((char *)obj + model->offsets[f]) = values[f];
        }
        PyList_SET_ITEM(out, i, obj);
    }
    return out;
}

static Model *
find_model(PyTypeObject *type)
{
    for (int k = 0; k < n_models; k++) {
        if (models[k].type == type) {
            return &models[k];
        }
    }
    return NULL;
}

/* ---- structure(): ``check_structure`` when it finds nothing to report ----------------------- */

enum { REC_TRACE_ID, REC_SPAN_ID, REC_PARENT, REC_NAME, REC_START, REC_END };

static PyObject *sort_name = NULL;    /* "sort" */
static PyObject *sort_kwnames = NULL; /* ("key",) */

#define REC(obj, field) (*(PyObject **)((char *)(obj) + layouts[L_SPAN_RECORD].offsets[field]))

/* 1: within the parent's time window (or no parent), 0: not, -1: error. */
static int
within(PyObject *span, PyObject *parent)
{
    int skewed = PyObject_RichCompareBool(REC(span, REC_START), REC(parent, REC_START), Py_LT);
    if (skewed != 0) {
        return skewed < 0 ? -1 : 0;
    }
    skewed = PyObject_RichCompareBool(REC(span, REC_END), REC(parent, REC_END), Py_GT);
    return skewed < 0 ? -1 : !skewed;
}

PyDoc_STRVAR(structure_doc,
             "structure(records, order_key)\n--\n\n"
             "(spans sorted by order_key, root) when check_structure would report nothing "
             "(no duplicate id, one root, no orphan, no clock skew); else None.");

static PyObject *
structure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "structure(records: list, order_key)");
        return NULL;
    }
    if (!ready) {
        Py_RETURN_NONE;
    }
    PyObject *records = args[0];
    Py_ssize_t n = PyList_GET_SIZE(records);
    PyObject *by_id = PyDict_New();
    PyObject *spans = PyList_New(0);
    PyObject *result = NULL;
    if (by_id == NULL || spans == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *span = PyList_GET_ITEM(records, i);
        if (!Py_IS_TYPE(span, layouts[L_SPAN_RECORD].type) || REC(span, REC_SPAN_ID) == NULL ||
            REC(span, REC_PARENT) == NULL || REC(span, REC_START) == NULL ||
            REC(span, REC_END) == NULL) {
            goto decline;
        }
        int seen = PyDict_SetDefault(by_id, REC(span, REC_SPAN_ID), span) != span;
        if (PyErr_Occurred()) {
            goto done;
        }
        if (seen) {
            goto decline; /* a duplicate id: the Python check words the finding */
        }
        if (PyList_Append(spans, span) < 0) {
            goto done;
        }
    }
    if (sort_name == NULL) {
        PyObject *key_name = PyUnicode_InternFromString("key");
        sort_kwnames = key_name == NULL ? NULL : PyTuple_Pack(1, key_name);
        Py_XDECREF(key_name);
        sort_name = sort_kwnames == NULL ? NULL : PyUnicode_InternFromString("sort");
        if (sort_name == NULL) {
            Py_CLEAR(sort_kwnames);
            goto done;
        }
    }
    PyObject *sort_args[2] = {spans, args[1]}; /* spans.sort(key=order_key): stable */
    PyObject *sorted = PyObject_VectorcallMethod(sort_name, sort_args, 1, sort_kwnames);
    if (sorted == NULL) {
        goto done;
    }
    Py_DECREF(sorted);
    PyObject *root = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *span = PyList_GET_ITEM(spans, i);
        PyObject *parent_id = REC(span, REC_PARENT);
        int has_parent = PyObject_IsTrue(parent_id);
        if (has_parent < 0) {
            goto done;
        }
        if (!has_parent) {
            if (root != NULL) {
                goto decline; /* several roots */
            }
            root = span;
        }
        int skewed = PyObject_RichCompareBool(REC(span, REC_END), REC(span, REC_START), Py_LT);
        if (skewed < 0) {
            goto done;
        }
        if (skewed) {
            goto decline;
        }
        if (has_parent) {
            PyObject *parent = PyDict_GetItemWithError(by_id, parent_id);
            if (parent == NULL) {
                if (PyErr_Occurred()) {
                    goto done;
                }
                goto decline; /* an orphan */
            }
            int ok = within(span, parent);
            if (ok < 0) {
                goto done;
            }
            if (!ok) {
                goto decline;
            }
        }
    }
    if (root == NULL) {
        goto decline;
    }
    result = PyTuple_Pack(2, spans, root);
    goto done;
decline:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(by_id);
    Py_XDECREF(spans);
    return result;
}

#undef REC

/* Offset of the member descriptor ``name`` of ``type`` (an object slot); -1 with an error. */
static Py_ssize_t
member_offset(PyTypeObject *type, PyObject *name)
{
    PyObject *descr = PyDict_GetItemWithError(type->tp_dict, name);
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s.%U is not a slot", type->tp_name, name);
        }
        return -1;
    }
    PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
    if (def->type != T_OBJECT_EX && def->type != T_OBJECT) {
        PyErr_Format(PyExc_TypeError, "%s.%U is not an object slot", type->tp_name, name);
        return -1;
    }
    return def->offset;
}

PyDoc_STRVAR(setup_doc,
             "setup(layouts, unset, span_kinds, status_codes, status_by_code)\n--\n\n"
             "Register the struct and record classes (a tuple of (class, field names) in the "
             "module's order) and the shared constants.");

static PyObject *
setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != N_LAYOUTS ||
        !PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) || !PyTuple_Check(args[4]) ||
        PyTuple_GET_SIZE(args[4]) != PyTuple_GET_SIZE(args[3]) ||
        PyTuple_GET_SIZE(args[2]) == 0 || PyTuple_GET_SIZE(args[4]) == 0) {
        PyErr_SetString(PyExc_TypeError, "setup(): bad arguments");
        return NULL;
    }
    Layout parsed[N_LAYOUTS];
    for (int k = 0; k < N_LAYOUTS; k++) {
        PyObject *entry = PyTuple_GET_ITEM(args[0], k);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 ||
            !PyType_Check(PyTuple_GET_ITEM(entry, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(entry, 1)) ||
            PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 1)) != FIELD_COUNTS[k]) {
            PyErr_Format(PyExc_TypeError, "setup(): layout %d is not (class, %zd field names)",
                         k, FIELD_COUNTS[k]);
            return NULL;
        }
        parsed[k].type = (PyTypeObject *)PyTuple_GET_ITEM(entry, 0);
        PyObject *names = PyTuple_GET_ITEM(entry, 1);
        for (Py_ssize_t f = 0; f < FIELD_COUNTS[k]; f++) {
            parsed[k].offsets[f] = member_offset(parsed[k].type, PyTuple_GET_ITEM(names, f));
            if (parsed[k].offsets[f] < 0) {
                return NULL;
            }
        }
    }
    for (int k = 0; k < N_LAYOUTS; k++) {
        Py_INCREF(parsed[k].type);
        Py_XDECREF(layouts[k].type);
        layouts[k] = parsed[k];
    }
    Py_XSETREF(unset, Py_NewRef(args[1]));
    Py_XSETREF(span_kinds, Py_NewRef(args[2]));
    Py_XSETREF(status_codes, Py_NewRef(args[3]));
    Py_XSETREF(status_by_code, Py_NewRef(args[4]));
    ready = 1;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(shared_count_doc,
             "shared_count()\n--\n\n"
             "How many distinct texts the records share now (at most MAX_SHARED).");

static PyObject *
shared_count(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromSsize_t(PyDict_GET_SIZE(shared));
}

static PyMethodDef methods[] = {
    {"records", (PyCFunction)(void (*)(void))records, METH_FASTCALL, records_doc},
    {"setup", (PyCFunction)(void (*)(void))setup, METH_FASTCALL, setup_doc},
    {"untrack", untrack, METH_O, untrack_doc},
    {"retrack", retrack, METH_O, retrack_doc},
    {"shared_count", shared_count, METH_NOARGS, shared_count_doc},
    {"step_attributes", step_attributes, METH_O, step_attributes_doc},
    {"register_model", (PyCFunction)(void (*)(void))register_model, METH_FASTCALL,
     register_model_doc},
    {"construct", (PyCFunction)(void (*)(void))construct, METH_FASTCALL, construct_doc},
    {"setup_evidence", (PyCFunction)(void (*)(void))setup_evidence, METH_FASTCALL,
     setup_evidence_doc},
    {"evidence", (PyCFunction)(void (*)(void))evidence, METH_FASTCALL, evidence_doc},
    {"structure", (PyCFunction)(void (*)(void))structure, METH_FASTCALL, structure_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_speedups",
    "The collectors' optional C speedups (each has a pure-Python reference).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (shared == NULL && (shared = PyDict_New()) == NULL) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module != NULL && PyModule_AddIntConstant(module, "MAX_SHARED", MAX_SHARED) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
