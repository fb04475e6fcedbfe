"""Benchmarks: the figures ``approxtheory bench ...`` prints (never timed unit tests), one
module per benchmark; importing the package imports none of them.

- :mod:`approxtheory.bench.model`: ``bench model`` (forward throughput of one attention layer
  against a minimal reference), ``bench planted``, ``bench identifiability`` and the timing
  side of ``bench search``;
- :mod:`approxtheory.bench.search`: the panel of constructions whose worst-case error is known
  exactly, and how much of it :func:`approxtheory.measure.sup_error` finds (``bench search``);
- :mod:`approxtheory.bench.bracket`: the certified upper bracket against the known worst case
  and naive interval propagation (``bench bracket``);
- :mod:`approxtheory.bench.train`: training steps per second against a plain hand-written loop
  (``bench train``);
- :mod:`approxtheory.bench.gated`: CPU seconds per trained model that passes the
  training-adequacy gate (``bench train --gated``);
- :mod:`approxtheory.bench.sweep`: cells per second of the runner's executors (``bench sweep``);
- :mod:`approxtheory.bench.threads`: the project's workloads at the default thread policy, one
  thread and all cores (``bench threads``).

The command line is :mod:`approxtheory.commands.bench`; ``bench verify`` times the whole
``approxtheory verify`` there.
"""
