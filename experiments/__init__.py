"""The project's declarative experiments (see :mod:`approxtheory.experiment`); importing this
package registers them with the runner.

Run ``approxtheory experiment list`` to see them, ``approxtheory experiment run NAME [--profile
quick|full] [--device cpu|cuda]`` to run one, ``approxtheory experiment plot NAME`` to redraw its
plots from the CSV.

Installed as ``approxtheory.experiments`` from the top-level folder ``experiments/`` (see
``[tool.setuptools.package-dir]`` in pyproject.toml): no generic top-level ``experiments`` name
goes into site-packages. Imported under a second name, every experiment would register twice.
"""

from approxtheory.errors import require_installed_name

# e.g. `import experiments` from the repo root
require_installed_name(__name__, "approxtheory.experiments", "the built-in experiments")

from . import (  # noqa: E402, F401
    constructions,
    headcount_trained,
    headcount_training,
    identifiability_training,
    infoflow_trained,
    prism_paired,
    tradeoffs_budget,
    tradeoffs_cuts,
    tradeoffs_layers,
    tradeoffs_saturation,
)
