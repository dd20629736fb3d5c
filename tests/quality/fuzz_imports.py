"""Raw GPU traces for `gpcheck import` in the issue-19 fuzzers: a small seed per format (Kineto,
Chrome, cupti, gpcheck recordings as JSON; rocprof CSV; nsys and rocpd SQLite built with sqlite3)
and mutations by field, type, nesting, cell, column, row, value type, page and compression."""

from __future__ import annotations

import gzip
import io
import random
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Callable

from fuzz_mutate import Case, dump_json, gzip_damage, mutate_bytes, mutate_obj

def kineto_doc() -> dict[str, Any]:
    base = 1_700_000_000_000_000_000
    return {
        "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "baseTimeNanoseconds": base,
        "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 99, "tid": 1, "ts": 10.0,
             "dur": 2.5, "args": {"correlation": 7}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 13, "ts": 20.123, "dur": 100.5,
             "args": {"queued": 0, "device": 0, "context": 1, "stream": 13, "correlation": 7, "grid": [4, 2, 1],
                      "block": [128, 1, 1]}},
            {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 14, "ts": 30.0, "dur": 5.0,
             "args": {"queued": 0, "device": 0, "context": 1, "stream": 14, "correlation": 8}},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 13, "args": {"name": "stream 13 "}},
        ],
    }


def chrome_doc() -> list[Any]:
    return [
        {"ph": "B", "name": "k1", "cat": "kernel", "pid": 1, "tid": 2, "ts": 1.0, "args": {"correlation": 3}},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 4.5},
        {"ph": "X", "name": "k2", "cat": "kernel", "pid": 1, "tid": 3, "ts": 2.0, "dur": 1.0,
         "args": {"priority": -2, "grid": [2, 1, 1]}},
        {"ph": "s", "id": 3, "pid": 1, "tid": 1, "ts": 0.5},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "gpu"}},
    ]


def cupti_doc() -> list[Any]:
    return [
        {"kind": "stream", "stream_id": 13, "priority": 0, "context_id": 1},
        {"kind": "stream", "stream_id": 14, "priority": 4294967291, "context_id": 1},
        {"kind": "kernel", "name": "spin", "start": 1000, "end": 9000, "queued": 400, "stream_id": 13,
         "context_id": 1, "device_id": 0, "correlation_id": 17, "grid": [528, 1, 1], "priority": "n/a"},
        {"kind": "kernel", "name": "spin", "start": 5000, "end": 6000, "stream_id": 14, "context_id": 1,
         "device_id": 0, "correlation_id": 18, "grid_x": 264, "grid_y": 1, "grid_z": 1},
        {"kind": "driver", "name": "cuLaunchKernel", "start": 300, "correlation_id": 17},
    ]


def record_doc() -> dict[str, Any]:
    cols = ["launch", "block", "t_entry", "t_exit", "sm_entry", "sm_exit", "status", "max_gap_ns", "sum_gap_ns",
            "n_gaps"]
    return {"gpcheck_record": 1, "workload": "priority", "variant": "v", "device": {"pid": 7, "name": "H200"},
            "clock": {"base_ns": 1000}, "params": {}, "streams": [{"name": "low", "cuda_priority": 0},
                                                                   {"name": "high", "cuda_priority": -5}],
            "launches": [{"seq": 0, "kernel": "low:0", "kidx": 0, "stream": "low", "grid": 2, "t_launch": 5},
                         {"seq": 1, "kernel": "high:0", "kidx": 0, "stream": "high", "grid": 1, "t_launch": 8}],
            "blocks": {"columns": cols, "rows": [[0, 0, 10, 50, 1, 1, 0, 3, 3, 1], [0, 1, 12, 60, 2, 3, 1, 0, 0, 0],
                                                 [1, 0, 20, 30, 4, 4, 0, 0, 0, 0]]},
            "host_events": [{"t": 15, "action": "preempt", "meta": {"x": 1}}],
            "gaps": {"columns": ["launch", "block", "t", "length_ns"], "rows": [[0, 0, 20, 5]]},
            "counters": {"a": 1}}


ROCPROF_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Name",
                  "Correlation_Id", "Start_Timestamp", "End_Timestamp", "Workgroup_Size_X", "Workgroup_Size_Y",
                  "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]


def rocprof_rows(n: int = 4) -> list[list[str]]:
    return [["KERNEL_DISPATCH", "Agent 2", str(1 + i % 2), "0", "77", str(i + 1), f"k{i}", str(i + 1),
             str(1000 * i + 10), str(1000 * i + 500), "256", "1", "1", "1000", "1", "1"] for i in range(n)]


def csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    import csv

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def rocprof_case_bytes(rng: random.Random) -> tuple[bytes, str]:
    header = list(ROCPROF_HEADER)
    rows = rocprof_rows(rng.randrange(1, 8))
    op = rng.randrange(6)
    if op == 0 and rows:
        r = rng.choice(rows)
        r[rng.randrange(len(r))] = rng.choice(["", "nan", "inf", "-inf", "1e400", "9" * 5000, "x", "-1", "1.5",
                                               "Agent", "\x00", '"', "1e308"])
        what = "cell"
    elif op == 1:
        del header[rng.randrange(len(header))]
        what = "drop-column"
    elif op == 2 and rows:
        r = rng.choice(rows)
        del r[rng.randrange(len(r)):]
        what = "short-row"
    elif op == 3:
        data = csv_bytes(header, rows) + b'k,"unterminated\n' + b"x" * rng.choice([10, 200_000])
        return data, "unterminated-quote"
    elif op == 4:
        rng.shuffle(header)
        what = "shuffle-header"
    else:
        data, w = mutate_bytes(rng, csv_bytes(header, rows))
        return data, "bytes:" + w
    return csv_bytes(header, rows), what


def make_nsys(path: str, rng: random.Random) -> str:
    """A small nsys export whose kernel rows carry randomly typed values."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "gemm"), (3, "cudaLaunchKernel")])
    cols = ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "shortName",
            "gridX", "gridY", "gridZ"]
    if rng.random() < 0.2:
        cols.remove(rng.choice(cols))
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(c + ' INTEGER' for c in cols)})")
    pid = (4242 << 24) | 7
    for i in range(rng.randrange(1, 5)):
        full = {"start": 1000 * i, "end": 1000 * i + 500, "deviceId": 0, "contextId": 1, "streamId": 13 + i % 2,
                "correlationId": 10 + i, "globalPid": pid, "shortName": 1, "gridX": 2, "gridY": 1, "gridZ": 1}
        if rng.random() < 0.5:
            full[rng.choice(cols)] = rng.choice([None, "x", 1.5, 2**63 - 1, -(2**63), b"\x00\xff", 1e300, "", "12"])
        con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * len(cols))})",
                    [full[c] for c in cols])
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, globalTid INTEGER, correlationId INTEGER, "
                "nameId INTEGER)")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?)",
                (rng.choice([500, None, "x", 1.5]), pid + 1, rng.choice([10, "y", None]), rng.choice([3, "z", 99])))
    con.execute("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER, processId INTEGER, contextId INTEGER, "
                "priority INTEGER)")
    con.execute("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?,?,?,?)",
                (13, 4242, 1, rng.choice([0, 4294967291, "x", None, 2**62, -(2**62)])))
    if rng.random() < 0.5:
        con.execute("CREATE TABLE GPU_CONTEXT_SWITCH_EVENTS (tag INTEGER, contextId INTEGER, timestamp INTEGER, "
                    "globalPid INTEGER)")
        con.execute("INSERT INTO GPU_CONTEXT_SWITCH_EVENTS VALUES (?,?,?,?)",
                    (rng.choice([1, "t", None]), 1, rng.choice([2000, None, "q"]), pid))
        con.execute("CREATE TABLE ENUM_GPU_CTX_SWITCH (id INTEGER, name TEXT)")
        con.execute("INSERT INTO ENUM_GPU_CTX_SWITCH VALUES (?, ?)", (rng.choice([1, "one", None]), "START"))
    con.commit()
    con.close()
    return path


def make_rocpd(path: str, rng: random.Random) -> str:
    u = "_0000"
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE rocpd_kernel_dispatch{u} (id INTEGER PRIMARY KEY, pid INTEGER, agent_id INTEGER, "
                "kernel_id INTEGER, dispatch_id INTEGER, queue_id INTEGER, stream_id INTEGER, start BIGINT, end BIGINT, "
                "workgroup_size_x INTEGER, grid_size_x INTEGER, event_id INTEGER)")
    for i in range(rng.randrange(1, 4)):
        row = [i + 1, 1, 1, 1, i + 1, 1, 0, 1000 * (i + 1), 1000 * (i + 1) + 500, 64, 640, 1]
        if rng.random() < 0.6:
            row[rng.randrange(1, len(row))] = rng.choice([None, "x", 1.5, 2**63 - 1, b"\xff", 1e300, "7"])
        con.execute(f"INSERT INTO rocpd_kernel_dispatch{u} VALUES ({','.join('?' * 12)})", row)
    con.execute(f"CREATE TABLE rocpd_info_kernel_symbol{u} (id INTEGER PRIMARY KEY, kernel_name TEXT, "
                "display_name TEXT)")
    con.execute(f"INSERT INTO rocpd_info_kernel_symbol{u} VALUES (1, 'k.kd', ?)", (rng.choice(["k", None, 5]),))
    con.execute(f"CREATE TABLE rocpd_info_agent{u} (id INTEGER PRIMARY KEY, absolute_index INTEGER, type TEXT)")
    con.execute(f"INSERT INTO rocpd_info_agent{u} VALUES (1, ?, 'GPU')", (rng.choice([2, None, "a", 1.5]),))
    con.execute(f"CREATE TABLE rocpd_info_process{u} (id INTEGER PRIMARY KEY, pid INTEGER)")
    con.execute(f"INSERT INTO rocpd_info_process{u} VALUES (1, ?)", (rng.choice([31337, "p", None]),))
    con.execute(f"CREATE TABLE rocpd_event{u} (id INTEGER PRIMARY KEY, correlation_id INTEGER)")
    con.execute(f"INSERT INTO rocpd_event{u} VALUES (1, ?)", (rng.choice([70, "c", 1.5, None, 2**63 - 1]),))
    con.execute(f"CREATE TABLE rocpd_string{u} (id INTEGER PRIMARY KEY, string TEXT)")
    con.execute(f"INSERT INTO rocpd_string{u} VALUES (1, 'hipLaunchKernel')")
    con.execute(f"CREATE TABLE rocpd_region{u} (id INTEGER PRIMARY KEY, start BIGINT, name_id INTEGER, "
                "event_id INTEGER)")
    con.execute(f"INSERT INTO rocpd_region{u} VALUES (1, ?, 1, 1)", (rng.choice([900, "s", None, 1e300]),))
    con.commit()
    con.close()
    return path


def _sqlite_bytes(rng: random.Random, make: Callable[[str, random.Random], str]) -> tuple[bytes, str]:
    with tempfile.TemporaryDirectory() as d:
        data = Path(make(str(Path(d) / "x.sqlite"), rng)).read_bytes()
    r = rng.random()
    if r < 0.6:
        return data, "values"
    if r < 0.8:
        b = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            b[rng.randrange(100, len(b))] = rng.randrange(256)
        return bytes(b), "page-flip"
    return data[: rng.randrange(16, len(data))], "truncate"


_JSON_DOCS: dict[str, Callable[[], Any]] = {"kineto": kineto_doc, "chrome": chrome_doc, "cupti": cupti_doc,
                                            "record": record_doc}


def import_case(rng: random.Random, fmt: str) -> Case:
    if fmt in _JSON_DOCS:
        doc = _JSON_DOCS[fmt]()
        r = rng.random()
        if r < 0.7:
            doc, what = mutate_obj(rng, doc, rng.randrange(1, 4))
            data = dump_json(rng, doc)
        elif r < 0.8:
            d = rng.choice([1000, 5000, 100_000])
            data, what = b"[" * d + b"]" * d, f"deep{d}"
        else:
            data, what = mutate_bytes(rng, dump_json(rng, doc, indent=1))
        name = "in.json"
    elif fmt == "rocprof":
        data, what = rocprof_case_bytes(rng)
        name = "in.csv"
    else:
        data, what = _sqlite_bytes(rng, make_nsys if fmt == "nsys" else make_rocpd)
        name = "in.sqlite"
    if rng.random() < 0.2:
        data, w2 = gzip_damage(rng, data) if rng.random() < 0.5 else (gzip.compress(data, mtime=0), "gzip")
        what += "+" + w2
    out = "o.jsonl.gz" if rng.random() < 0.3 else "o.jsonl"
    argv = ["import", name, "--out", out] + (["--format", fmt] if rng.random() < 0.5 else [])
    return Case(fmt, what, {name: data}, argv, name, [out])
