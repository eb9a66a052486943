"""Data construction: building training data with models, judges and the built-in world.

``guirl.data`` is only the schema, I/O and adapters; everything that runs a
policy, a teacher, a judge or an evaluator to make data lives here:
:mod:`~guirl.datagen.spatial`, :mod:`~guirl.datagen.bottleneck`,
:mod:`~guirl.datagen.teachers`, :mod:`~guirl.datagen.oracle_reasoning`,
:mod:`~guirl.datagen.reasoning` (InfiGUI-R1 reasoning injection,
docs/reasoning_injection.md), :mod:`~guirl.datagen.error_recovery`
(InfiGUI-R1 error-recovery scenarios, docs/error_recovery.md) and
:mod:`~guirl.datagen.explore` (LiteGUI multi-solution exploration,
docs/explore.md).

Submodules are imported on use (``from guirl.datagen.explore import ...``), so
a light one (the verification web app) does not pay for torch.
"""

__all__ = ["ErrorRecoveryConfig", "build_error_recovery_data"]


def __getattr__(name: str):
    if name in __all__:
        from guirl.datagen import error_recovery

        return getattr(error_recovery, name)
    raise AttributeError(f"module 'guirl.datagen' has no attribute {name!r}")
