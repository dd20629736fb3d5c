"""GPU recorder, run on the device machine: `python3 -m gpcheck.traces.record all --out DIR`.

Records real NVIDIA executions with in-kernel `%globaltimer`/`%smid` stamps (and a Kineto/CUPTI
trace where PyTorch is installed): a stream-priority workload, an emulation of GPreempt/REEF's
kernel_offset rewind with per-kernel execution counters in device memory, and two processes
time-slicing the GPU. Needs CuPy; nothing else in gpcheck imports this package.
Raw recordings are converted by `gpcheck.traces.importers.record` (`gpcheck import --format record`).
"""
