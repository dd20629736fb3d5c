"""traces/importers: one fixture per format built here (SQLite files with sqlite3, CSVs, JSON), the
events and header each produces, format detection, read-only inputs, and malformed inputs that
must raise TraceError naming the file and the table, line or record."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import sqlite3

import pytest

from gpcheck.spec.errors import TraceError
from gpcheck.traces.format import read_trace
from gpcheck.traces.importers import FORMATS, detect_format, import_trace
from gpcheck.traces.importers.common import Kernel, build_trace, cuda_level, signed32

PID = 4242
GPID = (PID << 24) | 7  # nsys packs the pid into bits 24..47


def kernel_events(events):
    return [(e.action, e.args, e.t, e.meta["corr"]) for e in events if e.action in ("launch", "start", "end")]


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# ---------------------------------------------------------------------------------------------
# common


def test_cuda_priority_sign_conversion():
    assert signed32(4294967291) == -5
    assert signed32(0) == 0 and signed32(-3) == -3
    assert cuda_level(4294967291) == 5 and cuda_level(0) == 0 and cuda_level(None) is None


def test_build_trace_orders_events_and_computes_constants():
    ks = [Kernel("a", (0,), start=100, end=200, corr=1, launch=10, launch_from="api", level=0),
          Kernel("b", (0,), start=200, end=300, corr=2, launch=20, launch_from="api", level=0),
          Kernel("c", (1,), start=150, end=150, corr=3, launch=140, launch_from="api", level=5)]
    h, evs = build_trace(ks, {"file": "x"})
    assert h.model == "nvidia_streams"
    assert h.constants == {"S": 2, "P": 6, "Q": 2, "SLOTS": 2}
    got = [(e.action, e.meta["corr"], e.t) for e in evs]
    # at t=200 a's end precedes b's start; the zero-length c starts before it ends
    assert got == [
        ("launch", 1, 10), ("launch", 2, 20), ("start", 1, 100), ("launch", 3, 140), ("start", 3, 150),
        ("end", 3, 150), ("end", 1, 200), ("start", 2, 200), ("end", 2, 300)]
    assert evs[0].args == {"stream": 0, "priority": 0}


def test_build_trace_rejects_end_before_start():
    with pytest.raises(TraceError, match="ends before it starts"):
        build_trace([Kernel("a", (0,), start=5, end=4, corr=1)], {"file": "f.json"})


# ---------------------------------------------------------------------------------------------
# nsys


def make_nsys(path, *, kernels=None, drop_column=None, with_prio=True, with_runtime=True, ctxsw=False):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)",
                    [(1, "gemm_kernel"), (2, "spin"), (3, "cudaLaunchKernel_v7000"), (4, "cudaMemcpy_v3020")])
    cols = ["start", "end", "deviceId", "contextId", "greenContextId", "streamId", "correlationId", "globalPid",
            "demangledName", "shortName", "mangledName", "launchType", "gridX", "gridY", "gridZ", "blockX", "blockY",
            "blockZ"]
    if drop_column:
        cols.remove(drop_column)
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(c + ' INTEGER' for c in cols)})")
    rows = kernels if kernels is not None else [
        # start, end, stream, corr, name
        (1000, 5000, 13, 10, 1),
        (5000, 9000, 13, 11, 1),
        (6000, 7000, 14, 12, 2),
    ]
    for start, end, stream, corr, name in rows:
        full = {"start": start, "end": end, "deviceId": 0, "contextId": 1, "greenContextId": None, "streamId": stream,
                "correlationId": corr, "globalPid": GPID, "demangledName": name, "shortName": name,
                "mangledName": name, "launchType": 1, "gridX": 132, "gridY": 2, "gridZ": 1, "blockX": 256,
                "blockY": 1, "blockZ": 1}
        vals = [full[c] for c in cols]
        con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * len(cols))})", vals)
    if with_runtime:
        con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, "
                    "globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER)")
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", [
            (500, 600, 0, GPID + 1, 10, 3, 0, None), (700, 800, 0, GPID + 1, 11, 3, 0, None),
            (5500, 5600, 0, GPID + 1, 12, 3, 0, None), (900, 950, 0, GPID + 1, 99, 4, 0, None)])
    if with_prio:
        con.execute("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER, hwId INTEGER, vmId INTEGER, "
                    "processId INTEGER, contextId INTEGER, priority INTEGER, flag INTEGER)")
        con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?,?,?,?,?,?,?)",
                        [(13, 0, 0, PID, 1, 0, 2), (14, 0, 0, PID, 1, 4294967291, 2), (7, 0, 0, PID, 1, 0, 3)])
    con.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.1')")
    if ctxsw:
        con.execute("CREATE TABLE GPU_CONTEXT_SWITCH_EVENTS (tag INTEGER, vmId INTEGER, seqNo INTEGER, "
                    "contextId INTEGER, timestamp INTEGER, globalPid INTEGER, gpuId INTEGER)")
        con.executemany("INSERT INTO GPU_CONTEXT_SWITCH_EVENTS VALUES (?,?,?,?,?,?,?)",
                        [(1, 0, 1, 1, 2000, GPID, 0), (2, 0, 2, 1, 4000, GPID, 0)])
    con.commit()
    con.close()
    return str(path)


def test_nsys_import(tmp_path):
    p = make_nsys(tmp_path / "report.sqlite")
    before = digest(p)
    assert detect_format(p) == "nsys"
    h, evs = import_trace(p)
    assert digest(p) == before and sorted(os.listdir(tmp_path)) == ["report.sqlite"]  # read only
    assert h.model == "nvidia_streams" and h.constants == {"S": 2, "P": 6, "Q": 2, "SLOTS": 2}
    src = h.extra["source"]
    assert src["format"] == "nsys" and src["schema_version"] == "3.11.1"
    assert [(s["stream_id"], s["priority"], s["cuda_priority"]) for s in src["streams"]] == [(13, 0, 0), (14, 5, -5)]
    ks = kernel_events(evs)
    assert ks[:4] == [("launch", {"stream": 0, "priority": 0}, 500, 10), ("launch", {"stream": 0, "priority": 0}, 700, 11),
                      ("start", {"stream": 0, "priority": 0}, 1000, 10), ("end", {"stream": 0, "priority": 0}, 5000, 10)]
    start12 = next(e for e in evs if e.action == "start" and e.meta["corr"] == 12)
    assert start12.args == {"stream": 1, "priority": 5}
    assert start12.meta["name"] == "spin" and start12.meta["grid"] == 264 and start12.meta["pid"] == PID
    assert start12.meta["cuda_priority"] == -5 and start12.meta["api"] == "cudaLaunchKernel_v7000"


def test_nsys_without_runtime_or_priorities(tmp_path):
    p = make_nsys(tmp_path / "r.sqlite", with_prio=False, with_runtime=False)
    h, evs = import_trace(p, "nsys")
    assert h.constants["P"] == 1
    launch = next(e for e in evs if e.action == "launch")
    assert launch.meta["launch_from"] == "kernel" and launch.t == 1000 and launch.args["priority"] == 0


def test_nsys_context_switches_become_events(tmp_path):
    p = make_nsys(tmp_path / "r.sqlite", ctxsw=True)
    h, evs = import_trace(p)
    sw = [e for e in evs if e.action == "ctx_switch"]
    assert [e.t for e in sw] == [2000, 4000] and sw[0].meta["pid"] == PID
    assert h.model is None  # the model has no ctx_switch action


def test_nsys_missing_column_names_table(tmp_path):
    p = make_nsys(tmp_path / "r.sqlite", drop_column="correlationId")
    with pytest.raises(TraceError, match=r"r\.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL lacks column\(s\) correlationId"):
        import_trace(p)


def test_nsys_null_timestamp_names_row(tmp_path):
    p = make_nsys(tmp_path / "r.sqlite", kernels=[(1000, None, 13, 10, 1)])
    with pytest.raises(TraceError, match="table CUPTI_ACTIVITY_KIND_KERNEL row 1 column end: missing value"):
        import_trace(p)


def test_nsys_without_kernel_table(tmp_path):
    p = str(tmp_path / "empty.sqlite")
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL_X (a)")
    con.close()
    with pytest.raises(TraceError, match="no table CUPTI_ACTIVITY_KIND_KERNEL"):
        import_trace(p, "nsys")
    with pytest.raises(TraceError, match="neither CUPTI_ACTIVITY_KIND_KERNEL"):
        detect_format(p)


@pytest.mark.parametrize("keep", [20, 3000, 6000])
def test_nsys_truncated(tmp_path, keep):
    full = make_nsys(tmp_path / "full.sqlite", kernels=[(i * 10, i * 10 + 5, 13, i, 1) for i in range(1, 400)])
    data = open(full, "rb").read()
    assert len(data) > keep
    p = tmp_path / "cut.sqlite"
    p.write_bytes(data[:keep])
    with pytest.raises(TraceError) as e:
        import_trace(str(p), "nsys")
    assert "cut.sqlite" in str(e.value)
    assert "table" in str(e.value) or "SQLite" in str(e.value)


def test_not_sqlite_given_as_nsys(tmp_path):
    p = tmp_path / "x.sqlite"
    p.write_text("hello")
    with pytest.raises(TraceError, match="not an SQLite database"):
        import_trace(str(p), "nsys")


# ---------------------------------------------------------------------------------------------
# Kineto and plain Chrome


def kineto_doc():
    base = 1_700_000_000_000_000_000
    return {
        "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "baseTimeNanoseconds": base,
        "displayTimeUnit": "ms",
        "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 99, "tid": 1, "ts": 10.0,
             "dur": 2.5, "args": {"cbid": 211, "correlation": 7}},
            {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 99, "tid": 1, "ts": 11.0,
             "dur": 2.0, "args": {"cbid": 307, "correlation": 8}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 99, "tid": 1, "ts": 1.0,
             "dur": 2.0, "args": {"correlation": 6}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 13, "ts": 20.123, "dur": 100.5,
             "args": {"queued": 0, "device": 0, "context": 1, "stream": 13, "correlation": 7, "grid": [4, 2, 1],
                      "block": [128, 1, 1]}},
            {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 14, "ts": 30.0, "dur": 5.0,
             "args": {"queued": 0, "device": 0, "context": 1, "stream": 14, "correlation": 8, "grid": [1, 1, 1],
                      "block": [32, 1, 1]}},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 13, "ts": 2.0, "dur": 1.0,
             "args": {"device": 0, "context": 1, "stream": 13, "correlation": 6}},
            {"ph": "s", "id": 7, "pid": 99, "tid": 1, "ts": 10.0, "cat": "ac2g", "name": "ac2g"},
            {"ph": "f", "id": 7, "pid": 0, "tid": 13, "ts": 20.123, "cat": "ac2g", "name": "ac2g", "bp": "e"},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 13, "args": {"name": "stream 13 "}},
        ],
    }


def test_kineto_import(tmp_path):
    p = tmp_path / "t.pt.trace.json.gz"
    p.write_bytes(gzip.compress(json.dumps(kineto_doc()).encode()))
    assert detect_format(str(p)) == "kineto"
    h, evs = import_trace(str(p))
    base = 1_700_000_000_000_000_000
    ks = kernel_events(evs)
    assert ks == [("launch", {"stream": 0, "priority": 0}, base + 10_000, 7),
                  ("launch", {"stream": 1, "priority": 0}, base + 11_000, 8),
                  ("start", {"stream": 0, "priority": 0}, base + 20_123, 7),
                  ("start", {"stream": 1, "priority": 0}, base + 30_000, 8),
                  ("end", {"stream": 1, "priority": 0}, base + 35_000, 8),
                  ("end", {"stream": 0, "priority": 0}, base + 120_623, 7)]
    assert h.extra["source"]["streams"][0]["track"] == "stream 13"
    assert evs[0].meta["grid"] == 8 and evs[0].meta["api"] == "cudaLaunchKernel"
    assert h.constants["P"] == 1  # Kineto records no priority


def test_kineto_stream_priority_override(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(kineto_doc()))
    h, evs = import_trace(str(p), "kineto", {"14": -5})
    assert h.constants["P"] == 6
    assert {e.args["stream"]: e.args["priority"] for e in evs} == {0: 0, 1: 5}
    with pytest.raises(TraceError, match="no stream 15"):
        import_trace(str(p), "kineto", {"15": -5})


def test_kineto_kernel_without_correlation(tmp_path):
    doc = kineto_doc()
    del doc["traceEvents"][3]["args"]["correlation"]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match=r"t\.json: traceEvents\[3\]: kernel 'gemm' has no integer args.correlation"):
        import_trace(str(p), "kineto")


def test_truncated_json_names_line(tmp_path):
    text = json.dumps(kineto_doc(), indent=1)
    p = tmp_path / "cut.json"
    p.write_text(text[: len(text) // 2])
    with pytest.raises(TraceError, match=r"cut\.json:\d+:\d+: truncated JSON"):
        import_trace(str(p), "kineto")
    g = tmp_path / "cut.json.gz"
    g.write_bytes(gzip.compress(text.encode())[:100])
    with pytest.raises(TraceError, match="truncated or corrupt gzip"):
        import_trace(str(g), "kineto")


def test_chrome_import_with_begin_end_pairs(tmp_path):
    events = [
        {"name": "k1", "ph": "B", "pid": 1, "tid": 5, "ts": 1.5, "args": {"correlation": 1, "priority": -2}},
        {"name": "k1", "ph": "E", "pid": 1, "tid": 5, "ts": 3.0},
        {"name": "k2", "ph": "X", "pid": 1, "tid": 6, "ts": 2.0, "dur": 0.25, "args": {"grid": [2, 2, 1]}},
        {"name": "k3", "ph": "B", "pid": 1, "tid": 6, "ts": 4.0},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 5, "args": {"name": "hi"}},
    ]
    p = tmp_path / "plain.json"
    p.write_text(json.dumps(events))
    assert detect_format(str(p)) == "chrome"
    h, evs = import_trace(str(p))
    got = [(e.action, e.args, e.t) for e in evs]
    assert got == [("launch", {"stream": 0, "priority": 2}, 1500), ("start", {"stream": 0, "priority": 2}, 1500),
                   ("launch", {"stream": 1}, 2000), ("start", {"stream": 1}, 2000), ("end", {"stream": 1}, 2250),
                   ("end", {"stream": 0, "priority": 2}, 3000), ("launch", {"stream": 1}, 4000),
                   ("start", {"stream": 1}, 4000)]  # k3 never ends
    assert evs[2].meta["corr_synthetic"] and evs[2].meta["grid"] == 4
    assert h.extra["source"]["streams"][0]["track"] == "hi"


def test_chrome_kernel_category_selects(tmp_path):
    doc = {"traceEvents": [
        {"name": "cpu_op", "cat": "cpu_op", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
        {"name": "k", "cat": "Kernel", "ph": "X", "pid": 2, "tid": 3, "ts": 5, "dur": 1}]}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    h, evs = import_trace(str(p), "chrome")
    assert {e.meta["name"] for e in evs} == {"k"}


@pytest.mark.parametrize("bad, msg", [
    ({"foo": 1}, "not a Chrome trace"),
    ([{"ph": "E", "pid": 1, "tid": 1, "ts": 1}], r"traceEvents\[0\]: \"E\" event with no open \"B\""),
    ([{"ph": "X", "pid": 1, "tid": 1, "ts": 1}], r"traceEvents\[0\]: an \"X\" event needs \"dur\""),
    ([{"ph": "X", "pid": 1, "tid": 1, "ts": "soon", "dur": 1}], r"traceEvents\[0\] field ts"),
    ([3], r"traceEvents\[0\]: an event must be an object"),
])
def test_chrome_malformed(tmp_path, bad, msg):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(TraceError, match=msg):
        import_trace(str(p), "chrome")


# ---------------------------------------------------------------------------------------------
# rocprof CSV

NEW_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
              "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
              "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
              "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]
OLD_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp",
              "End_Timestamp", "Private_Segment_Size", "Group_Segment_Size", "Workgroup_Size_X", "Workgroup_Size_Y",
              "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return str(path)


def new_row(corr, start, end, queue=1, stream=0, name="vec_add"):
    d = {"Kind": "KERNEL_DISPATCH", "Agent_Id": "Agent 2", "Queue_Id": queue, "Stream_Id": stream, "Thread_Id": 77,
         "Dispatch_Id": corr, "Kernel_Id": 3, "Kernel_Name": name, "Correlation_Id": corr, "Start_Timestamp": start,
         "End_Timestamp": end, "LDS_Block_Size": 0, "Scratch_Size": 0, "VGPR_Count": 8, "Accum_VGPR_Count": 0,
         "SGPR_Count": 16, "Workgroup_Size_X": 256, "Workgroup_Size_Y": 1, "Workgroup_Size_Z": 1,
         "Grid_Size_X": 1000, "Grid_Size_Y": 1, "Grid_Size_Z": 1}
    return [d[h] for h in NEW_HEADER]


def test_rocprof_new_columns(tmp_path):
    p = write_csv(tmp_path / "1234_kernel_trace.csv", NEW_HEADER,
                  [new_row(1, 100, 200), new_row(2, 210, 300), new_row(3, 150, 250, queue=2, stream=5)])
    assert detect_format(p) == "rocprof"
    h, evs = import_trace(p)
    assert h.model is None and h.constants == {"S": 2, "P": 1, "Q": 1, "SLOTS": 2}
    start = next(e for e in evs if e.action == "start" and e.meta["corr"] == 3)
    assert start.args == {"stream": 1, "priority": 0}
    assert start.meta["grid"] == 4 and start.meta["grid_items"] == [1000, 1, 1] and start.meta["agent"] == 2
    assert start.meta["queue_id"] == 2 and start.meta["stream_id"] == 5 and start.meta["line"] == 4
    assert [s["queue_id"] for s in h.extra["source"]["streams"]] == [1, 2]


def test_rocprof_old_columns_and_kinds(tmp_path):
    rows = [["KERNEL_DISPATCH", 1, 9, 3, "k", 5, 100, 200, 0, 0, 64, 1, 1, 128, 1, 1],
            ["MEMORY_COPY", 1, 9, 3, "copy", 6, 100, 200, 0, 0, 64, 1, 1, 128, 1, 1]]
    p = write_csv(tmp_path / "k.csv", OLD_HEADER, rows)
    h, evs = import_trace(p, "rocprof")
    assert [e.meta["corr"] for e in evs] == [5, 5, 5]
    assert not h.extra["source"]["has_stream_id"] and evs[0].meta["grid"] == 2


def test_rocprof_v1_columns(tmp_path):
    header = ["Index", "KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid", "grd", "wgr", "lds", "scr",
              "arch_vgpr", "accum_vgpr", "sgpr", "wave_size", "sig", "obj", "DispatchNs", "BeginNs", "EndNs",
              "CompleteNs"]
    rows = [[0, "k0", 0, 0, 0, 11, 12, 1024, 256, 0, 0, 8, 0, 16, 64, 0, 0, 50, 100, 200, 210],
            [1, "k1", 0, 0, 1, 11, 12, 1024, 256, 0, 0, 8, 0, 16, 64, 0, 0, 60, 205, 300, 310]]
    p = write_csv(tmp_path / "results.csv", header, rows)
    assert detect_format(p) == "rocprof"
    h, evs = import_trace(p)
    assert [(e.action, e.t) for e in evs] == [("launch", 50), ("launch", 60), ("start", 100), ("end", 200),
                                              ("start", 205), ("end", 300)]
    assert evs[0].meta["corr"] == 0 and evs[0].meta["grid"] == 4 and evs[0].meta["pid"] == 11


def test_rocprof_malformed(tmp_path):
    p = write_csv(tmp_path / "a.csv", NEW_HEADER, [new_row(1, 100, 200), new_row(2, "later", 300)])
    with pytest.raises(TraceError, match=r"a\.csv:3 column Start_Timestamp: expected a timestamp, got 'later'"):
        import_trace(p, "rocprof")
    text = open(p).read().splitlines()
    q = tmp_path / "b.csv"
    q.write_text(text[0] + "\n" + text[1] + "\n" + text[2][:20] + "\n")
    with pytest.raises(TraceError, match=r"b\.csv:3: \d+ fields, the header has 22"):
        import_trace(str(q), "rocprof")
    r = write_csv(tmp_path / "c.csv", ["Kernel_Name", "Queue_Id"], [["k", 1]])
    with pytest.raises(TraceError, match=r"c\.csv:1: header lacks the column\(s\) starttimestamp, endtimestamp"):
        import_trace(r, "rocprof")
    e = tmp_path / "e.csv"
    e.write_text("")
    with pytest.raises(TraceError, match=r"e\.csv:1: empty file"):
        import_trace(str(e), "rocprof")


# ---------------------------------------------------------------------------------------------
# rocpd

UUID = "_0001abcd"


def make_rocpd(path, *, bad_row=False):
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE rocpd_kernel_dispatch{UUID} (id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, "
                "pid INTEGER, tid INTEGER, agent_id INTEGER, kernel_id INTEGER, dispatch_id INTEGER, queue_id INTEGER, "
                "stream_id INTEGER, start BIGINT, end BIGINT, private_segment_size INTEGER, group_segment_size INTEGER, "
                "workgroup_size_x INTEGER, workgroup_size_y INTEGER, workgroup_size_z INTEGER, grid_size_x INTEGER, "
                "grid_size_y INTEGER, grid_size_z INTEGER, region_name_id INTEGER, event_id INTEGER, extdata JSONB)")
    rows = [(1, "g", 1, 1, 1, 1, 1, 1, 1, 0, 1000, 2000, 0, 0, 64, 1, 1, 640, 1, 1, None, 1, "{}"),
            (2, "g", 1, 1, 1, 1, 2, 2, 1, 0, 2000 if not bad_row else None, 2500, 0, 0, 64, 1, 1, 64, 1, 1, None, 2,
             "{}")]
    con.executemany(f"INSERT INTO rocpd_kernel_dispatch{UUID} VALUES ({','.join('?' * 23)})", rows)
    con.execute(f"CREATE TABLE rocpd_info_kernel_symbol{UUID} (id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, "
                "pid INTEGER, code_object_id INTEGER, kernel_name TEXT, display_name TEXT)")
    con.executemany(f"INSERT INTO rocpd_info_kernel_symbol{UUID} VALUES (?,?,?,?,?,?,?)",
                    [(1, "g", 1, 1, 1, "vecAdd.kd", "vecAdd(int*)"), (2, "g", 1, 1, 1, "relu.kd", "relu")])
    con.execute(f"CREATE TABLE rocpd_info_agent{UUID} (id INTEGER PRIMARY KEY, absolute_index INTEGER, type TEXT)")
    con.execute(f"INSERT INTO rocpd_info_agent{UUID} VALUES (1, 2, 'GPU')")
    con.execute(f"CREATE TABLE rocpd_info_process{UUID} (id INTEGER PRIMARY KEY, pid INTEGER)")
    con.execute(f"INSERT INTO rocpd_info_process{UUID} VALUES (1, 31337)")
    con.execute(f"CREATE TABLE rocpd_event{UUID} (id INTEGER PRIMARY KEY, correlation_id INTEGER)")
    con.executemany(f"INSERT INTO rocpd_event{UUID} VALUES (?, ?)", [(1, 70), (2, 71), (3, 70)])
    con.execute(f"CREATE TABLE rocpd_string{UUID} (id INTEGER PRIMARY KEY, string TEXT)")
    con.execute(f"INSERT INTO rocpd_string{UUID} VALUES (1, 'hipLaunchKernel')")
    con.execute(f"CREATE TABLE rocpd_region{UUID} (id INTEGER PRIMARY KEY, start BIGINT, end BIGINT, name_id INTEGER, "
                "event_id INTEGER)")
    con.execute(f"INSERT INTO rocpd_region{UUID} VALUES (1, 900, 950, 1, 3)")
    # the unsuffixed view, as rocprofv3 writes it (uses a function plain SQLite lacks)
    con.execute(f"CREATE VIEW rocpd_kernel_dispatch AS SELECT *, lz4_decompress(extdata) AS x "
                f"FROM rocpd_kernel_dispatch{UUID}")
    con.commit()
    con.close()
    return str(path)


def test_rocpd_import(tmp_path):
    p = make_rocpd(tmp_path / "results.db")
    before = digest(p)
    assert detect_format(p) == "rocpd"
    h, evs = import_trace(p)
    assert digest(p) == before
    assert h.model is None
    got = [(e.action, e.t, e.meta["corr"], e.meta["name"]) for e in evs]
    assert got == [("launch", 900, 70, "vecAdd(int*)"), ("start", 1000, 70, "vecAdd(int*)"),
                   ("end", 2000, 70, "vecAdd(int*)"), ("launch", 2000, 71, "relu"), ("start", 2000, 71, "relu"),
                   ("end", 2500, 71, "relu")]
    assert evs[1].meta["grid"] == 10 and evs[1].meta["agent"] == 2 and evs[1].meta["pid"] == 31337


def test_rocpd_malformed(tmp_path):
    p = make_rocpd(tmp_path / "bad.db", bad_row=True)
    with pytest.raises(TraceError, match=rf"bad\.db: table rocpd_kernel_dispatch{UUID} row 2 column start: missing value"):
        import_trace(p, "rocpd")
    q = str(tmp_path / "other.db")
    con = sqlite3.connect(q)
    con.execute("CREATE TABLE t (a)")
    con.close()
    with pytest.raises(TraceError, match=r"no table rocpd_kernel_dispatch\*"):
        import_trace(q, "rocpd")


# ---------------------------------------------------------------------------------------------
# cupti-python records


def cupti_records():
    return [
        {"kind": "stream", "stream_id": 13, "priority": 0, "flag": 2, "context_id": 1, "correlation_id": 11},
        {"kind": "stream", "stream_id": 14, "priority": 4294967291, "flag": 2, "context_id": 1, "correlation_id": 12},
        {"kind": "kernel", "name": "spin", "start": 1_000, "end": 9_000, "queued": 400, "submitted": 500,
         "stream_id": 13, "context_id": 1, "device_id": 0, "correlation_id": 17, "grid": [528, 1, 1],
         "block": [1024, 1, 1], "priority": "n/a"},
        {"kind": "kernel", "name": "spin", "start": 5_000, "end": 6_000, "queued": 0, "submitted": 0,
         "stream_id": 14, "context_id": 1, "device_id": 0, "correlation_id": 18, "grid_x": 264, "grid_y": 1,
         "grid_z": 1},
        {"kind": "driver", "name": "cuLaunchKernel", "start": 300, "end": 350, "correlation_id": 17},
        {"kind": "driver", "name": "cuLaunchKernel", "start": 3_000, "end": 3_050, "correlation_id": 18},
    ]


def test_cupti_import(tmp_path):
    p = tmp_path / "cupti_records.json"
    p.write_text(json.dumps(cupti_records()))
    assert detect_format(str(p)) == "cupti"
    h, evs = import_trace(str(p))
    got = [(e.action, e.args, e.t, e.meta["corr"]) for e in evs]
    assert got == [("launch", {"stream": 0, "priority": 0}, 300, 17), ("start", {"stream": 0, "priority": 0}, 1000, 17),
                   ("launch", {"stream": 1, "priority": 5}, 3000, 18), ("start", {"stream": 1, "priority": 5}, 5000, 18),
                   ("end", {"stream": 1, "priority": 5}, 6000, 18), ("end", {"stream": 0, "priority": 0}, 9000, 17)]
    assert evs[0].meta["queued"] == 400 and evs[0].meta["submitted"] == 500 and evs[2].meta["grid"] == 264


def test_cupti_kernel_level_priority_and_queued_launch(tmp_path):
    recs = [{"kind": "CONCURRENT_KERNEL", "name": "k", "start": 10, "end": 20, "queued": 5, "stream_id": 3,
             "context_id": 1, "device_id": 0, "correlation_id": 1, "priority": 4294967294}]
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"records": recs}))
    h, evs = import_trace(str(p), "cupti")
    assert evs[0].t == 5 and evs[0].meta["launch_from"] == "queued" and evs[0].args["priority"] == 2


@pytest.mark.parametrize("patch, msg", [
    ({"stream_id": None}, r"record 2: missing field 'stream_id'"),
    ({"start": "x"}, r"record 2 field start: expected a timestamp"),
    ({"correlation_id": 1.5}, r"record 2: field 'correlation_id' must be an integer"),
])
def test_cupti_malformed(tmp_path, patch, msg):
    recs = cupti_records()
    recs[2].update(patch)
    p = tmp_path / "r.json"
    p.write_text(json.dumps(recs))
    with pytest.raises(TraceError, match=msg):
        import_trace(str(p), "cupti")


# ---------------------------------------------------------------------------------------------
# detection


def test_detect_rejects_unknown_and_gpcheck_traces(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("just text\n")
    with pytest.raises(TraceError, match="unrecognised input format"):
        detect_format(str(a))
    b = tmp_path / "b.jsonl"
    b.write_text('{"gpcheck_trace": 1}\n')
    with pytest.raises(TraceError, match="already a gpcheck trace"):
        import_trace(str(b))
    with pytest.raises(TraceError, match="no such file"):
        import_trace(str(tmp_path / "missing.sqlite"))
    with pytest.raises(TraceError, match="unknown import format"):
        import_trace(str(a), "perfetto")
    assert set(FORMATS) == {"nsys", "kineto", "chrome", "rocprof", "rocpd", "cupti", "record"}


def test_cli_import_writes_whole_trace(tmp_path, capsys):
    from gpcheck.checker.cli.command import main

    src = make_nsys(tmp_path / "r.sqlite")
    out = tmp_path / "out.jsonl.gz"
    assert main(["import", src, "--out", str(out)]) == 0
    assert "3 kernels on 2 stream(s)" in capsys.readouterr().out
    h, evs = read_trace(str(out))
    assert h.model == "nvidia_streams" and len(evs) == 9
    # a failing import leaves an existing output untouched and no temporary file
    bad = tmp_path / "bad.csv"
    bad.write_text("Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,x\n")
    before = out.read_bytes()
    assert main(["import", str(bad), "--format", "rocprof", "--out", str(out)]) == 2
    assert "bad.csv:2" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["bad.csv", "out.jsonl.gz", "r.sqlite"]
    assert main(["import", src, "--out", src]) == 2  # never overwrites its input
    assert main(["import", src, "--out", str(out), "--json", "--stream-priority", "14=-3"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format"] == "nsys" and info["constants"]["P"] == 4


def test_source_missing_per_importer(tmp_path):
    """NOTE(source-missing): each importer says what its source did not record, and only that."""
    def fields(h):  # type: ignore[no-untyped-def]
        return {m["field"]: m for m in h.extra["source"]["missing"]}

    full = fields(import_trace(make_nsys(tmp_path / "a.sqlite", ctxsw=True))[0])
    assert full == {}  # priorities, launch calls, correlation ids and context switches all recorded
    bare = fields(import_trace(make_nsys(tmp_path / "b.sqlite", with_prio=False, with_runtime=False))[0])
    assert set(bare) == {"stream_priority", "launch_time", "switch_evidence"}
    assert "--trace=cuda" in bare["stream_priority"]["remedy"] and "--gpuctxsw=true" in bare["switch_evidence"]["remedy"]
    assert bare["stream_priority"]["needed_by"] == ["priority_inversion", "blocking"]
    # a Chrome trace without correlation ids, with priorities on one track only, without flows
    events = [{"name": "k1", "ph": "X", "pid": 1, "tid": 5, "ts": 1.0, "dur": 1.0, "args": {"priority": -2}},
              {"name": "k2", "ph": "X", "pid": 1, "tid": 6, "ts": 2.0, "dur": 1.0}]
    p = tmp_path / "c.json"
    p.write_text(json.dumps(events))
    chrome = fields(import_trace(str(p))[0])
    assert set(chrome) == {"launch_time", "correlation_id", "switch_evidence"}
    # some kernels with a launch time: partial, counted
    p2 = tmp_path / "d.json"
    p2.write_text(json.dumps(events + [{"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 0.5, "name": "l"},
                                       {"name": "k3", "ph": "X", "pid": 1, "tid": 6, "ts": 4.0, "dur": 1.0,
                                        "args": {"correlation": 7}}]))
    part = fields(import_trace(str(p2))[0])
    assert part["launch_time"]["partial"] and part["launch_time"]["kernels"] == [2, 3]
    assert "correlation_id" not in part


def test_kineto_kernel_priority_when_recorded(tmp_path):
    """A Kineto trace whose kernel slices carry args.priority (CUDA's convention) has priorities:
    nothing to supply, and the levels follow CUDA (-5 most urgent)."""
    doc = kineto_doc()
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            e["args"]["priority"] = -5 if e["args"]["stream"] == 14 else 0
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    h, evs = import_trace(str(p), "kineto")
    assert "stream_priority" not in {m["field"] for m in h.extra["source"]["missing"]}
    assert {e.args["stream"]: e.args["priority"] for e in evs if e.action == "start"} == {0: 0, 1: 5}
    plain = tmp_path / "u.json"
    plain.write_text(json.dumps(kineto_doc()))
    assert "stream_priority" in {m["field"] for m in import_trace(str(plain), "kineto")[0].extra["source"]["missing"]}
