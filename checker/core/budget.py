"""The resource budget of one command: a deadline, a memory limit and cancellation (SIGINT,
SIGTERM), in one place that every long-running loop polls cheaply.

Why a watchdog thread: a Python signal handler runs only when the main thread executes
bytecode, and the main thread may sit inside Z3 (C code) for minutes. So the handlers of
`activate` also write the signal number to a pipe (`signal.set_wakeup_fd`), which the
watchdog reads at once; the watchdog also checks the deadline and the process's resident
memory every `TICK` seconds. When one of them trips, the budget *stops*:

1. `stopped()` returns the reason (one attribute read: engines poll it in their loops and end
   with a partial report, `unknown` with that reason);
2. every registered interrupter runs, again every tick (checker/engines/smt/session.py registers one
   that interrupts Z3, so a running check returns `unknown` at once);
3. outside a `cooperative()` region (parsing, compiling, writing) nothing would report
   partially, so the main thread gets `Stop` raised at once; inside one, after `GRACE`
   seconds if the engine has not returned by then. `Stop` unwinds through every `with` and
   `finally`, which removes temporary output files (traces/atomic.py).
4. As a last resort, `HARD_EXIT` seconds after the stop, the watchdog removes the temporary
   output files itself and ends the process.

A program that never calls `activate` (the Python API, the tests) has an unlimited budget and
the polls cost one attribute read.

Limit: the watchdog is a Python thread, so a single C call that holds the GIL (a huge `sorted`,
freeing a dict of millions of states) delays everything, the hard exit included, until it
returns; C calls that release it (Z3, I/O, sleeps) do not."""

from __future__ import annotations

import math
import os
import select
import signal
import sys
import threading
import time
import _thread
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Callable, Iterator

TICK = 0.05  # seconds between the watchdog's checks
GRACE = 0.75  # seconds a cooperative region gets to return a partial report
HARD_EXIT = 3.0  # seconds after a stop at which the watchdog ends the process itself
DEFAULT_MEMORY_FRACTION = 0.5  # default --max-memory: this share of the machine's memory
SIGNALS = (signal.SIGINT, signal.SIGTERM)

INTERRUPTED, TIMEOUT, MEMORY = "interrupted", "timeout", "memory"


class Stop(BaseException):
    """Raised in the main thread when the budget stops outside a cooperative region (or an
    engine did not return within the grace period). A BaseException, like KeyboardInterrupt,
    so that no `except Exception` swallows it."""

    def __init__(self, reason: str, text: str, signum: int | None):
        super().__init__(text)
        self.reason = reason
        self.text = text
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.reason, self.signum)


def exit_code_for(reason: str | None, signum: int | None) -> int:
    """130 for SIGINT, 143 for SIGTERM (128 + the signal), 3 (unknown) for a timeout or the
    memory limit."""
    if reason == INTERRUPTED and signum is not None:
        return 128 + signum
    return 3


@dataclass
class _State:
    deadline: float | None = None  # time.monotonic() value
    timeout: float | None = None
    max_memory: int | None = None  # bytes of resident memory
    reason: str | None = None  # INTERRUPTED, TIMEOUT, MEMORY once stopped
    text: str | None = None  # the reason as a report says it
    signum: int | None = None
    stopped_at: float | None = None
    forced: bool = False


_state = _State()
_lock = threading.Lock()
_cooperative = 0
_interrupters: list[Callable[[], None]] = []
_cleanups: list[Callable[[], None]] = []
_leave_hooks: list[Callable[[], None]] = []
_report_since: float | None = None  # time.monotonic() at which `writing_report` began, or None


# ------------------------------------------------------------------------------ polled by engines
def stopped() -> str | None:
    """The stop reason as a report says it ("interrupted (SIGINT)", "timeout after 5 s",
    "memory limit ... reached"), or None while the budget holds. Cheap: poll it in loops."""
    return _state.text


def reason() -> str | None:
    """INTERRUPTED, TIMEOUT or MEMORY once stopped, else None."""
    return _state.reason


def check() -> None:
    """Raise `Stop` if the budget has stopped (for loops that have no partial report)."""
    if _state.text is not None:
        raise Stop(_state.reason or INTERRUPTED, _state.text, _state.signum)


def remaining() -> float | None:
    """Seconds left before the deadline or the calling thread's `time_limit`, whichever comes
    first (None: neither); 0 once stopped."""
    if _state.text is not None:
        return 0.0
    end = getattr(_local, "end", None)
    if _state.deadline is not None and (end is None or _state.deadline < end):
        end = _state.deadline
    if end is None or end == math.inf:
        return None
    return max(0.0, end - time.monotonic())


# NOTE(time-limit): the Python API's `timeout` (`verify(spec, timeout=...)`) has no command
# budget and no watchdog to stop it, and the Z3 engines spend much of their time in Python
# (encoding a fold over thousands of elements, mining lemmas) where no Z3 timeout applies. So
# an engine run is wrapped in `time_limit(timeout)` and those phases call `poll()` in their
# loops: inside the region, once the limit passed or the budget stopped, it raises `Stop`,
# which the engine turns into `unknown` for the properties it had not decided yet
# (checker/api/smt_dispatch.py `run_smt`). Outside every such region `poll` does nothing: the same
# encoder serves trace replay (checker/engines/smt/tracefill.py, deadend.py), whose own loops decide
# how a stop ends it. Per thread, so that API calls in several threads keep their own limits.
# What no poll reaches: one Z3 check that ignores its own timeout. bmc on a 1,000-element fold
# of 16-bit values (`a: [0..999] -> 0..30000`, `sum` in an invariant) with timeout=5 returned
# after 9.1 s, inside one Solver.check at depth 0; interrupting the context every 50 ms from
# 5 s on did not end that check sooner either (2026-11-24, load 6). Only a check in another
# process that can be killed would bound it; not done.
_local = threading.local()
LIMIT_TEXT = "timeout"  # a `time_limit` passed: the reason a report gives, as a Z3 timeout's


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """A region whose `poll`s raise `Stop` once the budget stopped or `seconds` from now have
    passed (None: no limit of its own); an inner limit never extends an outer one, and the
    outer one is back on leaving."""
    saved = getattr(_local, "end", None)
    end = math.inf if seconds is None else time.monotonic() + seconds
    _local.end = end if saved is None else min(saved, end)
    try:
        yield
    finally:
        _local.end = saved


def poll() -> None:
    """Inside a `time_limit` region: raise `Stop` once the budget has stopped (as `check`) or
    the region's limit has passed (reason TIMEOUT, text LIMIT_TEXT). For the loops of phases
    with no partial result of their own, which must end on the Python API's timeout too
    (NOTE(time-limit)). Cheap: a thread-local read, an attribute read and a clock read."""
    end = getattr(_local, "end", None)
    if end is None:
        return
    if _state.text is not None:
        raise Stop(_state.reason or INTERRUPTED, _state.text, _state.signum)
    if time.monotonic() >= end:
        raise Stop(TIMEOUT, LIMIT_TEXT, None)


def limit_time(timeout: float | None) -> None:
    """Set the command's deadline `timeout` seconds from now (a command calls this once its
    input is known; a later, looser limit does not extend an earlier one)."""
    if timeout is None:
        return
    end = time.monotonic() + timeout
    if _state.deadline is None or end < _state.deadline:
        _state.deadline, _state.timeout = end, timeout


def signal_exit_code() -> int | None:
    """128 + the signal that stopped the run, or None."""
    return 128 + _state.signum if _state.reason == INTERRUPTED and _state.signum is not None else None


@contextmanager
def cooperative() -> Iterator[None]:
    """A region whose loops poll `stopped()` and return a partial report: a stop does not
    raise `Stop` inside it (unless the region overruns `GRACE`)."""
    global _cooperative
    _cooperative += 1
    try:
        yield
    finally:
        _cooperative -= 1


@contextmanager
def uncooperative() -> Iterator[None]:
    """A region with no partial result to give (a JIT compile, seconds of library code): a stop
    raises `Stop` in it at once, also when it came before the region, instead of waiting for a
    poll that comes only after it."""
    global _cooperative
    saved, _cooperative = _cooperative, 0
    try:
        check()
        yield
    finally:
        _cooperative = saved


@contextmanager
def writing_report() -> Iterator[None]:
    """A region that prints what had finished before a stop (a fanned-out command's rows): no
    `Stop` is raised in it, so the report comes out whole, and the hard exit waits `HARD_EXIT`
    seconds from the region's start rather than from the stop. Outside every cooperative region
    the watchdog raises `Stop` again every `GRACE` seconds after a stop; one of those landing in
    the middle of printing lost the report of an interrupted sweep on a loaded machine."""
    global _report_since
    saved, _report_since = _report_since, time.monotonic()
    try:
        yield
    finally:
        _report_since = saved


def on_stop(fn: Callable[[], None]) -> None:
    """Call `fn` (from the watchdog thread) every tick while the budget is stopped: it must be
    thread-safe and cheap, e.g. Z3's `Context.interrupt`."""
    if fn not in _interrupters:
        _interrupters.append(fn)


def on_leave(fn: Callable[[], None]) -> None:
    """Call `fn` whenever a budget is left (the watchdog stopped): undo what the interrupters
    left behind, so that a later command run in the same process (tests, sweeps, the API)
    starts clean. Z3's interrupt stays pending on its context until a call consumes it, and
    the call it cancels may answer wrongly (NOTE(stale-interrupt) in checker/engines/smt/session.py)."""
    if fn not in _leave_hooks:
        _leave_hooks.append(fn)


def on_hard_exit(fn: Callable[[], None]) -> None:
    """Call `fn` before the watchdog ends a process that did not stop by itself (traces/atomic.py
    removes its temporary files)."""
    if fn not in _cleanups:
        _cleanups.append(fn)


# ------------------------------------------------------------------------------ stopping
def _stop(why: str, text: str, signum: int | None = None) -> bool:
    with _lock:
        if _state.text is not None:
            return False
        _state.reason, _state.signum = why, signum
        _state.stopped_at = time.monotonic()
        _state.text = text
    return True


def request_stop(why: str, text: str, signum: int | None = None) -> None:
    """Stop the budget (the watchdog and the signal handlers call this; tests may too)."""
    _stop(why, text, signum)


def _signal_text(signum: int) -> str:
    return f"{INTERRUPTED} ({signal.Signals(signum).name})"


def _in_finaliser(frame: FrameType | None) -> bool:
    """Is the main thread inside a `__del__`? An exception raised there is printed and dropped
    by Python, so the watchdog forces `Stop` again later instead."""
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _stop(INTERRUPTED, _signal_text(signum), signum)
    if (_state.forced or _cooperative == 0) and not _in_finaliser(frame) and _report_since is None:
        _state.forced = True
        raise Stop(_state.reason or INTERRUPTED, _state.text or _signal_text(signum), _state.signum)


def resident_memory() -> int | None:
    """This process's resident memory in bytes (None where /proc is not available)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def machine_memory() -> int | None:
    """Physical memory, or the cgroup's limit where that is smaller (None if unknown)."""
    total = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
            if text.isdigit() and (total is None or int(text) < total):
                total = int(text)
        except OSError:
            continue
    return total


def default_max_memory() -> int | None:
    total = machine_memory()
    return None if total is None else int(total * DEFAULT_MEMORY_FRACTION)


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


class _Watchdog(threading.Thread):
    def __init__(self, wake_fd: int | None, enforce: bool = True):
        super().__init__(name="gpcheck-budget", daemon=True)
        self.wake_fd = wake_fd
        self.enforce = enforce  # False: a task's budget (`task_limit`): interrupters only
        self.done = threading.Event()
        self.forced_at = -GRACE

    def run(self) -> None:
        while not self.done.is_set():
            self._wait()
            if self.done.is_set():
                return
            self._check_limits()
            if _state.text is not None:
                self._enforce()

    def _wait(self) -> None:
        if self.wake_fd is None:
            self.done.wait(TICK)
            return
        try:
            ready, _, _ = select.select([self.wake_fd], [], [], TICK)
            if ready:
                for b in os.read(self.wake_fd, 64):
                    if b in SIGNALS:
                        _stop(INTERRUPTED, _signal_text(b), b)
        except (OSError, ValueError):
            self.done.wait(TICK)

    @staticmethod
    def _check_limits() -> None:
        if _state.text is not None:
            return
        if _state.deadline is not None and time.monotonic() >= _state.deadline:
            _stop(TIMEOUT, f"timeout after {_state.timeout:g} s")
        elif _state.max_memory is not None:
            rss = resident_memory()
            if rss is not None and rss > _state.max_memory:
                _stop(MEMORY, f"memory limit {format_bytes(_state.max_memory)} reached "
                              f"(resident {format_bytes(rss)})")

    def _enforce(self) -> None:
        for fn in list(_interrupters):
            try:
                fn()
            except Exception:  # an interrupter must never kill the watchdog
                pass
        if not self.enforce:
            return
        now = time.monotonic()
        since = now - (_state.stopped_at or now)
        report_since = _report_since  # read once: the main thread may leave the region meanwhile
        if (_cooperative == 0 or since >= GRACE) and now - self.forced_at >= GRACE and report_since is None:
            # runs _on_signal in the main thread at its next bytecode, which raises Stop; again
            # after GRACE if that Stop was lost (raised inside a __del__, which Python ignores)
            self.forced_at = now
            _state.forced = True
            _thread.interrupt_main(signal.SIGINT)
        if since >= HARD_EXIT and (report_since is None or now - report_since >= HARD_EXIT):
            _hard_exit()


def _hard_exit() -> None:
    for fn in list(_cleanups):
        try:
            fn()
        except Exception:
            pass
    try:
        sys.stderr.write(f"gpcheck: {_state.text or INTERRUPTED}: stopped without a report\n")
        sys.stderr.flush()
    finally:
        os._exit(exit_code_for(_state.reason, _state.signum))


_task_lock = threading.Lock()


@contextmanager
def task_limit(timeout: float | None) -> Iterator[None]:
    """One task's deadline on a cluster worker (a trace of `gpcheck replay TRACE...` with
    --timeout): `stopped()` says "timeout after T s" once it passed and Z3 is interrupted, as in
    the single command, but the process is the worker's: no signal handler, no `Stop` raised in
    its main thread, no forced exit. The budget is the process's, so the timed tasks of a worker
    with several threads take turns (the embedded cluster's workers have one thread each)."""
    if timeout is None:
        yield
        return
    with _task_lock, activate(timeout=timeout, enforce=False):
        yield


@contextmanager
def activate(timeout: float | None = None, max_memory: int | None = None, enforce: bool = True) -> Iterator[None]:
    """Run the body under a budget: the deadline `timeout` seconds from now, at most
    `max_memory` bytes resident, SIGINT/SIGTERM caught (only in the main thread). Everything
    is restored afterwards, so the command line can be run in-process (tests). `enforce=False`
    (`task_limit`): no signal handlers, and a stop only sets `stopped()` and runs the interrupters."""
    global _state
    old_state = _state
    _state = _State(
        deadline=None if timeout is None else time.monotonic() + timeout,
        timeout=timeout,
        max_memory=max_memory,
    )
    main = enforce and threading.current_thread() is threading.main_thread()
    handlers: dict[int, object] = {}
    old_wakeup, read_fd, write_fd = -1, None, None
    if main:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        for s in SIGNALS:
            handlers[s] = signal.signal(s, _on_signal)
        old_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    watchdog = _Watchdog(read_fd, enforce)
    watchdog.start()
    try:
        yield
    finally:
        watchdog.done.set()
        if write_fd is not None:
            try:
                os.write(write_fd, b"\0")  # wakes the watchdog's select at once (0 is no signal)
            except OSError:
                pass
        watchdog.join()
        for fn in list(_leave_hooks):
            try:
                fn()
            except Exception:  # a hook must never turn the command's result into an error
                pass
        if main:
            signal.set_wakeup_fd(old_wakeup)
            for s, h in handlers.items():
                signal.signal(s, h)  # type: ignore[arg-type]
            for fd in (read_fd, write_fd):
                if fd is not None:
                    os.close(fd)
        _state = old_state
