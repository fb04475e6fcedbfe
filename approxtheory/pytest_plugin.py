"""The pytest plugin of approxtheory (entry point ``pytest11``), loaded wherever the package is
installed.

It adds, and changes nothing else:

* options ``--approxtheory-budget N`` (the search budget of ``measured.sup_error``; default: the
  profile's, 256 for ``quick``, 1024 for ``full``), ``--approxtheory-profile quick|full`` (the
  grid size of generated rate tests and the default budget), ``--approxtheory-cache DIR`` (where
  measurements are cached; also ``APPROXTHEORY_TEST_CACHE``; default ``.approxtheory-cache/`` in
  the pytest rootdir), ``--approxtheory-no-cache``, ``--approxtheory-mutant NAME`` (run a
  generated rate test against one of its claim's declared mutants) and
  ``--approxtheory-threads N`` (the torch threads of rate tests and of ``measured``; default
  ``APPROXTHEORY_THREADS``, else 1: the package's thread policy,
  :func:`approxtheory.resources.threads`, which a test marked ``rate_test`` or using
  ``measured`` runs under; other tests keep torch's setting);
* the session fixture ``measured`` (:class:`approxtheory.testing.Measured`): ``sup_error`` and
  ``nmse`` cached on disk under a key of the model's weights, the task, the search settings and
  the code, so that an unchanged rate test measures nothing on its second run (and
  ``measured.sup_error_value_of``, ``measured.admissible`` and ``measured.assert_claim_rate``,
  what a test written by ``approxtheory new-test`` calls, read a hit without torch or sympy);
* the marker ``rate_test(claim=None, over=None)`` (select with ``-m rate_test``);
* short reports: a test that fails with :class:`~approxtheory.testing.RateAssertionError` or
  :class:`~approxtheory.testing.RateUndecidedError` reports the message (and Hypothesis'
  falsifying example) without the traceback (``--tb=long`` keeps it), and a failed comparison
  of the toolkit's objects shows one-line reprs (:func:`approxtheory.testing.short_repr`), as do
  Hypothesis' falsifying examples.

The module imports nothing heavy (the package's ``__init__`` is lazy): loading it costs an
unrelated pytest run nothing measurable; :mod:`approxtheory.testing` loads when a test uses the
fixture, torch and the catalogue only where a measurement misses the cache.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_collection_finish",
    "measured",
    "pytest_assertrepr_compare",
    "pytest_runtest_makereport",
    "pytest_runtest_call",
    "pytest_terminal_summary",
    "CACHE_ENV",
    "DEFAULT_CACHE",
]

#: the environment variable naming the cache folder (the option wins)
CACHE_ENV = "APPROXTHEORY_TEST_CACHE"
#: the cache folder, relative to the pytest rootdir, when neither option nor variable is set
DEFAULT_CACHE = ".approxtheory-cache"

_MEASURED = pytest.StashKey["object"]()
_SHORT_TYPES = {
    ("approxtheory.constructions._base", "Construction"),
    ("approxtheory.model.config", "ModelConfig"),
    ("approxtheory.model.transformer", "Transformer"),
    ("approxtheory.measure", "SupErrorResult"),
    ("approxtheory.testing", "PowerLawFit"),
}
_RATE_ERRORS = ("RateAssertionError", "RateUndecidedError")


def _budget(text: str) -> int:
    try:
        v = int(str(text).strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})")
    return v


def _name(text: str) -> str:
    if not str(text).strip() or "\x00" in str(text):
        raise argparse.ArgumentTypeError(f"must be a non-empty name (got {text!r})")
    return str(text).strip()


def pytest_addoption(parser) -> None:
    group = parser.getgroup("approxtheory", "approxtheory rate tests")
    group.addoption(
        "--approxtheory-budget",
        type=_budget,
        default=None,
        metavar="N",
        help="search budget of the `measured` fixture's sup_error (default: the profile's, "
        "256 quick, 1024 full)",
    )
    group.addoption(
        "--approxtheory-profile",
        choices=("quick", "full"),
        default="quick",
        help="grid size of generated rate tests and the default budget (default: quick)",
    )
    group.addoption(
        "--approxtheory-cache",
        default=None,
        metavar="DIR",
        help=f"folder of cached measurements (default: ${CACHE_ENV}, else {DEFAULT_CACHE}/ "
        "in the rootdir)",
    )
    group.addoption(
        "--approxtheory-no-cache",
        action="store_true",
        default=False,
        help="measure every time (read and write no cache)",
    )
    group.addoption(
        "--approxtheory-mutant",
        type=_name,
        default=None,
        metavar="NAME",
        help="run generated rate tests against their claim's declared mutant NAME (they "
        "should fail)",
    )
    group.addoption(
        "--approxtheory-threads",
        type=_budget,
        default=None,
        metavar="N",
        help="torch threads of rate tests and of the `measured` fixture (default: "
        "$APPROXTHEORY_THREADS, else 1; approxtheory.resources.threads)",
    )


def _pretty(obj, p, cycle) -> None:  # a Hypothesis pretty-printer
    from approxtheory.testing import short_repr

    p.text(short_repr(obj))


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "rate_test(claim=None, over=None): a rate test of a claim, measured with the "
        "`measured` fixture (approxtheory)",
    )
    from .errors import ConfigError
    from .resources import set_threads

    try:  # the package's thread policy; a bad count or APPROXTHEORY_THREADS: one line
        set_threads(config.getoption("approxtheory_threads", None))
    except ConfigError as e:
        raise pytest.UsageError(str(e)) from None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A rate test (the ``rate_test`` marker) or a test using the ``measured`` fixture runs
    with the package's torch thread count (:func:`approxtheory.resources.threads`, 1 by
    default); any other test is left as it is."""
    uses = "measured" in getattr(item, "fixturenames", ())
    if not uses and item.get_closest_marker("rate_test") is None:
        yield
        return
    from .resources import using_threads

    with using_threads():
        yield


def _register_printers() -> None:
    """One-line falsifying examples: Hypothesis' printers for the toolkit's types, registered
    by name (nothing of the package is imported), where the tests import Hypothesis."""
    if "hypothesis" not in sys.modules:
        return
    try:
        from hypothesis.vendor import pretty

        for module, name in _SHORT_TYPES:
            pretty.for_type_by_name(module, name, _pretty)
    except (ImportError, AttributeError):  # pragma: no cover - another Hypothesis
        pass


def pytest_collection_finish(session) -> None:
    _register_printers()


def _cache_dir(config) -> Path | None:
    if config.getoption("approxtheory_no_cache"):
        return None
    opt = config.getoption("approxtheory_cache") or os.environ.get(CACHE_ENV, "").strip()
    if opt:
        p = Path(opt).expanduser()
        return p if p.is_absolute() else Path(config.invocation_params.dir) / p
    return Path(config.rootpath) / DEFAULT_CACHE


@pytest.fixture(scope="session")
def measured(request):
    """:class:`approxtheory.testing.Measured` configured by the ``--approxtheory-*`` options:
    ``measured.sup_error(construction)``, ``measured.nmse(construction)`` (cached on disk),
    ``measured.budget``, ``measured.profile``, ``measured.points`` (grid size) and
    ``measured.mutant``."""
    config = request.config
    if _MEASURED not in config.stash:
        from approxtheory.testing import Measured

        config.stash[_MEASURED] = Measured(
            _cache_dir(config),
            budget=config.getoption("approxtheory_budget"),
            profile=config.getoption("approxtheory_profile"),
            mutant=config.getoption("approxtheory_mutant"),
        )
    return config.stash[_MEASURED]


def _is_short_type(obj) -> bool:
    t = type(obj)
    return any((c.__module__, c.__name__) in _SHORT_TYPES for c in t.__mro__)


def pytest_assertrepr_compare(config, op, left, right):
    """One-line reprs when a comparison of the toolkit's objects fails."""
    if not (_is_short_type(left) or _is_short_type(right)):
        return None
    from approxtheory.testing import short_repr

    return [f"{short_repr(left)} {op} {short_repr(right)}"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A rate assertion's failure reports its message (and Hypothesis' notes), not the
    traceback, unless ``--tb=long`` or ``--tb=native`` asks for it."""
    outcome = yield
    excinfo = call.excinfo
    if excinfo is None or type(excinfo.value).__name__ not in _RATE_ERRORS:
        return
    if type(excinfo.value).__module__ != "approxtheory.testing":
        return
    if item.config.getoption("tbstyle", "auto") in ("long", "native"):
        return
    rep = outcome.get_result()
    if not rep.failed:
        return
    e = excinfo.value
    entry = excinfo.traceback[-1] if excinfo.traceback else None
    for tb in reversed(excinfo.traceback or []):  # the test's own line, not the library's
        if Path(str(tb.path)) == Path(str(item.path)):
            entry = tb
            break
    path = item.location[0]
    if entry is not None and Path(str(entry.path)) == Path(str(item.path)):
        where = f"{path}:{entry.lineno + 1}"
    elif entry is not None:
        where = f"{entry.path}:{entry.lineno + 1}"
    else:
        where = path
    # the message first: pytest's short summary shows the first line
    lines = [str(e), *(str(n) for n in getattr(e, "__notes__", ())), f"{where}: {type(e).__name__}"]
    rep.longrepr = "\n".join(lines)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    m = config.stash.get(_MEASURED, None)
    if m is not None and getattr(m, "used", False):
        terminalreporter.write_line(m.summary())
