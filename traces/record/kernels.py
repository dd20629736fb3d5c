"""CUDA C++ source of the recorder's kernels (compiled on the device by CuPy through NVRTC).

Why in-kernel stamps: CUPTI/nsys kernel records give one start and end per kernel and hide both
block-level arbitration and time-slice preemption (research/gpu_traces.md 5.3-5.4). Each block
here stamps `%globaltimer` (ns, the GPU's global clock) and `%smid` at entry and exit, and thread 0
logs the longest jump between consecutive timer reads (a block that was switched out sees a jump).

`work` is the one workload kernel. Per block it writes REC_WORDS u64 words at `rec + 8*blockIdx`:

    0 t_entry   1 t_exit   2 sm_entry | sm_exit << 16 | status << 32   3 max_gap_ns
    4 sum of gaps > gap_thr   5 number of gaps > gap_thr   6 kernel index   7 unused

status: 0 completed its work, 1 returned at entry because the preempt flag was set (REEF's
flag-checking `.be` kernels), 2 killed mid-way (the flag was seen while spinning: how the
recorder emulates REEF's wavefront reset, which NVIDIA GPUs do not offer to user code).

`entered[kidx]` counts blocks that passed the entry check, `completed[kidx]` blocks that finished
their work: these are the per-kernel execution counters in device memory that say whether a
logical kernel ran twice (completed > grid). When `gaps` is not null, thread 0 also logs up to
`max_gaps` (start, length) pairs per block for gaps above `gap_thr`.
"""

REC_WORDS = 8
STATUS_COMPLETED, STATUS_EXITED, STATUS_KILLED = 0, 1, 2

SOURCE = r"""
extern "C" __device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
extern "C" __device__ __forceinline__ unsigned int smid() {
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

extern "C" __global__ void work(const unsigned int* flag, unsigned long long* rec,
                                unsigned int* entered, unsigned int* completed, int kidx,
                                unsigned long long spin_ns, int honour_flag, int killable,
                                unsigned long long gap_thr, unsigned long long* gaps, int max_gaps)
{
    __shared__ volatile int st;
    __shared__ unsigned long long t_entry;
    __shared__ unsigned int sm_entry;
    if (threadIdx.x == 0) {
        t_entry = gtimer();
        sm_entry = smid();
        int s = 0;
        if (honour_flag && *((volatile const unsigned int*)flag) != 0u) s = 1;
        if (s == 0) atomicAdd(&entered[kidx], 1u);
        st = s;
    }
    __syncthreads();
    unsigned long long maxgap = 0, sumgap = 0, ngap = 0;
    if (st == 0) {
        unsigned long long deadline = t_entry + spin_ns, prev = t_entry, now;
        unsigned int it = 0;
        unsigned long long* g = gaps ? gaps + 2ull * max_gaps * blockIdx.x : 0;
        do {
            now = gtimer();
            if (threadIdx.x == 0) {
                unsigned long long d = now - prev;
                if (d > maxgap) maxgap = d;
                if (d > gap_thr) {
                    if (g && ngap < (unsigned long long)max_gaps) { g[2 * ngap] = prev; g[2 * ngap + 1] = d; }
                    sumgap += d; ngap += 1;
                }
                prev = now;
                if (killable && ((++it) & 63u) == 0u && *((volatile const unsigned int*)flag) != 0u) st = 2;
            }
        } while (now < deadline && st == 0);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t_exit = gtimer();
        unsigned int sm_exit = smid();
        int s = st;
        if (s == 0) atomicAdd(&completed[kidx], 1u);
        unsigned long long* r = rec + 8ull * blockIdx.x;
        r[0] = t_entry; r[1] = t_exit;
        r[2] = (unsigned long long)sm_entry | ((unsigned long long)sm_exit << 16) | ((unsigned long long)s << 32);
        r[3] = maxgap; r[4] = sumgap; r[5] = ngap; r[6] = (unsigned long long)kidx; r[7] = 0;
    }
}

extern "C" __global__ void stamp(unsigned long long* out)
{
    out[0] = gtimer();
    out[1] = smid();
}
"""
