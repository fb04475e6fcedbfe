"""The project's declarative experiments (see :mod:`approxtheory.experiment`).

Run ``approxtheory experiment list`` to see them, ``approxtheory experiment run NAME [--profile
quick|full] [--device cpu|cuda]`` to run one, ``approxtheory experiment plot NAME`` to redraw its
plots from the CSV.
"""

from . import constructions, headcount_training, identifiability_training  # noqa: F401
