"""Evaluation: grounding accuracy, offline step metrics (TM/GR/SR, Pass@k,
Mind2Web Ele.Acc/Op.F1/Step SR), online success with Wilson intervals,
LLM-as-judge outcome evaluation, and the HTML report.

Submodules are imported where used (``guirl.eval.grounding`` etc.) so that
importing :mod:`guirl.eval` stays cheap.
"""

from guirl.eval.stats import pass_at_k, success_rate, wilson_interval

__all__ = ["pass_at_k", "success_rate", "wilson_interval"]
