"""Progress bars: tqdm's when it is installed (the ``progress`` extra, also in ``test``), none
otherwise; a run without tqdm computes and writes the same results, silently.

    >>> from approxtheory.progress import progress_bar
    >>> bar = progress_bar([1, 2, 3], desc="demo", disable=True)
    >>> bar.set_postfix_str("x")
    >>> list(bar)
    [1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["progress_bar", "NoBar"]


class NoBar:
    """The part of tqdm's interface the package uses, doing nothing but iterate."""

    def __init__(self, iterable: Iterable[Any]):
        self._iterable = iterable

    def __iter__(self) -> Iterator[Any]:
        return iter(self._iterable)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        pass

    def update(self, n: float = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(iterable: Iterable[Any], **kwargs: Any):
    """``tqdm(iterable, **kwargs)``, or a :class:`NoBar` over ``iterable`` without tqdm."""
    try:
        from tqdm import tqdm
    except ImportError:
        return NoBar(iterable)
    return tqdm(iterable, **kwargs)
