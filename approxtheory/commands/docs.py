"""``approxtheory docs [--out PATH] [--check]``: the generated claims page."""

from __future__ import annotations

import sys

from ..errors import ApproxTheoryError

__all__ = ["register"]


def _cmd_docs(args) -> int:
    from pathlib import Path

    from ..docs import render_claims_markdown, write_claims_page

    path = Path(args.out)
    if not args.check:
        from .._cliargs import check, out_file

        check(out_file, "--out", args.out)
    if args.check:
        if path.exists() and not (path.is_file() or path.is_dir()):  # a FIFO blocks the read
            raise ApproxTheoryError(f"--out must be a regular file (got {args.out!r})")
        fresh = render_claims_markdown()
        if not path.exists() or path.read_text(encoding="utf-8") != fresh:
            print(f"approxtheory: {path} is stale; run `approxtheory docs`", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    write_claims_page(path)
    print(f"wrote {path}")
    return 0


def register(sub) -> None:
    pd = sub.add_parser("docs", help="regenerate docs/claims.md from the catalogue")
    pd.add_argument("--out", default="docs/claims.md")
    pd.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    pd.set_defaults(func=_cmd_docs)
