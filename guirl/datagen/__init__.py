"""Training data built by running a policy in a world (InfiGUI-R1 error-recovery scenarios).

See :mod:`guirl.datagen.error_recovery` and docs/error_recovery.md.
"""

from guirl.datagen.error_recovery import ErrorRecoveryConfig, build_error_recovery_data

__all__ = ["ErrorRecoveryConfig", "build_error_recovery_data"]
