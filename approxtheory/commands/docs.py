"""``approxtheory docs [--out PATH] [--check] [--findings VERDICTS]``: the generated pages (the
claims page, and the findings page where a committed run lies in ``findings/`` beside it)."""

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


def _stale(path, fresh: str) -> bool:
    """Whether the page at ``path`` differs from ``fresh`` (compared as bytes, read up to the
    fresh page's size: a larger, non-UTF-8 or missing page is stale)."""
    data = fresh.encode("utf-8")
    return _read_page(path, len(data)) != data


def _cmd_docs(args) -> int:
    from pathlib import Path

    from ..docs import (
        findings_paths,
        load_findings,
        render_claims_markdown,
        render_findings_markdown,
        write_claims_page,
        write_findings,
    )

    path = Path(args.out)
    if args.check and (args.findings is not None or args.notebooks or args.mutants):
        raise ApproxTheoryError(
            "--check cannot be combined with --findings, --mutants or --notebooks: --check "
            "writes nothing"
        )
    if not args.check:
        from .._cliargs import check, out_file, readable_file

        check(out_file, "--out", args.out)
        if args.findings is not None:
            check(readable_file, "--findings", args.findings)
        if args.mutants is not None:
            check(readable_file, "--mutants", args.mutants)
    if args.check:
        if "\x00" in str(args.out):
            raise ApproxTheoryError(f"--out must not contain a NUL byte (got {args.out!r})")
        _read_page(path, 0)  # refuse a FIFO, device or directory before the (slow) rendering
        verdicts, findings_page = findings_paths(path)
        findings = load_findings(verdicts)
        pages = [(path, render_claims_markdown(findings))]
        if findings is not None:
            _read_page(findings_page, 0)
            pages.append((findings_page, render_findings_markdown(findings)))
        stale = [str(p) for p, fresh in pages if _stale(p, fresh)]
        if stale:
            verb = "is" if len(stale) == 1 else "are"
            msg = f"approxtheory: {' and '.join(stale)} {verb} stale; run `approxtheory docs`"
            print(msg, file=sys.stderr)
            return 1
        print(
            " and ".join(str(p) for p, _ in pages)
            + (" is" if len(pages) == 1 else " are")
            + " up to date"
        )
        return 0
    if args.notebooks:
        from ..docs import write_notebook_pages

        for page in write_notebook_pages(path):
            print(f"wrote {page}")
    if args.findings is not None:
        copy = write_findings(args.findings, path)
        print(f"wrote {copy}, {path} and {findings_paths(path)[1]}")
    if args.mutants is not None:
        from ..docs import write_mutants

        copy = write_mutants(args.mutants, path)
        print(f"wrote {copy}, {path} and {findings_paths(path)[1]}")
    if args.findings is not None or args.mutants is not None:
        return 0
    write_claims_page(path)
    if findings_paths(path)[0].exists():
        print(f"wrote {path} and {findings_paths(path)[1]}")
    else:
        print(f"wrote {path}")
    return 0


def register(p) -> None:
    p.add_argument(
        "--out", default="docs/claims.md", help="the claims page (default: docs/claims.md)"
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    p.add_argument(
        "--findings",
        metavar="VERDICTS",
        default=None,
        help="copy this verify run's verdicts.json to findings/verdicts.json beside --out "
        "(with the run's date) and regenerate the pages from it",
    )
    p.add_argument(
        "--mutants",
        metavar="VERDICTS",
        default=None,
        help="write the summary of this `verify --mutants` run's verdicts.json to "
        "findings/mutants.json beside --out (what each passing check was caught on) and "
        "regenerate the pages",
    )
    p.add_argument(
        "--notebooks",
        action="store_true",
        help="also execute the notebooks in notebooks/ beside --out and write each one's page "
        "with its outputs (NAME.md, NAME_files/; needs the docs extra, about 20 s each)",
    )
    p.set_defaults(func=_cmd_docs)
