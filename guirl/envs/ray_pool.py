"""A pool of N environments in Ray actors: :class:`~guirl.envs.pool.EnvPool`'s interface on a Ray cluster.

Each worker is one Ray actor holding one environment ``make_env(name, **kwargs)``
(built lazily, at its first command). :meth:`RayEnvPool.submit` calls the
actor and keeps the ObjectRef; :meth:`RayEnvPool.wait` collects whichever
answers are ready (``ray.wait``). ``run_parallel`` drives it exactly like the
process pool; choose the backend with ``make_pool(..., backend="ray")``.

Failure handling is the process pool's (nothing but the affected episode is lost):

- the environment raises: the actor answers with the error (``ok=False``),
  closes the environment and builds a fresh one at its next command;
- the actor dies (``RayActorError``: its process crashed, was killed, its node
  went away) or does not answer within ``timeout_s``: the pool kills it
  (``ray.kill``; on this machine also the processes it started, e.g. chromium)
  and starts a new actor; the command's :class:`PoolResult` has ``ok=False`` and
  ``error`` says what happened.

Ray is started locally (``ray.init(num_cpus=..., include_dashboard=False,
log_to_driver=False)``) unless it is initialised already; pass ``address``
(or set ``RAY_ADDRESS``) to join an existing cluster. The pool never shuts Ray
down: other pools in the process may share it (``ray.shutdown()`` is yours to call).
"""

from __future__ import annotations

import logging
import os
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

try:
    import ray
    from ray.exceptions import GetTimeoutError, RayActorError, RayError
except ImportError as err:  # pragma: no cover - exercised only without ray
    from guirl.extras import MissingExtra

    raise MissingExtra("the ray environment pool", "ray", note=str(err)) from None

from guirl.envs.base import make_env
from guirl.envs.pool import COMMANDS, PoolBase, PoolResult, descendant_pids, kill_pids

log = logging.getLogger(__name__)


class _EnvActor:
    """One environment in a Ray actor; serves the pool's commands (see ``guirl.envs.pool._worker_main``)."""

    def __init__(self, env_name: str | Callable[..., Any], env_kwargs: dict[str, Any]):
        self.env_name, self.env_kwargs = env_name, env_kwargs
        self.env: Any = None

    def where(self) -> tuple[int, str]:
        """This actor's process id and Ray node id."""
        return os.getpid(), ray.get_runtime_context().get_node_id()

    def run(self, command: str, args: tuple[Any, ...]) -> tuple[bool, Any, str | None, float]:
        start = time.perf_counter()
        try:
            if self.env is None:
                name = self.env_name
                self.env = make_env(name, **self.env_kwargs) if isinstance(name, str) else name(**self.env_kwargs)
            if command == "reset":
                value = self.env.reset(seed=args[0], options=args[1])
            elif command == "step":
                value = self.env.step(args[0])
            else:
                value = getattr(self.env, args[0])(*args[1:])
            return True, value, None, time.perf_counter() - start
        except Exception as err:  # crash boundary: report, then rebuild the environment
            error = f"{type(err).__name__}: {err}"
            log.warning("environment %s failed in %s: %s", self.env_name, command, error)
            log.debug("%s", traceback.format_exc())
            self.close()
            return False, None, error, time.perf_counter() - start

    def close(self) -> None:
        env, self.env = self.env, None
        if env is not None:
            try:
                env.close()
            except Exception as err:  # a half-dead browser may fail to close; its processes are killed anyway
                log.warning("closing a failed environment raised %s: %s", type(err).__name__, err)


# no automatic restarts or retries: a dead actor is the pool's to replace (and its episode is failed)
_RemoteEnvActor = ray.remote(max_restarts=0, max_task_retries=0)(_EnvActor)


def ensure_ray(address: str | None = None, num_cpus: int | None = None, **init_kwargs: Any) -> None:
    """``ray.init`` unless Ray is initialised: join ``address`` (or ``RAY_ADDRESS``), else start a light local instance."""
    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    kwargs: dict[str, Any] = {"log_to_driver": False, "ignore_reinit_error": True}
    if address is None:  # a local instance: no dashboard, only the CPUs asked for
        kwargs.update(num_cpus=num_cpus, include_dashboard=False)
    else:
        kwargs["address"] = address
    kwargs.update(init_kwargs)
    ray.init(**kwargs)


class RayEnvPool(PoolBase):
    """N environments ``make_env(env_name, **env_kwargs)``, one per Ray actor.

    Args:
        env_name: registered environment name (``miniwob``, ``sim``), or a
            factory returning an Env (serialised by Ray; a module-level class or
            function importable on the workers).
        num_workers: number of actors (one environment each).
        env_kwargs: keyword arguments of the environment factory.
        timeout_s: a command not answered within this is a dead actor.
        address: Ray cluster to join (default: ``RAY_ADDRESS``, else a local instance);
            ignored when Ray is initialised already.
        num_cpus: CPUs of a local instance started here (default: all of this machine).
        num_cpus_per_worker: CPUs each actor reserves (default: Ray's, 0 while running).
        actor_options: further ``.options(...)`` of every actor (``resources``,
            ``runtime_env``, ``scheduling_strategy``, ...).
        init_kwargs: further ``ray.init`` arguments (only when this pool starts Ray).
    """

    def __init__(
        self,
        env_name: str | Callable[..., Any],
        num_workers: int,
        env_kwargs: dict[str, Any] | None = None,
        timeout_s: float = 120.0,
        address: str | None = None,
        num_cpus: int | None = None,
        num_cpus_per_worker: float | None = None,
        actor_options: dict[str, Any] | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ):
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        ensure_ray(address, num_cpus, **(init_kwargs or {}))
        self.env_name = env_name
        self.env_kwargs = dict(env_kwargs or {})
        self.timeout_s = timeout_s
        self._options = dict(actor_options or {})
        if num_cpus_per_worker is not None:
            self._options["num_cpus"] = num_cpus_per_worker
        self._actors: list[Any] = [None] * num_workers
        self._where: list[Any] = [None] * num_workers  # ObjectRef, then (pid, node id)
        self._pending: dict[int, tuple[str, float, Any]] = {}  # worker -> (command, submit time, ObjectRef)
        self.restarts = [0] * num_workers
        for worker in range(num_workers):
            self._start(worker)
        # a pool never closed still takes its actors down when collected or at exit
        self._finalizer = weakref.finalize(self, _shutdown, self._actors)

    @property
    def num_workers(self) -> int:
        return len(self._actors)

    def actor(self, worker: int) -> Any:
        """The Ray actor handle of a worker (changes when the worker is restarted)."""
        return self._actors[worker]

    # -- submitting and collecting ------------------------------------------------
    def submit(self, worker: int, command: str, *args: Any) -> None:
        """Send ``command`` (reset(seed, options) / step(action) / call(method, *args)) to a worker."""
        if command not in COMMANDS:
            raise ValueError(f"unknown pool command {command!r}; commands: {COMMANDS}")
        if worker in self._pending:
            raise RuntimeError(f"worker {worker} is still busy with {self._pending[worker][0]!r}; wait() first")
        ref = self._actors[worker].run.remote(command, args)
        self._pending[worker] = (command, time.monotonic(), ref)

    def wait(self, timeout: float | None = None) -> list[PoolResult]:
        """Answers of every worker that has finished (blocks until one has, or ``timeout``)."""
        if not self._pending:
            return []
        deadline = min(t for _, t, _ in self._pending.values()) + self.timeout_s
        limit = max(0.0, deadline - time.monotonic())
        if timeout is not None:
            limit = min(limit, timeout)
        by_ref = {ref: w for w, (_, _, ref) in self._pending.items()}
        refs = list(by_ref)
        ready, _ = ray.wait(refs, num_returns=1, timeout=limit)
        if ready:  # and whatever else has finished meanwhile
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        results = []
        for ref in ready:
            worker = by_ref[ref]
            command, _, _ = self._pending.pop(worker)
            try:
                ok, value, error, elapsed = ray.get(ref)
            except RayActorError as err:
                results.append(self._fail(worker, command, f"worker actor died during {command} ({_reason(err)})"))
                continue
            except RayError as err:  # e.g. the answer could not be serialised or fetched
                results.append(self._fail(worker, command, f"worker actor failed in {command} ({_reason(err)})"))
                continue
            results.append(PoolResult(worker, command, ok, value, error, elapsed))
        return results + self._expire()

    def worker_pids(self, worker: int) -> list[int]:
        """The actor's process and, when it runs on this machine, everything it started (browser, driver)."""
        pid, node = self._locate(worker)
        return descendant_pids(pid, include_self=True) if node == _this_node() else [pid]

    # -- lifecycle ----------------------------------------------------------------
    def close(self) -> None:
        """Ask every actor to close its environment; kill them all (those still busy after 10 s included)."""
        self._finalizer()  # runs _shutdown once
        self._pending.clear()

    def _start(self, worker: int) -> None:
        actor = _RemoteEnvActor.options(**self._options).remote(self.env_name, self.env_kwargs)
        self._actors[worker] = actor
        self._where[worker] = actor.where.remote()  # answered before any command: actor calls run in order

    def _locate(self, worker: int, timeout: float | None = None) -> tuple[int, str]:
        where = self._where[worker]
        if not isinstance(where, tuple):
            where = self._where[worker] = tuple(ray.get(where, timeout=self.timeout_s if timeout is None else timeout))
        return where

    def _kill(self, worker: int) -> None:
        actor = self._actors[worker]
        if actor is None:
            return
        pids: list[int] = []
        try:  # the browsers it started are killed with it when it runs here
            pid, node = self._locate(worker, timeout=5.0)
            if node == _this_node():
                pids = descendant_pids(pid)
        except (RayError, GetTimeoutError) as err:  # died before it could say where it runs
            log.debug("cannot locate worker %d: %s", worker, err)
        ray.kill(actor, no_restart=True)
        kill_pids(pids)

    def _restart(self, worker: int) -> None:
        self._kill(worker)
        self.restarts[worker] += 1
        self._start(worker)

    def _fail(self, worker: int, command: str, error: str) -> PoolResult:
        log.warning("restarting environment worker %d: %s", worker, error)
        self._restart(worker)
        return PoolResult(worker, command, False, None, error, 0.0)


def _this_node() -> str:
    return ray.get_runtime_context().get_node_id()


def _reason(err: Exception) -> str:
    """The first line of a Ray error, plus the line that says why an actor died."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    first = lines[0] if lines else type(err).__name__
    why = next((line for line in lines[1:] if line.startswith("The actor is dead because")), None)
    if why:  # drop Ray's generic advice (OOM killer, ray stop, SIGSEGV) that follows the facts
        why = why.split(" Some common causes", 1)[0]
    text = f"{type(err).__name__}: {first}" + (f" {why}" if why else "")
    return text if len(text) <= 400 else text[:397] + "..."


def _shutdown(actors: list[Any], grace_s: float = 10.0) -> None:
    """Ask actors to close their environments (their drivers reap the browsers), then kill them."""
    if not ray.is_initialized():
        return  # Ray is already down, and its actors with it
    live = [a for a in actors if a is not None]
    refs = []
    for actor in live:
        try:
            refs.append(actor.close.remote())
        except RayError:
            continue  # that actor is already gone
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=grace_s)
    for actor in live:
        try:
            ray.kill(actor, no_restart=True)
        except (RayError, ValueError):
            continue  # already gone
    actors[:] = [None] * len(actors)


__all__ = ["RayEnvPool", "ensure_ray"]
