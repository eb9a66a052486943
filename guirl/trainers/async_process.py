"""The asynchronous pipeline on separated cores: :class:`ProcessPipeline` runs a
:class:`~guirl.trainers.async_pipeline.StagePipeline` in a process of its own (started with ``spawn``),
optionally pinned to its own CPU cores with one torch thread per core (:func:`pin_threads`), the weights
handed over in shared memory (:class:`SharedWeightSlot`). ComputerSD uses it when ``rollout_cpus`` is set.

Why a process for separated cores: CPU affinity is per thread on Linux, so a rollout thread could be pinned to
a core of its own, but the GIL is per process: with a small model most of a decoding step is Python (module
calls, sampling, the environment), and two threads of one interpreter take turns for it whatever cores they
sit on. A process has its own interpreter, its own torch intra-op pool and its own children (environment
workers, browsers), which inherit its CPU mask.
"""

from __future__ import annotations

import os
import pickle
import queue
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import torch

from guirl.trainers.async_pipeline import PipelineError, StagePipeline, WeightSlot, _cpu_state


# -- separated processes and cores ------------------------------------------------------------------------
def _threads_of_this_process() -> list[int]:
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:  # not Linux: the calling thread only
        return [0]


def pin_threads(cpus: Sequence[int], torch_threads: int | None = None) -> dict[str, Any]:
    """Pin every thread of this process to ``cpus`` (threads started later inherit the mask of the thread
    that starts them, child processes that of their parent) and set torch's intra-op threads to
    ``torch_threads`` (default: one per core). Returns what to hand :func:`unpin_threads` to undo it."""
    if not hasattr(os, "sched_setaffinity"):
        raise RuntimeError("pinning to CPU cores needs os.sched_setaffinity (Linux)")
    cpus = sorted(set(cpus))
    if not cpus:
        raise ValueError("pin_threads: no CPU core given")
    before = {"cpus": os.sched_getaffinity(0), "torch_threads": torch.get_num_threads()}
    for tid in _threads_of_this_process():
        try:
            os.sched_setaffinity(tid, cpus)
        except ProcessLookupError:  # a thread that just ended
            continue
        except OSError as err:
            raise ValueError(f"cannot pin to CPU cores {cpus}: {err}") from err
    torch.set_num_threads(torch_threads or len(cpus))
    return before


def check_cpus(name: str, cpus: Sequence[int]) -> None:
    """``cpus`` must be cores this process may run on now (call it before pinning anything)."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if not set(cpus) <= allowed:
        raise ValueError(f"{name}={sorted(cpus)}: this process may only run on CPU cores {sorted(allowed)}")


def unpin_threads(before: dict[str, Any]) -> None:
    for tid in _threads_of_this_process():
        try:
            os.sched_setaffinity(tid, before["cpus"])
        except (ProcessLookupError, PermissionError):
            continue
    torch.set_num_threads(before["torch_threads"])


class SharedWeightSlot(WeightSlot):
    """A :class:`WeightSlot` another process can read: the weights live in shared memory (one copy, written
    under a process lock by :meth:`publish`), the version in a shared integer. Hand it to the process as an
    argument of :class:`ProcessPipeline` (it travels as shared-memory handles, not as a copy)."""

    def __init__(self, model: torch.nn.Module, version: int = 0):
        import torch.multiprocessing as tmp

        ctx = tmp.get_context("spawn")
        self._lock = ctx.Lock()
        self._state = {k: v.share_memory_() for k, v in _cpu_state(model).items()}
        self._version = ctx.Value("q", version, lock=False)

    @property
    def version(self) -> int:  # type: ignore[override]
        return int(self._version.value)

    def publish(self, model: torch.nn.Module, version: int) -> None:
        model = getattr(model, "module", model)
        with self._lock, torch.no_grad():
            for k, v in model.state_dict().items():
                if k in self._state:
                    self._state[k].copy_(v.detach())
            self._version.value = version

    def sync(self, replica: torch.nn.Module, have: int) -> int:
        with self._lock:
            version = int(self._version.value)
            if version != have:
                replica.load_state_dict(self._state, strict=False)
        return version


def _pipeline_process(build, args, cpus, maxsize, source_name, slots, stop, out) -> None:
    """The body of :class:`ProcessPipeline`'s process. Messages on ``out``: ("ready", info), ("item", pickled
    item, stage times, accounting), ("error", stage, text), ("stopped", pickled left-over items, pickled
    unfinished items, accounting)."""
    stage = "startup"
    pipe = on_stop = None
    parent = os.getppid()
    try:
        if cpus:
            pin_threads(cpus)
            try:
                torch.set_num_interop_threads(1)
            except RuntimeError:  # already used in this process
                pass
        built = build(*args)
        source, stages = built[0], built[1]
        on_stop = built[2] if len(built) > 2 else None
        pipe = StagePipeline(source, stages, maxsize=maxsize, source_name=source_name, slots=slots).start()
        out.put(("ready", {"pid": os.getpid(), "cpus": sorted(os.sched_getaffinity(0)),
                           "torch_threads": torch.get_num_threads()}))
        while not stop.is_set() and os.getppid() == parent:  # an orphan (the trainer was killed) stops
            if pipe.error is not None:
                stage, err = pipe.error
                out.put(("error", stage, "".join(traceback.format_exception(err)).rstrip()))
                return
            try:
                item = pipe.get(timeout=0.1)
            except (TimeoutError, PipelineError):
                continue  # an error is reported at the top of the loop
            # pickled here (by value): a tensor sent as is would be a shared-memory handle that needs this
            # process alive when the trainer unpickles it
            out.put(("item", pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL), pipe.stage_times(),
                     pipe.accounting()))
        stage = "stop"
        pipe.stop()
        out.put(("stopped", pickle.dumps(pipe.left_over), pickle.dumps(pipe.unfinished), pipe.accounting()))
    except BaseException as err:  # noqa: BLE001 - reported to the trainer, which raises it
        out.put(("error", stage, "".join(traceback.format_exception(err)).rstrip()))
        if pipe is not None:
            pipe.stop_event.set()
    finally:
        if on_stop is not None:  # environments: their workers and browsers end with this process
            try:
                on_stop()
            except Exception:  # noqa: BLE001 - nothing left to report to
                pass


class ProcessPipeline:
    """A :class:`StagePipeline` in a process of its own: ``build(*args)`` runs there and returns ``(source,
    stages)`` or ``(source, stages, on_stop)``; ``cpus`` pins that process (every thread, children included)
    with one torch thread per core. ``build`` and ``args`` must be picklable (a module-level function; a
    :class:`SharedWeightSlot` for the weights). The trainer's side has StagePipeline's interface: ``get()``,
    ``stop()``, ``stage_times()``, ``accounting()``, ``left_over`` / ``unfinished`` after the stop (items the
    trainer never saw come back at the stop, so none is lost); ``worker`` is the process's pid, CPU mask
    and torch threads as it reported them."""

    def __init__(self, build: Callable[..., tuple], args: tuple = (), cpus: Sequence[int] | None = None,
                 maxsize: int = 1, source_name: str = "rollout", max_in_flight: int | None = None,
                 start_timeout_s: float = 600.0):
        self.build, self.args, self.cpus = build, args, sorted(cpus) if cpus else None
        self.maxsize, self.source_name, self.max_in_flight = maxsize, source_name, max_in_flight
        self.start_timeout_s = start_timeout_s
        self.worker: dict[str, Any] | None = None
        self.delivered = 0
        self.left_over: list[Any] = []
        self.unfinished: list[Any] = []
        self._times: dict[str, float] = {}
        self._counts: dict[str, int] = {}
        self._process = None
        self._stopped = False

    def start(self) -> ProcessPipeline:
        import torch.multiprocessing as tmp

        ctx = tmp.get_context("spawn")
        self._out = ctx.Queue()
        self._stop = ctx.Event()
        self._slots = ctx.Semaphore(self.max_in_flight) if self.max_in_flight else None
        self._process = ctx.Process(target=_pipeline_process, name=f"guirl-{self.source_name}-side", daemon=True,
                                    args=(self.build, self.args, self.cpus, self.maxsize, self.source_name,
                                          self._slots, self._stop, self._out))
        self._process.start()
        if self.cpus:  # at once, so that its start-up (imports, loading) runs there too; it pins all its threads
            try:
                os.sched_setaffinity(self._process.pid, self.cpus)
            except ProcessLookupError:
                pass
        return self

    def _handle(self, msg: tuple, stopping: bool = False) -> Any:
        kind = msg[0]
        if kind == "ready":
            self.worker = msg[1]
        elif kind == "item":
            self._times, self._counts = msg[2], msg[3]
            return pickle.loads(msg[1])
        elif kind == "error":
            self._stopped = True
            self._stop.set()
            raise PipelineError(f"the {msg[1]!r} stage of the asynchronous pipeline failed (in its process):\n{msg[2]}")
        elif kind == "stopped":
            self.left_over += pickle.loads(msg[1])
            self.unfinished += pickle.loads(msg[2])
            self._counts = msg[3]
        return None

    def wait_ready(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until the process has built its stages; returns what it reported (pid, cpus, torch threads)."""
        deadline = time.perf_counter() + (self.start_timeout_s if timeout is None else timeout)
        while self.worker is None:
            try:
                msg = self._out.get(timeout=0.1)
            except queue.Empty:
                self._check_alive()
                if time.perf_counter() > deadline:
                    raise TimeoutError("the pipeline's process did not start in time") from None
                continue
            if msg[0] == "item":  # not expected before ready; keep it for get()
                raise PipelineError("the pipeline's process sent an item before it was ready")
            self._handle(msg)
        return self.worker

    def _check_alive(self) -> None:
        if self._process is not None and not self._process.is_alive():
            self._stopped = True
            raise PipelineError(f"the asynchronous pipeline's process exited (code {self._process.exitcode}) "
                                "without a report")

    def get(self, timeout: float | None = None) -> Any:
        """The next finished item (re-raises a stage's failure in the process as a PipelineError)."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        if self.worker is None:
            self.wait_ready(None if timeout is None else timeout)
        while True:
            try:
                msg = self._out.get(timeout=0.1)
            except queue.Empty:
                self._check_alive()
                if deadline is not None and time.perf_counter() > deadline:
                    raise TimeoutError(f"no item from the pipeline within {timeout} s") from None
                continue
            item = self._handle(msg)
            if msg[0] == "item":
                if self._slots is not None:
                    self._slots.release()
                self.delivered += 1
                return item

    def stop(self, join_s: float = 60.0) -> None:
        """Stop the process; the items it had finished and the trainer had not taken come back as
        ``left_over``, those still inside it as ``unfinished``."""
        if self._process is None:
            return
        self._stop.set()
        deadline = time.perf_counter() + join_s
        stopped = self._stopped
        while not stopped and time.perf_counter() < deadline:
            try:
                msg = self._out.get(timeout=0.1)
            except queue.Empty:
                if not self._process.is_alive():
                    break
                continue
            if msg[0] == "item":
                self.left_over.append(pickle.loads(msg[1]))
                self._counts = msg[3]
            elif msg[0] == "stopped":
                self._handle(msg)
                stopped = True
            elif msg[0] == "ready":
                self.worker = msg[1]
            # an error during the stop: nothing left to hand back
            elif msg[0] == "error":
                break
        self._process.join(timeout=max(1.0, deadline - time.perf_counter()))
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=5)
        self._stopped = True

    def stage_times(self) -> dict[str, float]:
        return dict(self._times)

    def accounting(self) -> dict[str, int]:
        """The process's produced / finished counts with the trainer's delivered and what came back at the stop."""
        return {"produced": int(self._counts.get("produced", 0)), "finished": int(self._counts.get("finished", 0)),
                "delivered": self.delivered, "left_over": len(self.left_over), "unfinished": len(self.unfinished)}


__all__ = ["ProcessPipeline", "SharedWeightSlot", "check_cpus", "pin_threads", "unpin_threads"]
