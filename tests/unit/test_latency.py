"""Launch-to-start delay, blocking by running lower-priority work and time-slice periods
(traces/latency.py) in `gpcheck check`: values on hand-made traces, thresholds as violations,
priorities in the source's convention and shortened kernel names in text, whole names in JSON."""

from __future__ import annotations

import json

from gpcheck.checker.cli.command import main
from gpcheck.traces.format import Event, TraceHeader, write_trace
from gpcheck.traces.names import PriorityNames, short_kernel_name
from gpcheck.traces.observe import ObserveOptions, observe_events

LONG = ("void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::launch_clamp_scalar("
        "at::TensorIteratorBase&)::{lambda()#1}, std::array<char*, 2ul> >(int, std::array<char*, 2ul>)")
HEADER = TraceHeader(model="nvidia_streams", extra={"source": {"format": "cupti", "streams": [
    {"stream": 0, "priority": 0, "cuda_priority": 0}, {"stream": 1, "priority": 5, "cuda_priority": -5}]}})


def kernel(corr: int, stream: int, level: int, launch: int, start: int, end: int, name: str = "k") -> list[Event]:
    a = {"stream": stream, "priority": level}
    m = {"corr": corr, "name": name}
    return [Event("launch", a, None, launch, m), Event("start", a, None, start, m), Event("end", a, None, end, m)]


def events() -> list[Event]:
    """Low kernel 1 runs 0..1000; high kernel 2 launched at 100 starts at 1000 (blocked 900 by the
    running kernel 1); low kernel 3 launched at 0 starts at 1000 too; high kernel 4 launched at
    1100, eligible when 2 ends at 1200, starts at 1300 (low kernel 3, started at 1000 before it was
    eligible, still running: blocked 100)."""
    evs = kernel(1, 0, 0, 0, 0, 1000) + kernel(2, 1, 5, 100, 1000, 1200, LONG) + kernel(3, 0, 0, 0, 1000, 1500) \
        + kernel(4, 1, 5, 1100, 1300, 1400)
    return sorted(evs, key=lambda e: e.t)


def results(opts: ObserveOptions = ObserveOptions()):  # type: ignore[no-untyped-def]
    return {p.name: p for p in observe_events(HEADER, events(), "t", None, opts).results}


def test_launch_delay_per_stream_and_level() -> None:
    d = results()["launch_delay"]
    assert d.status == "ok"
    by_stream = {s["stream"]: s for s in d.stats["streams"]}
    assert by_stream[1]["max_ns"] == 900 and by_stream[1]["median_ns"] == 200 and by_stream[1]["count"] == 2
    assert by_stream[1]["source_priority"] == -5 and by_stream[0]["source_priority"] == 0
    assert by_stream[1]["max_kernel"].startswith(LONG)  # the whole name in the data
    assert [p["source_priority"] for p in d.stats["priorities"]] == [-5, 0]
    v = results(ObserveOptions(max_delay_ns=500))["launch_delay"]
    assert v.status == "violated" and v.count == 2  # kernel 2 (900) and kernel 3 (1000)


def test_blocking_by_running_work() -> None:
    b = results()["blocking"]
    assert b.status == "info" and sorted(f["duration_ns"] for f in b.findings) == [100, 900]
    assert b.worst == {"blocking_ns": 900, "kernel": f"{LONG} (corr 2)"}
    assert b.stats["all"]["count"] == 2 and b.stats["blocked"] == 2
    assert results(ObserveOptions(max_blocking_ns=900))["blocking"].status == "info"
    over = results(ObserveOptions(max_blocking_ns=500))["blocking"]
    assert over.status == "violated" and [f["duration_ns"] for f in over.findings] == [900]


def test_text_shows_cuda_priorities_and_short_names_json_the_whole_name(tmp_path, capsys) -> None:
    f = str(tmp_path / "t.jsonl")
    write_trace(f, HEADER, events())
    assert main(["check", f]) == 3  # timeslice: a CUPTI trace has no per-block stamps or context switches
    out = capsys.readouterr().out
    assert "timeslice           unknown" in out
    assert "CUDA priority -5" in out and "priority 5" not in out.replace("priority -5", "")
    assert "at::native::vectorized_elementwise_kernel<…>" in out and "launch_clamp_scalar" not in out
    assert main(["check", f, "--max-blocking", "500", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    r = {p["property"]: p for p in doc["results"]}
    assert r["blocking"]["status"] == "violated" and r["blocking"]["findings"][0]["kernel"] == f"{LONG} (corr 2)"
    assert r["launch_delay"]["stats"]["streams"][1]["p99_ns"] == 900
    assert main(["check", f, "--max-delay", "2000", "--property", "launch_delay"]) == 0


def test_short_names() -> None:
    assert short_kernel_name(LONG) == "at::native::vectorized_elementwise_kernel<…>"
    assert short_kernel_name("nvjet_sm90_tst_64x64_TNT") == "nvjet_sm90_tst_64x64_TNT"
    assert short_kernel_name("void (anonymous namespace)::softmax_warp_forward<float, 11>(float*, int)") == \
        "softmax_warp_forward<…>"
    assert len(short_kernel_name("x" * 200)) == 60


def test_priority_names_follow_the_source() -> None:
    assert PriorityNames(HEADER).label(1, 5) == "CUDA priority -5"
    kineto = TraceHeader(extra={"source": {"format": "kineto", "streams": [{"stream": 0, "priority": 0}]}})
    assert PriorityNames(kineto).source(0, 0) == 0 and PriorityNames(kineto).source(1, 3) == -3
    assert PriorityNames(TraceHeader()).label(0, 2) == "priority 2"  # simulated traces: the model's level


def test_timeslice_periods_per_stream() -> None:
    a = {"stream": 0, "priority": 0}
    m = {"corr": 1, "pid": 7}
    evs = [Event("launch", a, None, 0, m), Event("start", a, None, 10, m)]
    for i in range(3):  # switched out 2 ms every 4 ms
        evs.append(Event("gap", {}, None, 2_000_000 + 4_000_000 * i, {"corr": 1, "pid": 7, "length_ns": 2_000_000}))
    evs.append(Event("end", a, None, 20_000_000, m))
    t = {p.name: p for p in observe_events(TraceHeader(), evs, "t").results}["timeslice"]
    st = t.stats
    assert st["switched_out"]["count"] == 3 and st["switched_out"]["max_ns"] == 2_000_000
    assert st["running_slices"]["median_ns"] == 2_000_000 and st["streams"][0]["stream"] == 0


def test_python_api_and_reproduction_command() -> None:
    from gpcheck.checker.api.reproduce import check_command
    from gpcheck.checker.api.trace_api import check_trace

    r = check_trace((HEADER, events()), max_blocking_ns=500, max_delay_ns=5000)
    st = {p.name: p.status for p in r.results}
    assert st["blocking"] == "violated" and st["launch_delay"] == "ok" and r.exit_code == 1
    assert check_command("t.jsonl", max_blocking_ns=500, max_delay_ns=5000) == \
        "gpcheck check t.jsonl --max-delay 5000 --max-blocking 500"
