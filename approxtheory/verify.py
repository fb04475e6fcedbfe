"""``approxtheory verify``: run every claim's check, cache results, write the report.

Exit codes: 0 when the run completed (a refutation is a finding, not a crash), 1 when a check
itself crashed (the others still run; the report says which), 2 for bad arguments;
``--fail-on refuted`` makes refutations exit 1.

Each check's result is cached under ``OUT/.cache`` by a key covering everything the verdict
depends on (see :func:`proofs_check.check_hash`: the claim, the whole source of the packages,
the library versions, profile and seed): a rerun skips what is unchanged, and a killed run loses
nothing already written (every file is written atomically). A cache entry that cannot be read or
does not have the record's shape is a miss: the check runs again and the entry is rewritten.

``verdicts.json`` and the CSVs hold no timings, so a rerun from the cache, a ``--no-cache`` rerun
and a resumed run write them byte for byte the same; timings go to ``timings.json``.
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path
from typing import Sequence

from .errors import ApproxTheoryError
from .io import atomic_write_checked_json, atomic_write_json, atomic_write_text, json_roundtrip, \
    read_checked_json
from .provenance import git_revision, libraries, source_fingerprint

__all__ = ["run_verify", "select_claims", "register", "git_revision"]  # git_revision: re-export

SCHEMA_VERSION = 1


def select_claims(only: Sequence[str] | None):
    """Claims named by ids or papers (arXiv id or short name); all when ``only`` is empty."""
    from .catalogue import claim, claims, paper_id
    if not only:
        return claims()
    out, seen = [], set()
    for item in only:
        try:
            cs = claims(paper=paper_id(item))
        except ApproxTheoryError:
            cs = [claim(item)]    # raises UnknownClaimError with suggestions
        for c in cs:
            if c.id not in seen:
                seen.add(c.id)
                out.append(c)
    return out


def _record(c, v: dict, key: str) -> dict:
    """A verdict record, normalised as it reads back from the cache (fresh == cached)."""
    return json_roundtrip(
        {"schema_version": SCHEMA_VERSION, "claim": c.id, "paper": c.paper, "kind": c.kind,
         "statement": c.statement, "provenance": c.provenance, "verdict": v["verdict"],
         "evidence": v["evidence"], "covered": v.get("covered", ""),
         "measured": v.get("measured"), "claimed": v.get("claimed"),
         "witness": v.get("witness"), "check": v.get("check", ""), "cache_key": key,
         "rows": v.get("rows", []), "plot": v.get("plot"), "slopes": v.get("slopes", [])})


_FIELDS = {"paper": str, "kind": str, "statement": str, "provenance": str, "evidence": str,
           "covered": str, "check": str, "rows": list, "slopes": list}
_ANY = ("measured", "claimed", "witness", "plot")


def _cached(path: Path, cid: str, key: str) -> tuple[dict, float] | None:
    """The cached record and the seconds it took to compute, or None (a miss) when the entry is
    missing, unreadable, not JSON, does not match its digest, or is not a complete record for
    this claim and key."""
    from proofs_check import VERDICTS
    rec = read_checked_json(path)
    if not isinstance(rec, dict) or rec.get("schema_version") != SCHEMA_VERSION or \
            rec.get("claim") != cid or rec.get("cache_key") != key or \
            rec.get("verdict") not in VERDICTS or rec["verdict"] == "error":
        return None
    if any(not isinstance(rec.get(k), t) for k, t in _FIELDS.items()) or \
            any(k not in rec for k in _ANY):
        return None
    if not all(isinstance(r, dict) for r in rec["rows"]):
        return None
    if not all(isinstance(s, dict) and isinstance(s.get("label"), str) and
               all(isinstance(s.get(k), (int, float)) for k in ("fitted", "lo", "hi"))
               for s in rec["slopes"]):
        return None
    plot = rec["plot"]
    if plot is not None and not (isinstance(plot, dict) and isinstance(plot.get("x"), str) and
                                 isinstance(plot.get("y"), list)):
        return None
    duration = rec.pop("duration_s", None)
    return rec, duration if isinstance(duration, (int, float)) else 0.0


def run_verify(profile: str = "quick", only: Sequence[str] | None = None, out: str | Path =
               "report", fail_on: str | None = None, seed: int = 0, progress: bool = True,
               use_cache: bool = True) -> int:
    from proofs_check import CHECKS, PROFILES, Context, check_hash
    from proofs_check._core import KEY_PACKAGES
    from . import __version__
    from .report import plot_from_csv, render_html, render_markdown, slope_plot, write_csv
    if profile not in PROFILES:
        raise ApproxTheoryError(f"profile must be one of {', '.join(PROFILES)} (got {profile!r})")
    if fail_on not in (None, "refuted"):
        raise ApproxTheoryError(f"--fail-on takes 'refuted' (got {fail_on!r})")
    selected = select_claims(only)
    out = Path(out)
    for sub in ("", ".cache", "data", "plots"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    ctx = Context(profile=profile, seed=seed)
    t0 = time.time()
    records, timings = [], {}
    from tqdm import tqdm
    bar = tqdm(selected, desc=f"verify ({profile})", unit="claim", disable=not progress,
               file=sys.stderr)
    for c in bar:
        bar.set_postfix_str(c.id)
        key = check_hash(c.id, ctx)
        cache = out / ".cache" / f"{c.id}.{key}.json"
        hit = _cached(cache, c.id, key) if use_cache else None
        if hit is not None:
            records.append(hit[0])
            timings[c.id] = {"cached": True, "duration_s": hit[1]}
            continue
        t1 = time.time()
        try:
            v = CHECKS[c.id](ctx).to_dict()
        except Exception as e:  # a crashed check is reported, the others still run
            tb = traceback.format_exc().strip().splitlines()
            v = {"verdict": "error", "evidence": f"the check crashed: {type(e).__name__}: {e}",
                 "covered": " | ".join(tb[-3:]), "check": getattr(CHECKS[c.id], "source_fn",
                                                                  None).__name__}
        rec = _record(c, v, key)
        timings[c.id] = {"cached": False, "duration_s": round(time.time() - t1, 3)}
        if rec["verdict"] != "error":   # overwrites an unreadable entry; keeps the rows' order
            atomic_write_checked_json(cache, {**rec, "duration_s": timings[c.id]["duration_s"]})
        records.append(rec)
    # data files and plots, drawn from the CSVs only
    for rec in records:
        rec["csv"], rec["plots"] = [], []
        if rec["rows"]:
            p = out / "data" / f"{rec['claim']}.csv"
            write_csv(p, rec["rows"])
            rec["csv"].append(str(p.relative_to(out)))
            if rec["plot"]:
                png = out / "plots" / f"{rec['claim']}.png"
                plot_from_csv(p, rec["plot"], png)
                rec["plots"].append(str(png.relative_to(out)))
        if rec["slopes"]:
            p = out / "data" / f"{rec['claim']}.slopes.csv"
            write_csv(p, rec["slopes"])
            rec["csv"].append(str(p.relative_to(out)))
            png = out / "plots" / f"{rec['claim']}.slopes.png"
            slope_plot(rec["slopes"], f"{rec['claim']}: fitted vs predicted exponent", png)
            rec["plots"].append(str(png.relative_to(out)))
    # verdicts.json holds no timings (identical bytes for cached, fresh and resumed runs)
    libs = libraries()
    meta = {"schema_version": SCHEMA_VERSION, "profile": profile, "seed": seed,
            "version": __version__, "git": git_revision(),
            "source": source_fingerprint(KEY_PACKAGES)[:16], "python": libs["python"],
            "libraries": {k: libs[k] for k in ("torch", "sympy", "numpy", "scipy")},
            "claims": len(records)}
    public = [{k: v for k, v in r.items() if k not in ("rows", "plot")} for r in records]
    atomic_write_json(out / "verdicts.json", {"meta": meta, "verdicts": public})
    wall = time.time() - t0
    atomic_write_json(out / "timings.json", {"wall_s": round(wall, 3), "claims": timings})
    shown = {**meta, "wall_s": wall}
    atomic_write_text(out / "report.md", render_markdown(public, shown))
    atomic_write_text(out / "report.html", render_html(public, shown))
    crashed = [r["claim"] for r in records if r["verdict"] == "error"]
    refuted = [r["claim"] for r in records if r["verdict"] == "refuted"]
    if progress:
        counts = {}
        for r in records:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        print(f"verify: {len(records)} claims in {wall:.1f} s: " +
              ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
        if refuted:
            print(f"refuted: {', '.join(refuted)}", file=sys.stderr)
        if crashed:
            print(f"checks that crashed: {', '.join(crashed)}", file=sys.stderr)
        print(f"report: {out / 'report.md'} and {out / 'report.html'}", file=sys.stderr)
    if crashed:
        return 1
    if fail_on == "refuted" and refuted:
        return 1
    return 0


def _cmd(args) -> int:
    return run_verify(profile=args.profile, only=args.only, out=args.out, fail_on=args.fail_on,
                      seed=args.seed, progress=not args.quiet, use_cache=not args.no_cache)


def register(sub) -> None:
    p = sub.add_parser("verify", help="check every claim and write a report (the main job)",
                       description="Run every claim's check and write DIR/report.md, "
                                   "DIR/report.html, DIR/verdicts.json, CSVs and plots.")
    p.add_argument("--profile", default="quick", choices=["quick", "full"])
    p.add_argument("--only", nargs="+", metavar="ID_OR_PAPER",
                   help="claim ids or papers (arXiv id or short name)")
    from ._cliargs import out_dir, seed
    p.add_argument("--out", default="report", metavar="DIR", type=out_dir)
    p.add_argument("--fail-on", choices=["refuted"], default=None,
                   help="exit 1 when a claim is refuted")
    p.add_argument("--seed", type=seed, default=0, help="seed of the checks (>= 0)")
    p.add_argument("--no-cache", action="store_true", help="recompute every check")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=_cmd)
