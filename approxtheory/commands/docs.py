"""``approxtheory docs [--out PATH] [--check]``: the generated claims page."""

from __future__ import annotations

import sys

from ..errors import ApproxTheoryError

__all__ = ["register"]


def _read_page(path, limit: int) -> bytes | None:
    """The bytes of the page at ``path`` when it is a regular file of at most ``limit`` bytes;
    None when it is missing or larger (stale either way: it cannot equal a ``limit``-byte page).

    Never reads more than ``limit + 1`` bytes (a 20 GB or sparse file is not read) and never
    blocks: the file is opened non-blocking and checked to be regular on the open descriptor, so a
    FIFO or a device (even one swapped in after a check by name) is refused, not waited on."""
    import errno
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
            raise ApproxTheoryError(f"--out must be a regular file (got {str(path)!r}, {kind})")
        if st.st_size > limit:
            return None
        from ..io import read_at_most

        return read_at_most(fd, limit + 1)
    finally:
        os.close(fd)


def _cmd_docs(args) -> int:
    from pathlib import Path

    from ..docs import render_claims_markdown, write_claims_page

    path = Path(args.out)
    if not args.check:
        from .._cliargs import check, out_file

        check(out_file, "--out", args.out)
    if args.check:
        if "\x00" in str(args.out):
            raise ApproxTheoryError(f"--out must not contain a NUL byte (got {args.out!r})")
        _read_page(path, 0)  # refuse a FIFO, device or directory before the (slow) rendering
        fresh = render_claims_markdown().encode("utf-8")
        # compared as bytes, read up to the fresh page's size: a larger, non-UTF-8 or missing
        # page is stale
        if _read_page(path, len(fresh)) != fresh:
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
