"""The step matcher and its rules: the one definition of "this action matches
that one", below every layer that needs it (envs, rewards, judges, datagen,
evaluation, trainers). Imports only ``guirl.actions`` and ``guirl.data``.

- :mod:`guirl.matching.rules`: point-vs-target rules of the public evaluators
  (``MATCH_RULES``, :func:`~guirl.matching.rules.point_matches`);
- :mod:`guirl.matching.text`: text-value comparisons (normalisation, word-set
  F1, ANLS);
- :mod:`guirl.matching.step`: :func:`~guirl.matching.step.match_action`, a
  predicted action against a step's valid actions.
"""
