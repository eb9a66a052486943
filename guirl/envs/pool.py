"""A pool of N environments in worker processes, stepping in parallel.

Each worker process builds one environment with ``make_env(name, **kwargs)``
(lazily, at its first command) and serves ``reset`` / ``step`` / ``call``
commands over a pipe. The caller submits commands to several workers, then
collects whichever answers first (:meth:`EnvPool.wait`), so N browsers
render while the policy thinks about another episode.

Failure handling (nothing but the affected episode is lost):

- the environment raises (a crashed browser or driver, ``BrowserCrashed``):
  the worker answers with the error, closes the environment and builds a
  fresh one at its next command;
- the worker process dies or does not answer within ``timeout_s``: the pool
  kills its process group (so no chromium is orphaned) and starts a new
  worker. Either way the command's :class:`PoolResult` has ``ok=False`` and
  ``error`` says what happened; the caller records the episode as failed.

Workers are their own process-group leaders; start method ``spawn`` keeps
them free of the parent's threads and CUDA state.

:func:`guirl.envs.backends.make_pool` chooses the backend: these processes (``process``, the
default) or Ray actors (``ray``: :mod:`guirl.envs.ray_pool`, same interface).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from guirl.envs.base import make_env

log = logging.getLogger(__name__)

#: Commands a worker serves; ``call`` runs a named method of the environment
#: (fixed names from code, e.g. ``browser_pids``; never model output).
COMMANDS = ("reset", "step", "call")


@dataclass
class PoolResult:
    """A worker's answer: the value (``ok``) or the error, and the seconds the command took there."""

    worker: int
    command: str
    ok: bool
    value: Any = None
    error: str | None = None
    elapsed_s: float = 0.0


def _worker_main(conn: Connection, env_name: str | Callable[..., Any], env_kwargs: dict[str, Any]) -> None:
    os.setpgrp()  # own process group: the pool can kill us with our browsers
    env = None
    while True:
        try:
            command, args = conn.recv()
        except EOFError:
            break
        if command == "close":
            break
        start = time.perf_counter()
        try:
            if env is None:
                env = make_env(env_name, **env_kwargs) if isinstance(env_name, str) else env_name(**env_kwargs)
            if command == "reset":
                value = env.reset(seed=args[0], options=args[1])
            elif command == "step":
                value = env.step(args[0])
            else:
                value = getattr(env, args[0])(*args[1:])
            conn.send((True, value, None, time.perf_counter() - start))
        except Exception as err:  # crash boundary: report, then rebuild the environment
            error = f"{type(err).__name__}: {err}"
            log.warning("environment %s failed in %s: %s", env_name, command, error)
            log.debug("%s", traceback.format_exc())
            conn.send((False, None, error, time.perf_counter() - start))
            env = _discard(env)
    _discard(env)
    conn.close()


def _discard(env: Any) -> None:
    if env is not None:
        try:
            env.close()
        except Exception as err:  # a half-dead browser may fail to close; its processes are killed anyway
            log.warning("closing a failed environment raised %s: %s", type(err).__name__, err)
    return None


class PoolBase:
    """What both pool backends share: ``call`` and the timeout sweep over ``_pending`` (worker ->
    ``(command, submitted, ...)``); subclasses give ``submit``, ``wait``, ``close``, ``_fail`` and ``timeout_s``; both are context managers."""

    _pending: dict[int, tuple]
    timeout_s: float

    def call(self, worker: int, command: str, *args: Any) -> PoolResult:
        """Submit to one idle worker and wait for its answer."""
        self.submit(worker, command, *args)
        while True:
            for result in self.wait():
                if result.worker == worker:
                    return result
                raise RuntimeError("call() used while other commands were pending; use submit()/wait()")

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _expire(self) -> list[PoolResult]:
        """Fail (and restart, through ``_fail``) every worker whose command has run past ``timeout_s``."""
        now, out = time.monotonic(), []
        for worker, (command, submitted, *_) in list(self._pending.items()):
            if now - submitted >= self.timeout_s:
                del self._pending[worker]
                out.append(self._fail(worker, command, f"worker did not answer {command} within {self.timeout_s:g} s"))
        return out


class EnvPool(PoolBase):
    """N environments ``make_env(env_name, **env_kwargs)`` in worker processes.

    Args:
        env_name: registered environment name (``miniwob``, ``sim``), or a
            picklable factory (a module-level class or function) returning an Env.
        num_workers: number of worker processes (one environment each).
        env_kwargs: keyword arguments of the environment factory (picklable).
        timeout_s: a command not answered within this is a dead worker.
    """

    def __init__(
        self,
        env_name: str | Callable[..., Any],
        num_workers: int,
        env_kwargs: dict[str, Any] | None = None,
        timeout_s: float = 120.0,
        start_method: str = "spawn",
    ):
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        self.env_name = env_name
        self.env_kwargs = dict(env_kwargs or {})
        self.timeout_s = timeout_s
        self._ctx = mp.get_context(start_method)
        self._procs: list[Any] = [None] * num_workers
        self._conns: list[Connection | None] = [None] * num_workers
        self._pending: dict[int, tuple[str, float]] = {}  # worker -> (command, submit time)
        self._ready: list[PoolResult] = []  # failures found at submit time
        self.restarts = [0] * num_workers
        for worker in range(num_workers):
            self._start(worker)
        # a pool never closed still takes its browsers down when collected or at exit
        self._finalizer = weakref.finalize(self, _shutdown, self._procs, self._conns)

    @property
    def num_workers(self) -> int:
        return len(self._procs)

    # -- submitting and collecting ------------------------------------------------
    def submit(self, worker: int, command: str, *args: Any) -> None:
        """Send ``command`` (reset(seed, options) / step(action) / call(method, *args)) to a worker."""
        if command not in COMMANDS:
            raise ValueError(f"unknown pool command {command!r}; commands: {COMMANDS}")
        if worker in self._pending:
            raise RuntimeError(f"worker {worker} is still busy with {self._pending[worker][0]!r}; wait() first")
        conn = self._conns[worker]
        assert conn is not None
        try:
            conn.send((command, args))
        except (BrokenPipeError, OSError):  # the worker died while idle
            self._ready.append(self._fail(worker, command, f"worker process died while idle ({self._exit(worker)})"))
            return
        self._pending[worker] = (command, time.monotonic())

    def wait(self, timeout: float | None = None) -> list[PoolResult]:
        """Answers of every worker that has finished (blocks until one has, or ``timeout``)."""
        if self._ready:
            results, self._ready = self._ready, []
            return results
        if not self._pending:
            return []
        deadline = min(t for _, t in self._pending.values()) + self.timeout_s
        limit = max(0.0, deadline - time.monotonic())
        if timeout is not None:
            limit = min(limit, timeout)
        by_conn = {self._conns[w]: w for w in self._pending}
        results = []
        for conn in wait(list(by_conn), timeout=limit):
            worker = by_conn[conn]  # type: ignore[index]
            command, _ = self._pending.pop(worker)
            try:
                ok, value, error, elapsed = conn.recv()  # type: ignore[union-attr]
            except (EOFError, OSError):
                results.append(self._fail(worker, command, f"worker process died during {command} ({self._exit(worker)})"))
                continue
            results.append(PoolResult(worker, command, ok, value, error, elapsed))
        return results + self._expire()

    def worker_pids(self, worker: int) -> list[int]:
        """The worker process and everything it started (browser, driver)."""
        return descendant_pids(self._procs[worker].pid, include_self=True)

    # -- lifecycle ----------------------------------------------------------------
    def close(self) -> None:
        """Ask every worker to close its environment; kill those that do not exit within 10 s."""
        self._finalizer()  # runs _shutdown once
        self._pending.clear()
        self._ready.clear()

    def _start(self, worker: int) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=_worker_main, args=(child, self.env_name, self.env_kwargs), daemon=True, name=f"guirl-env-{worker}"
        )
        proc.start()
        child.close()
        self._procs[worker], self._conns[worker] = proc, parent

    def _kill(self, worker: int) -> None:
        proc = self._procs[worker]
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the worker and its browsers
        except ProcessLookupError:  # no group yet (killed before its setpgrp) or already gone
            proc.kill()
        proc.join(timeout=10)

    def _exit(self, worker: int) -> str:
        proc = self._procs[worker]
        proc.join(timeout=1)
        return f"exit code {proc.exitcode}"

    def _restart(self, worker: int) -> None:
        self._kill(worker)
        if self._conns[worker] is not None:
            self._conns[worker].close()  # type: ignore[union-attr]
        self.restarts[worker] += 1
        self._start(worker)

    def _fail(self, worker: int, command: str, error: str) -> PoolResult:
        log.warning("restarting environment worker %d: %s", worker, error)
        self._restart(worker)
        return PoolResult(worker, command, False, None, error, 0.0)


def _shutdown(procs: list[Any], conns: list[Connection | None], grace_s: float = 10.0) -> None:
    """Ask workers to close their environments (their drivers reap the browsers), then kill the rest."""
    for conn in conns:
        if conn is not None:
            try:
                conn.send(("close", ()))
            except (BrokenPipeError, OSError):
                continue  # that worker is already gone
    deadline = time.monotonic() + grace_s
    for proc in procs:
        if proc is not None:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue  # exited meanwhile
                proc.join(timeout=1)


def descendant_pids(pid: int, include_self: bool = False) -> list[int]:
    """``pid``'s descendants (Linux /proc), depth first."""
    found = [pid] if include_self else []
    stack = [pid]
    while stack:
        current = stack.pop()
        children_files = Path(f"/proc/{current}/task").glob("*/children")
        for children_file in children_files:
            try:
                children = [int(c) for c in children_file.read_text().split()]
            except (FileNotFoundError, ProcessLookupError):
                continue
            found.extend(children)
            stack.extend(children)
    return found


def kill_pids(pids: list[int]) -> None:
    """SIGKILL each process that still exists."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # already exited
        try:
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
        except ChildProcessError:
            continue
