"""Cached measurements: :class:`Measured` (the pytest fixture ``measured``), its on-disk store."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from ..errors import ConfigError
from .claim_rates import _claim_rate_terms, assert_claim_rate
from .digests import _update_array, model_digest, task_digest
from .rates import PowerLawFit, _is_number

#: search budget of ``measured.sup_error`` and the grid size of generated tests, per profile
#: (``quick`` matches ``verify``'s quick profile)
PROFILES = {"quick": {"budget": 256, "points": 5}, "full": {"budget": 1024, "points": 9}}


# ------------------------------------------------------------------------------- the cache
#: the cache scheme (bumped when an entry's layout changes)
CACHE_SCHEME = "approxtheory.testing.measured/2"
#: the largest cache entry read (anything larger is a miss)
MAX_ENTRY_BYTES = 16 * 2**20


@functools.cache
def _versions() -> str:
    """The versions of python and of the libraries a measurement depends on, read from the
    package metadata (what :func:`approxtheory.provenance.libraries` reports, without importing
    torch, sympy and scipy: a cache hit loads none of them)."""
    import importlib.metadata
    import platform

    from ..provenance import package_version

    out: dict[str, str | None] = {
        "approxtheory": package_version(),
        "python": platform.python_version(),
    }
    for lib in ("torch", "numpy", "scipy", "sympy"):
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            out[lib] = None
    return json.dumps(out, sort_keys=True)


def _key(*parts: str) -> str:
    """A cache key (24 hex digits) covering ``parts``, the fingerprint of the source of the
    package and its checks and experiments (:func:`approxtheory.provenance.source_fingerprint`,
    every ``.py`` file: the constructions, the catalogue, the search) and the library versions,
    as ``verify``'s :func:`~approxtheory.provenance.cache_key`."""
    from ..provenance import source_fingerprint

    h = hashlib.sha256()
    for part in (*parts, source_fingerprint(), _versions()):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:24]


def _settings_text(settings: dict) -> str:
    return json.dumps(settings, sort_keys=True, default=repr)


def _as_float(v) -> float | None:
    return float(v) if _is_number(v) else None


def _sup_error_entry_ok(d: dict) -> bool:
    """Whether a cached dict has the fields of a sup-error result, well typed (what
    :meth:`Measured._sup_error_from` accepts, checked without building the result)."""
    try:
        value = d["sup_error"]
        if not _is_number(value) or (isinstance(value, float) and math.isnan(value)):
            return False
        witness = np.asarray(d["witness"], dtype=np.float64)
        np.asarray(d["model_output"], dtype=np.float64)
        np.asarray(d["target"], dtype=np.float64)
        if witness.ndim != 2:
            return False
        ints = (d["n_evals"], d["budget"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            return False
        by_source, evals = d["by_source"], d["evals_by_source"]
        if not (isinstance(by_source, dict) and isinstance(evals, dict)):
            return False
        if not all(_is_number(v) for v in by_source.values()):
            return False
        if not all(isinstance(v, int) for v in evals.values()):
            return False
        return isinstance(d["nonfinite"], bool)
    except (KeyError, TypeError, ValueError):
        return False


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _takes_arguments_of(
    f: Callable[_P, object],
) -> Callable[[Callable[..., _R]], Callable[Concatenate[Any, _P], _R]]:
    """A decorator: the method it decorates, written ``(self, *args, **kwargs)`` to pass them on
    to the function ``f``, takes ``f``'s parameters after ``self`` (for type checkers,
    :func:`inspect.signature` and ``help()``), so that they are stated once, on ``f``."""

    def decorate(method: Callable[..., _R]) -> Callable[Concatenate[Any, _P], _R]:
        own = inspect.signature(method)
        this = next(iter(own.parameters.values()))
        public = [p for p in inspect.signature(f).parameters.values() if not p.name.startswith("_")]
        params = [this, *public]
        method.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
        return method

    return decorate


class Measured:
    """``sup_error`` and ``nmse`` with an on-disk cache (what the pytest fixture ``measured``
    returns).

    An entry is stored under ``cache_dir/<kind>/<key>.json``, the key covering the model's
    weights (:func:`model_digest`), the task (:func:`task_digest`), the search settings and the
    source and libraries (:func:`_key`, as ``verify``'s cache).
    Entries are written atomically with a digest of their content; anything unreadable,
    truncated, edited or of the wrong shape is a miss and is measured again. ``cache_dir=None``
    measures every time. ``budget`` is the default search budget, ``profile`` (``quick`` or
    ``full``) the grid size generated tests use, ``mutant`` the declared mutant a generated test
    runs against (``--approxtheory-mutant``).
    """

    cache_dir: Path | None
    budget: int
    profile: str
    mutant: str | None
    points: int
    hits: int
    misses: int
    seconds_computed: float
    seconds_saved: float
    write_error: str | None

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        *,
        budget: int | None = None,
        profile: str = "quick",
        mutant: str | None = None,
    ):
        if profile not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)} (got {profile!r})")
        if budget is None:
            budget = PROFILES[profile]["budget"]
        if isinstance(budget, bool) or not isinstance(budget, Integral) or budget < 1:
            raise ConfigError(f"budget must be a positive integer (got {budget!r})")
        if mutant is not None and (not isinstance(mutant, str) or not mutant.strip()):
            raise ConfigError(f"mutant must be a mutant name (got {mutant!r})")
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.budget = int(budget)
        self.profile = profile
        self.mutant = mutant
        self.points = PROFILES[profile]["points"]
        self.hits = 0
        self.misses = 0
        self.seconds_computed = 0.0
        self.seconds_saved = 0.0
        self.write_error: str | None = None

    def __repr__(self) -> str:
        where = "no cache" if self.cache_dir is None else f"cache={str(self.cache_dir)!r}"
        extra = f", mutant={self.mutant!r}" if self.mutant else ""
        return f"Measured(profile={self.profile!r}, budget={self.budget}, {where}{extra})"

    @property
    def used(self) -> bool:
        return bool(self.hits or self.misses)

    # -- the store -------------------------------------------------------------------------
    def _path(self, kind: str, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / kind / f"{key}.json"

    def _read(self, path: Path | None, key: str, kind: str) -> dict | None:
        if path is None:
            return None
        from ..io import DIGEST_FIELD, content_digest, read_json_entry

        d = read_json_entry(path, max_bytes=MAX_ENTRY_BYTES)
        if not isinstance(d, dict) or not isinstance(d.get(DIGEST_FIELD), str):
            return None
        digest = d.pop(DIGEST_FIELD)
        if digest != content_digest(d):
            return None
        if d.get("scheme") != CACHE_SCHEME or d.get("key") != key or d.get("kind") != kind:
            return None
        if not isinstance(d.get("result"), dict):
            return None
        return d

    def _write(self, path: Path | None, entry: dict) -> None:
        if path is None:
            return
        from ..io import atomic_write_checked_json

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_checked_json(path, entry)
        except (OSError, ValueError) as e:  # an unwritable cache measures, it does not fail
            if self.write_error is None:
                self.write_error = f"{type(e).__name__}: {e}"

    @staticmethod
    def _split(model_or_construction, task):
        if task is None:
            model = getattr(model_or_construction, "model", None)
            task = getattr(model_or_construction, "task", None)
            if model is None or task is None:
                raise ConfigError(
                    "pass a construction, or a model and its task (got "
                    f"{type(model_or_construction).__name__} and no task)"
                )
            return model, task
        return model_or_construction, task

    # -- sup_error -------------------------------------------------------------------------
    def _settings(self, budget, seed, search) -> dict:
        return {"budget": self.budget if budget is None else budget, "seed": seed, **search}

    def _measured(self, kind: str, key: str, settings: dict, compute, read, stored):
        """The measurement under ``key`` in the cache's ``kind`` folder: ``read(result)`` of a
        stored entry unless that is None (a malformed one), counted as a hit; else
        ``compute()``, timed, counted as a miss and stored as ``stored(value)``."""
        path = self._path(kind, key)
        entry = self._read(path, key, kind)
        if entry is not None:
            v = read(entry["result"])
            if v is not None:
                self.hits += 1
                self.seconds_saved += _as_float(entry.get("seconds")) or 0.0
                return v
        t0 = time.perf_counter()
        v = compute()
        dt = time.perf_counter() - t0
        self.misses += 1
        self.seconds_computed += dt
        self._write(
            path,
            {
                "scheme": CACHE_SCHEME,
                "kind": kind,
                "key": key,
                "settings": settings,
                "seconds": dt,
                "result": stored(v),
            },
        )
        return v

    def _cached_sup_error(self, kind: str, key: str, settings: dict, compute, shape):
        def read(result):
            return self._sup_error_from(result, shape)

        return self._measured(kind, key, settings, compute, read, lambda r: r.to_dict())

    def sup_error(
        self,
        model_or_construction,
        task=None,
        *,
        budget: int | None = None,
        seed: int = 0,
        **search,
    ):
        """:func:`approxtheory.measure.sup_error` of a construction (or a model and its task),
        from the cache when the same model (its weights, :func:`model_digest`), task, settings
        and code were measured before. ``budget`` defaults to the fixture's
        (``--approxtheory-budget`` or the profile's); ``search`` holds the other keywords of
        ``sup_error``."""
        from ..measure import sup_error

        model, task = self._split(model_or_construction, task)
        settings = self._settings(budget, seed, search)
        key = _key(
            CACHE_SCHEME,
            "sup_error",
            model_digest(model, task),
            task_digest(task),
            _settings_text(settings),
        )
        return self._cached_sup_error(
            "sup_error",
            key,
            settings,
            lambda: sup_error(model, task, **settings),
            (task.T, task.d),
        )

    def _of(self, name, knobs, mutant, mutate, budget, seed, search):
        """The key, settings and compute function of :meth:`sup_error_of`."""
        if not isinstance(name, str):
            raise ConfigError(f"name must be a construction name (got {name!r})")
        if not isinstance(knobs, Mapping):
            raise ConfigError(f"knobs must be a mapping of knob values (got {knobs!r})")
        if mutant is not None and mutate is None:
            raise ConfigError(f"mutant {mutant!r} needs mutate(construction, name) to apply it")
        how = ""
        if mutant is not None:
            import inspect

            try:
                how = inspect.getsource(mutate)
            except (OSError, TypeError):
                how = f"{getattr(mutate, '__module__', '')}.{getattr(mutate, '__qualname__', '')}"
        settings = self._settings(budget, seed, search)
        knobs = dict(knobs)
        key = _key(
            CACHE_SCHEME,
            "sup_error_of",
            name,
            _settings_text(knobs),
            "" if mutant is None else mutant,
            hashlib.sha256(how.encode()).hexdigest(),
            _settings_text(settings),
        )

        def compute():
            from ..constructions import build
            from ..measure import sup_error

            c = build(name, **knobs)
            if mutant is not None:
                mutate(c, mutant)
            return sup_error(c.model, c.task, **settings)

        return key, settings, compute

    def sup_error_of(
        self,
        name: str,
        knobs: Mapping[str, Any],
        *,
        mutant: str | None = None,
        mutate=None,
        budget: int | None = None,
        seed: int = 0,
        **search,
    ):
        """The sup error of the registered construction ``name`` built with ``knobs`` (and,
        with ``mutant``, edited by ``mutate(construction, mutant)``), from the cache without
        building it when it was measured before. The key holds the name, the knobs, the mutant
        and the source of ``mutate``, the search settings and the code and libraries: the
        weights are a function of these (the construction is built by the fingerprinted code),
        so this is the weights' key without the cost of a build (seconds for a large
        construction) on a hit."""
        key, settings, compute = self._of(name, knobs, mutant, mutate, budget, seed, search)
        return self._cached_sup_error("sup_error", key, settings, compute, None)

    def sup_error_value_of(
        self,
        name: str,
        knobs: Mapping[str, Any],
        *,
        mutant: str | None = None,
        mutate=None,
        budget: int | None = None,
        seed: int = 0,
        **search,
    ) -> float:
        """``sup_error_of(...).value``, under the same key; a hit reads the value of a complete,
        well-formed entry (as :meth:`sup_error_of` checks it) without loading torch, the
        constructions or :mod:`approxtheory.measure`."""
        key, settings, compute = self._of(name, knobs, mutant, mutate, budget, seed, search)
        path = self._path("sup_error", key)
        entry = self._read(path, key, "sup_error")
        if entry is not None and _sup_error_entry_ok(entry["result"]):
            self.hits += 1
            self.seconds_saved += _as_float(entry.get("seconds")) or 0.0
            return float(entry["result"]["sup_error"])
        return self._cached_sup_error("sup_error", key, settings, compute, None).value

    # -- facts of the code, cached -------------------------------------------------------
    def _fact(self, kind: str, parts: tuple, compute) -> dict:
        """``compute()`` (a JSON-ready dict that is a function of ``parts`` and the code alone),
        cached under ``<cache>/facts/`` with a key of ``kind``, ``parts``, the source fingerprint
        and the library versions: any edit of the package (a claim, a construction's
        requirement) misses."""
        key = _key(CACHE_SCHEME, "fact", kind, *parts)
        path = self._path("facts", key)
        entry = self._read(path, key, "fact")
        if entry is not None and entry.get("fact") == kind:
            return entry["result"]
        r = compute()
        self._write(
            path,
            {"scheme": CACHE_SCHEME, "kind": "fact", "fact": kind, "key": key, "result": r},
        )
        return r

    def admissible(
        self,
        name: str,
        cases: Sequence[Mapping[str, Any]],
        *,
        claim: str | None = None,
        symbols: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether every knob dict of ``cases`` is in the ranges of the registered construction
        ``name``'s knobs and meets its requirements and, with ``claim``, lies in that claim's
        regime (its symbols set by the knobs ``symbols`` maps to them); computed by the
        constructions and the catalogue once, then read from the cache (keyed by the code)."""
        if not isinstance(name, str):
            raise ConfigError(f"name must be a construction name (got {name!r})")
        table = [dict(c) for c in cases]
        symbols = dict(symbols or {})

        def compute() -> dict:
            from ..constructions import REGISTRY

            entry = REGISTRY.get(name)
            if entry is None:
                raise ConfigError(
                    f"unknown construction {name!r}; known: {', '.join(sorted(REGISTRY))}"
                )
            c = None
            if claim is not None:
                from ..catalogue import claim as lookup

                c = lookup(claim)
            for knobs in table:
                for k, v in knobs.items():
                    kn = entry.knobs.get(k)
                    if kn is None or kn.range_error(v) is not None:
                        return {"ok": False}
                if any(r.check(knobs) is not None for r in entry.requires):
                    return {"ok": False}
                if c is not None:
                    vals = {symbols[k]: v for k, v in knobs.items() if k in symbols}
                    if not c.in_regime(**vals):
                        return {"ok": False}
            return {"ok": True}

        parts = (name, _settings_text({"cases": table, "claim": claim, "symbols": symbols}))
        return bool(self._fact("admissible", parts, compute).get("ok"))

    @_takes_arguments_of(assert_claim_rate)
    def assert_claim_rate(self, *args, **kwargs) -> PowerLawFit:
        """:func:`assert_claim_rate` (its arguments), with what it reads from the catalogue (the
        exponent, the tolerance, the regime of the sizes) cached as a function of the arguments
        other than ``errors`` and of the code: the same fit, the same failures."""
        return assert_claim_rate(*args, _terms=self._claim_rate_terms, **kwargs)

    def _claim_rate_terms(self, claim_id, sizes, errors, over, values, expr, at, tol, kind, what):
        """:func:`~approxtheory.testing.claim_rates._claim_rate_terms` (what
        :meth:`assert_claim_rate` reads), cached under a key of its arguments but ``errors``."""
        vals = dict(values or {})

        def compute() -> dict:
            return _claim_rate_terms(claim_id, sizes, errors, over, vals, expr, at, tol, kind, what)

        try:
            parts = (
                _settings_text(
                    {
                        "claim": claim_id,
                        "sizes": [float(v) for v in sizes],
                        "over": over,
                        "values": vals,
                        "expr": expr,
                        "at": str(at),
                        "tol": tol,
                        "kind": kind,
                        "what": what,
                    }
                ),
            )
        except (TypeError, ValueError):  # arguments _claim_rate_terms refuses: its error
            return compute()
        return self._fact("claim_rate", parts, compute)

    @staticmethod
    def _sup_error_from(d: dict, shape):
        """A :class:`~approxtheory.measure.SupErrorResult` from a cached dict, or None when the
        dict is not one (a miss); ``shape`` is the witness's (T, d) where known."""
        if not _sup_error_entry_ok(d):
            return None
        witness = np.asarray(d["witness"], dtype=np.float64)
        if shape is not None and witness.shape != tuple(shape):
            return None
        from ..measure import SupErrorResult

        return SupErrorResult(
            value=float(d["sup_error"]),
            witness=witness,
            model_output=np.asarray(d["model_output"], dtype=np.float64),
            target=np.asarray(d["target"], dtype=np.float64),
            n_evals=d["n_evals"],
            by_source={str(k): float(v) for k, v in d["by_source"].items()},
            budget=d["budget"],
            evals_by_source={str(k): int(v) for k, v in d["evals_by_source"].items()},
            nonfinite=d["nonfinite"],
        )

    # -- nmse ------------------------------------------------------------------------------
    def nmse(
        self, model_or_construction, task=None, *, n: int = 4096, seed: int = 0, X=None
    ) -> float:
        """:func:`approxtheory.measure.nmse`, cached like :meth:`sup_error` (``X``, when given,
        is part of the key)."""
        from ..measure import nmse

        model, task = self._split(model_or_construction, task)
        h = hashlib.sha256()
        if X is not None:
            _update_array(h, "X", np.asarray(X, dtype=np.float64))
        settings = {"n": n, "seed": seed, "X": h.hexdigest() if X is not None else None}
        key = _key(
            CACHE_SCHEME,
            "nmse",
            model_digest(model, task),
            task_digest(task),
            _settings_text(settings),
        )

        def read(result):
            v = result.get("nmse")
            return float(v) if _is_number(v) and not math.isnan(float(v)) else None

        def compute():
            return nmse(model, task, n=n, seed=seed, X=X)

        return self._measured("nmse", key, settings, compute, read, lambda v: {"nmse": v})

    def summary(self) -> str:
        """One line: how many measurements came from the cache and how many were computed."""
        where = "no cache" if self.cache_dir is None else f"cache {self.cache_dir}"
        line = (
            f"approxtheory: {self.hits + self.misses} measurements, {self.hits} from the cache "
            f"(~{self.seconds_saved:.1f} s saved), {self.misses} computed "
            f"({self.seconds_computed:.1f} s); {where}"
        )
        if self.write_error:
            line += f"; the cache could not be written ({self.write_error})"
        return line
