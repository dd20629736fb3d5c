"""Record a PyTorch training loop with inference bursts on a second stream, under the PyTorch
profiler (Kineto). argv: OUTDIR VARIANT INFER_CUDA_PRIORITY. Writes OUTDIR/kineto_<VARIANT>.json.gz
and OUTDIR/kineto_<VARIANT>.meta.json (streams, priorities, workload parameters)."""
import gzip, json, os, sys, threading, time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

out, variant, infer_prio = sys.argv[1], sys.argv[2], int(sys.argv[3])
STEPS, W, B = int(os.environ.get("STEPS", 150)), 4096, 8192
IW, IB, PERIOD = 2048, 256, 0.003


def mkstream(prio):
    try:
        import cupy as cp
        s = cp.cuda.Stream(non_blocking=True, priority=prio)
        got = int(cp.cuda.runtime.streamGetPriority(s.ptr))
        return s, torch.cuda.ExternalStream(s.ptr), got
    except Exception as e:
        print("cupy stream failed, torch stream:", e, flush=True)
        t = torch.cuda.Stream(priority=prio)
        return None, t, int(t.priority)


torch.manual_seed(0)
torch.cuda.init()
keep_tr, s_tr, p_tr = mkstream(0)
keep_in, s_in, p_in = mkstream(infer_prio)
with torch.cuda.stream(s_tr):
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(W, W), nn.GELU())]).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(B, W, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(B, W, device="cuda", dtype=torch.bfloat16)
with torch.cuda.stream(s_in):
    imodel = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(IW, IW), nn.ReLU())]).cuda().to(torch.bfloat16).eval()
    q = torch.randn(IB, IW, device="cuda", dtype=torch.bfloat16)


def train_step():
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()


def infer():
    with torch.no_grad():
        return imodel(q).softmax(-1)


# warm-up (cuBLAS handles, autotuning, allocator) outside the profile
with torch.cuda.stream(s_tr):
    for _ in range(3):
        train_step()
with torch.cuda.stream(s_in):
    for _ in range(3):
        infer()
torch.cuda.synchronize()

stop = threading.Event()
bursts = []


def server():
    torch.cuda.set_device(0)
    with torch.cuda.stream(s_in):
        time.sleep(0.01)
        while not stop.is_set():
            t0 = time.time_ns()
            infer()
            s_in.synchronize()
            bursts.append((t0, time.time_ns()))
            time.sleep(PERIOD)


acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if os.environ.get("WITH_CPU") else [ProfilerActivity.CUDA]
prof = profile(activities=acts)
th = threading.Thread(target=server)
t0 = time.time()
with prof:
    th.start()
    with torch.cuda.stream(s_tr):
        for _ in range(STEPS):
            train_step()
    s_tr.synchronize()
    stop.set()
    th.join()
    torch.cuda.synchronize()
wall = time.time() - t0
path = os.path.join(out, f"kineto_{variant}.json")
prof.export_chrome_trace(path)
doc = json.load(open(path))
os.unlink(path)
evs = doc["traceEvents"]
kern = [e for e in evs if e.get("cat") == "kernel"]
rt = [e for e in evs if e.get("cat") in ("cuda_runtime", "cuda_driver")]
corr_tid = {e["args"].get("correlation"): e.get("tid") for e in rt if isinstance(e.get("args"), dict)}
streams = {}
for e in kern:
    st = e["args"].get("stream")
    d = streams.setdefault(st, {"kernels": 0, "host_tids": {}})
    d["kernels"] += 1
    tid = str(corr_tid.get(e["args"].get("correlation")))
    d["host_tids"][tid] = d["host_tids"].get(tid, 0) + 1
with gzip.GzipFile(path + ".gz", "wb", mtime=0) as g:
    g.write(json.dumps(doc, separators=(",", ":")).encode())
meta = {"variant": variant, "wall_s": wall, "steps": STEPS, "train": {"width": W, "batch": B, "layers": 4, "dtype": "bf16",
        "optimizer": "AdamW fused", "cuda_priority": p_tr, "stream_ptr": s_tr.cuda_stream},
        "infer": {"width": IW, "batch": IB, "layers": 3, "period_s": PERIOD, "cuda_priority": p_in,
                  "stream_ptr": s_in.cuda_stream, "bursts": len(bursts),
                  "burst_latency_us": sorted((b - a) // 1000 for a, b in bursts)},
        "server_thread_native_id": th.native_id, "main_thread_native_id": threading.main_thread().native_id,
        "kineto_streams": streams, "kernels": len(kern), "runtime_events": len(rt),
        "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
        "activities": [str(a) for a in acts]}
json.dump(meta, open(os.path.join(out, f"kineto_{variant}.meta.json"), "w"), indent=1)
print(variant, "kernels", len(kern), "runtime", len(rt), "wall", round(wall, 2), "gz", os.path.getsize(path + ".gz"),
      {k: v["kernels"] for k, v in streams.items()}, "prio", p_tr, p_in, flush=True)
