"""Writing weights by meaning: :class:`HeadWeights` (one head's blocks), :class:`ResidualLayout`
(named coordinate blocks) and the shape-checked writers the model's editing surface uses."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ..errors import ConfigError


def _write(param: torch.Tensor, value, what: str) -> None:
    """Copy ``value`` into ``param`` (no-op for None), or ConfigError naming the expected shape."""
    if value is None:
        return
    t = _as_tensor(value, param)
    if tuple(t.shape) != tuple(param.shape):
        raise ConfigError(f"{what} must have shape {tuple(param.shape)} (got {tuple(t.shape)})")
    with torch.no_grad():
        param.copy_(t)


class HeadWeights(NamedTuple):
    """One attention head's blocks: q, k (head_dim, E), v (value_dim, E), o (E, value_dim)."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    o: torch.Tensor


class ResidualLayout:
    """Names for coordinate blocks of a vector space, as tracr names basis directions: the
    residual stream (width E), a head's query/key space, the encoder's input ``[x, onehot(t)]``.

    Blocks are laid out in keyword order; a size ``(count, size)`` is ``count`` sub-blocks of
    ``size`` (one per head, per position, ...). :meth:`interleaved` repeats a group of blocks
    (block i of each name next to each other). A construction then writes what it means::

        >>> lay = ResidualLayout(value=1, score=1, pos=3)
        >>> lay.width, lay["pos"], lay.index("score"), lay.index("pos", 2)
        (5, slice(2, 5, None), 1, 4)
        >>> lay.vector(score=1.0)
        array([0., 1., 0., 0., 0.])
        >>> per_head = ResidualLayout(x=2, r=(3, 2), u=3)       # r: 3 sub-blocks of width 2
        >>> per_head.block("r", 1), per_head.index("u", 2), per_head.grid("r").tolist()
        (slice(4, 6, None), 10, [[2, 3], [4, 5], [6, 7]])
        >>> feat = ResidualLayout.interleaved(3, value=1, gate=1)   # value_0, gate_0, value_1, ...
        >>> feat["value"], feat.index("gate", 2)
        (slice(0, 5, 2), 5)
    """

    def __init__(self, **blocks: int | tuple[int, int]):
        self._coords: dict[str, np.ndarray] = {}
        self._sub: dict[str, int] = {}
        parsed = {name: self._parse(name, size) for name, size in blocks.items()}
        _require_coords(sum(count * sub for count, sub in parsed.values()))
        at = 0
        for name, (count, sub) in parsed.items():
            self._coords[name] = np.arange(at, at + count * sub, dtype=np.int64)
            self._sub[name] = sub
            at += count * sub
        self._width = at

    @staticmethod
    def _parse(name, size) -> tuple[int, int]:
        """(number of sub-blocks, sub-block size): an int s is s sub-blocks of 1."""
        pair = size if isinstance(size, tuple) and len(size) == 2 else (size, 1)
        if (
            isinstance(size, tuple)
            and len(size) != 2
            or any(
                not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0 for v in pair
            )
        ):
            raise ConfigError(
                f"block {name} must have a size >= 0 or (count, size) with "
                f"integers >= 0 (got {size!r})"
            )
        return int(pair[0]), int(pair[1])

    @classmethod
    def interleaved(cls, count: int, **blocks: int) -> ResidualLayout:
        """``count`` copies of the group of blocks, one after another: with ``value=1, gate=1``
        the coordinates are value_0, gate_0, value_1, gate_1, ...; ``block(name, i)`` is copy i."""
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
            raise ConfigError(f"count must be an integer >= 0 (got {count!r})")
        lay = cls()
        group = 0
        offsets = {}
        for name, size in blocks.items():
            if isinstance(size, tuple):
                raise ConfigError(
                    f"interleaved block {name} must have a single size (got {size!r})"
                )
            n, _ = cls._parse(name, size)
            offsets[name] = (group, n)
            group += n
        _require_coords(int(count) * group)
        copies = np.arange(int(count), dtype=np.int64)[:, None] * group
        for name, (off, n) in offsets.items():
            # copy c's coordinates c·group + off + j (j < n), copy after copy
            lay._coords[name] = (copies + off + np.arange(n, dtype=np.int64)[None, :]).ravel()
            lay._sub[name] = n
        lay._width = int(count) * group
        return lay

    @property
    def width(self) -> int:
        """Total number of coordinates."""
        return self._width

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._coords)

    def __contains__(self, name) -> bool:
        return name in self._coords

    def _get(self, name: str) -> np.ndarray:
        if name not in self._coords:
            from ..errors import did_you_mean

            raise ConfigError(
                f"no block {name!r} in this layout{did_you_mean(name, self._coords)} "
                f"(blocks: {', '.join(self._coords) or 'none'})"
            )
        return self._coords[name]

    def size(self, name: str) -> int:
        """Number of coordinates of block ``name``."""
        return int(self._get(name).size)

    def count(self, name: str) -> int:
        """Number of sub-blocks of block ``name``."""
        c = self._get(name)
        return int(c.size // self._sub[name]) if self._sub[name] else 0

    def __getitem__(self, name: str) -> slice | np.ndarray:
        """Block ``name``'s coordinates: a slice (an index array if they are not evenly
        spaced), usable to index numpy arrays and tensors."""
        return _as_slice(self._get(name))

    def indices(self, name: str) -> np.ndarray:
        """Block ``name``'s coordinates as an integer array."""
        return self._get(name).copy()

    def grid(self, name: str) -> np.ndarray:
        """Block ``name``'s coordinates as a (sub-blocks, sub-block size) integer array:
        ``grid("r")[i, j]`` is coordinate j of sub-block i."""
        c = self._get(name)
        sub = self._sub[name]
        return c.reshape(c.size // sub if sub else 0, sub)

    def index(self, name: str, i: int = 0) -> int:
        """The i-th coordinate of block ``name`` (the block's only one by default)."""
        c = self._get(name)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < c.size:
            raise ConfigError(
                f"block {name} has {c.size} coordinate{'s' * (c.size != 1)}: "
                f"index must be in [0, {c.size}) (got {i!r})"
            )
        return int(c[i])

    def block(self, name: str, i: int) -> slice | np.ndarray:
        """The i-th sub-block of block ``name`` (for a ``(count, size)`` block: ``size``
        coordinates; for a plain block: its i-th coordinate, as a length-1 slice)."""
        c = self._get(name)
        sub = self._sub[name]
        n = c.size // sub if sub else 0
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < n:
            raise ConfigError(
                f"block {name} has {n} sub-block{'s' * (n != 1)}: index must be "
                f"in [0, {n}) (got {i!r})"
            )
        return _as_slice(c[i * sub : (i + 1) * sub])

    def vector(self, **values) -> np.ndarray:
        """A zero vector of this width with the named blocks set (a scalar fills a block)."""
        out = np.zeros(self._width)
        for name, v in values.items():
            out[self[name]] = v
        return out

    def __repr__(self) -> str:
        parts = []
        for name, c in self._coords.items():
            sub = self._sub[name]
            parts.append(
                f"{name}={c.size}"
                if sub == 1 or c.size == sub or not c.size
                else f"{name}=({c.size // sub}, {sub})"
            )
        return f"ResidualLayout({', '.join(parts)}; width={self._width})"


def _require_coords(n: int) -> None:
    """Refuse a layout of ``n`` coordinates (int64 index arrays) that cannot fit, before
    allocating it."""
    from ..resources import array_bytes, require

    require(bytes=array_bytes(n), what=f"a ResidualLayout of {n} coordinates")


def _as_slice(c: np.ndarray) -> slice | np.ndarray:
    if c.size == 0:
        return slice(0, 0)
    if c.size == 1:
        return slice(int(c[0]), int(c[0]) + 1)
    step = int(c[1] - c[0])
    if step > 0 and np.array_equal(c, np.arange(c[0], c[-1] + 1, step)):
        return slice(int(c[0]), int(c[-1]) + 1, None if step == 1 else step)
    return c.copy()


def _as_tensor(value, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        t = value.detach()
    else:
        try:
            t = torch.as_tensor(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise ConfigError(f"weights must be numeric arrays ({e})") from None
    return t.to(dtype=like.dtype, device=like.device)
