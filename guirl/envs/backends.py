"""Choosing an environment pool backend: worker processes (:mod:`guirl.envs.pool`) or Ray actors
(:mod:`guirl.envs.ray_pool`, optional extra ``ray``). Above both, so neither imports the other's chooser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from guirl.envs.pool import EnvPool
from guirl.extras import MissingExtra

#: Pool backends of :func:`make_pool`: worker processes on this machine, or Ray actors (``pip install 'guirl[ray]'``).
POOL_BACKENDS = ("process", "ray")


def make_pool(
    env_name: str | Callable[..., Any],
    num_workers: int,
    env_kwargs: dict[str, Any] | None = None,
    timeout_s: float = 120.0,
    *,
    backend: str = "process",
    **options: Any,
) -> Any:
    """An environment pool on ``backend``: ``process`` (:class:`~guirl.envs.pool.EnvPool`, the default) or ``ray``
    (:class:`guirl.envs.ray_pool.RayEnvPool`); both serve ``run_parallel`` the same way.

    ``options`` go to the backend's constructor (``start_method`` for ``process``; ``address``,
    ``num_cpus``, ``num_cpus_per_worker``, ``actor_options``, ``init_kwargs`` for ``ray``).
    """
    if backend not in POOL_BACKENDS:
        raise ValueError(f"unknown pool backend {backend!r}; choose one of {list(POOL_BACKENDS)}")
    if backend == "process":
        return EnvPool(env_name, num_workers, env_kwargs, timeout_s, **options)
    try:
        import ray  # noqa: F401  (optional: only this backend needs it)
    except ImportError:
        raise MissingExtra("the 'ray' environment pool backend (env_backend=ray)", "ray") from None
    from guirl.envs.ray_pool import RayEnvPool

    return RayEnvPool(env_name, num_workers, env_kwargs, timeout_s, **options)
