"""Timing and profiling of one function, for the benchmark entry points.

With one torch thread every operator runs in the calling thread, so its CPU
time is the cost of the work whatever else the machine runs; functions are
timed in interleaved rounds against a reference so that slow-downs hit all
alike.
"""
import os
import statistics
import time
from typing import Callable, Dict, List, Optional

# the profiler's kineto backend logs to stderr at every start otherwise
os.environ.setdefault('KINETO_LOG_LEVEL', '5')

import torch  # noqa: E402
from mmengine.utils import ProgressBar  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402


def profile_call(fn: Callable[[], None]) -> Dict[str, int]:
    """Peak memory and op count of one call of ``fn``.

    Returns:
        dict: ``memory``, the peak bytes allocated by torch on the CPU during
        the call above what was allocated when it started, and ``ops``, the
        number of ATen operators it dispatched (those not called by another
        ATen operator; autograd's backward functions included).
    """
    with profile(activities=[ProfilerActivity.CPU],
                 profile_memory=True) as prof:
        fn()
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == '[memory]')
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    ops = sum(
        e.name.startswith('aten::') and
        not (e.cpu_parent and e.cpu_parent.name.startswith('aten::'))
        for e in prof.events())
    return dict(memory=peak, ops=ops)


def costliest_operator(fn: Callable[[], None], calls: int = 20) -> str:
    """The ATen operator with the most own CPU time over ``calls`` calls of
    ``fn``, and its share of their total.

    An operator's time is the median of its calls times their number, so
    that a call preempted by another process does not make it the costliest.
    """
    times: Dict[str, List[float]] = {}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            fn()
    for event in prof.events():
        if event.name.startswith('aten::'):
            times.setdefault(event.name, []).append(
                event.self_cpu_time_total)
    cost = {k: statistics.median(v) * len(v) for k, v in times.items()}
    top = max(cost, key=cost.get)
    share = 100 * cost[top] / sum(cost.values())
    return f'{top[len("aten::"):]} ({share:.0f}%)'


def clock() -> Callable[[], float]:
    """The timer: with one torch thread every op runs in the calling
    thread, so its CPU time (``time.thread_time``) is the cost of the work,
    free of the time other processes of a shared machine take; with more
    threads, wall-clock time (``time.perf_counter``)."""
    return time.thread_time if torch.get_num_threads() == 1 \
        else time.perf_counter


def calls_per_round(fn: Callable[[], None], seconds: float) -> int:
    """How many calls of ``fn`` take about ``seconds``."""
    timer = clock()
    fn()
    start = timer()
    fn()
    once = max(timer() - start, 1e-7)
    return max(1, int(seconds / once))


def interleaved(fns: Dict[str, Callable[[], None]], reference: str,
                rounds: int, seconds: float,
                progress: Optional[ProgressBar] = None) -> Dict[str, dict]:
    """Time every function against ``reference`` in interleaved rounds.

    Each round times every function once (about ``seconds`` of calls each,
    the order rotating between rounds), so a slow-down of the machine hits
    all of them alike.

    Returns:
        dict: Per function the median time per call in seconds (``time``)
        and the median over rounds of its time over the reference's in the
        same round (``ratio``).
    """
    timer = clock()
    calls = {name: calls_per_round(fn, seconds) for name, fn in fns.items()}
    times = {name: [] for name in fns}
    names = list(fns)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = timer()
            for _ in range(calls[name]):
                fns[name]()
            times[name].append((timer() - start) / calls[name])
        if progress is not None:
            progress.update()
    return {
        name: dict(
            time=statistics.median(t),
            ratio=statistics.median(
                a / b for a, b in zip(t, times[reference])))
        for name, t in times.items()
    }
