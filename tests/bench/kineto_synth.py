"""A synthetic PyTorch profiler (Kineto) Chrome trace of N kernels, shaped like the real ones in
traces/corpus/real/raw/ (kineto_train_infer_priority: CUDA activities of a training loop): per
kernel a `kernel` slice with Kineto's args, its `cudaLaunchKernel`/`cuLaunchKernelEx` slice on a host
thread and the `ac2g` flow pair, every third kernel a memset and its launch, now and then an
`overhead` slice; two streams (13 and 14), Kineto's own multi-line layout, about 1.3 KB per kernel
(the held-back 99,910-kernel trace was 131 MB). Written a buffer at a time, so 10^6 kernels take no
more memory than 10^3. Deterministic for a given N and seed.

    python tests/bench/kineto_synth.py OUT.json N [--seed S] [--gzip]
"""

from __future__ import annotations

import argparse
import gzip
import random
from typing import IO

NAMES = [
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
    "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
    "std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
    "{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<c10::BFloat16, float, "
    "float, c10::BFloat16>, unsigned int, c10::BFloat16, 4, 8> >(at::native::ReduceOp<c10::BFloat16, at::native::MeanOps"
    "<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4, 8>)",
    "void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul> >"
    "(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)",
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, false, false>"
    "(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
]
GRIDS = [([2, 66, 1], [384, 1, 1]), ([32768, 1, 1], [128, 1, 1]), ([1, 528, 1], [512, 1, 1]), ([1, 1, 1], [128, 1, 1]),
         ([256, 1, 1], [32, 4, 1])]
HEAD = """
{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    }
  ],
  "cupti_version": 130001,
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "trace_id": "5A0B1E0C2D3F4A5B8C9D0E1F2A3B4C5D",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [
"""
TAIL = """  {
    "name": "thread_name", "ph": "M", "ts": 4560984772702.576, "pid": 0, "tid": 13,
    "args": {
      "name": "stream 13 "
    }
  },
  {
    "name": "thread_name", "ph": "M", "ts": 4560984772702.576, "pid": 0, "tid": 14,
    "args": {
      "name": "stream 14 "
    }
  },
  {
    "name": "Record Window End", "ph": "i", "s": "g",
    "pid": "", "tid": "", "ts": 4560985609485.039
  }
  ],
  "traceName": "/tmp/synthetic.pt.trace.json"
}
"""


def _us(ns: int) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}"


def write(out: IO[str], n: int, seed: int = 1) -> None:
    """Write the trace of `n` kernels to a text stream."""
    rnd = random.Random(seed)
    out.write(HEAD)
    t_host, t_gpu = 4560984776836_976, 4560984779549_178  # ns; printed as us with 3 decimals
    corr = 30
    buf: list[str] = []
    for i in range(n):
        stream = 14 if i % 7 == 3 else 13
        k = rnd.randrange(len(NAMES))
        grid, block = GRIDS[k]
        if i % 3 == 0:  # a memset and its launch
            corr += 1
            d = 700 + rnd.randrange(600)
            buf.append(f"""  {{
    "ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": {stream},
    "ts": {_us(t_gpu)}, "dur": {_us(d)},
    "args": {{
      "device": 0, "context": 1,
      "stream": {stream}, "correlation": {corr}, "bytes": 4, "memory bandwidth (GB/s)": 0.005208333333333333
    }}
  }},
  {{
    "ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 418, "tid": 1616036160,
    "ts": {_us(t_host)}, "dur": {_us(4000 + rnd.randrange(3000))},
    "args": {{
      "cbid": 51, "correlation": {corr}
    }}
  }},
""")
            t_gpu += d + 2000
            t_host += 9000
        corr += 1
        dur = 1000 + rnd.randrange(400_000)
        launch = "cuLaunchKernelEx" if k == 0 else "cudaLaunchKernel"
        buf.append(f"""  {{
    "ph": "X", "cat": "kernel", "name": "{NAMES[k]}", "pid": 0, "tid": {stream},
    "ts": {_us(t_gpu)}, "dur": {_us(dur)},
    "args": {{
      "queued": 0, "device": 0, "context": 1,
      "stream": {stream}, "correlation": {corr},
      "registers per thread": 32, "shared memory": 0, "blocks per SM": 248.242432, "warps per SM": 992.969727,
      "grid": [{grid[0]}, {grid[1]}, {grid[2]}], "block": [{block[0]}, {block[1]}, {block[2]}],
      "est. achieved occupancy %": 100
    }}
  }},
  {{
    "ph": "f", "id": {corr}, "pid": 0, "tid": {stream}, "ts": {_us(t_gpu)},
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  }},
  {{
    "ph": "X", "cat": "{'cuda_driver' if k == 0 else 'cuda_runtime'}", "name": "{launch}", "pid": 418, "tid": 1616036160,
    "ts": {_us(t_host)}, "dur": {_us(5000 + rnd.randrange(20000))},
    "args": {{
      "cbid": {652 if k == 0 else 211}, "correlation": {corr}
    }}
  }},
  {{
    "ph": "s", "id": {corr}, "pid": 418, "tid": 1616036160, "ts": {_us(t_host)},
    "cat": "ac2g", "name": "ac2g"
  }},
""")
        if i % 11 == 5:
            buf.append(f"""  {{
    "ph": "X", "cat": "overhead", "name": "Command Buffer Full", "pid": -1, "tid": 0,
    "ts": {_us(t_host + 100)}, "dur": {_us(90_000 + rnd.randrange(200_000))}
  }},
""")
        t_host += 7000 + rnd.randrange(30_000)
        t_gpu += dur + 1500 + rnd.randrange(3000)
        t_gpu = max(t_gpu, t_host + 50_000)
        if len(buf) >= 2000:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))
    out.write(TAIL)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kernels", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()
    if a.gzip:
        with gzip.open(a.out, "wt", compresslevel=1) as f:
            write(f, a.kernels, a.seed)
    else:
        with open(a.out, "w") as f:
            write(f, a.kernels, a.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
