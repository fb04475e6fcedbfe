"""What each export target can express, and the parity record of an export
(:mod:`approxtheory.interop` builds, writes and checks the exports).

``tl_refusal`` / ``hf_refusal`` read a :class:`~approxtheory.model.ModelConfig` only (nothing is
allocated): the reason a target cannot express it exactly, or None. :class:`ParityReport` is how
closely an exported object reproduces the project's model."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .errors import ConfigError

__all__ = ["ParityReport", "tl_refusal", "hf_refusal"]


@dataclass
class ParityReport:
    """How closely the exported object reproduces the model.

    ``max_abs_diff_worst`` is over ``n_worst`` worst inputs (the construction's search witness;
    None without one), ``max_abs_diff_random`` over ``n_random`` seeded random inputs of the
    task's domain; ``dtype`` is the precision the comparison is held to (``tolerance``);
    ``outside`` names the pieces computed outside the target. ``sup_error`` / ``sup_error_target``
    are the construction's measured sup error and the error of the exported (and, where written,
    reloaded) object at the witness; ``reloaded`` says whether the compared object was read back
    from ``out``. ``output_scale`` is the largest |output| of the source model on the compared
    inputs: parity is judged relative to it (``allowed``: the tolerance times max(1,
    output_scale)), so a model whose outputs are 1e10 is held to its dtype's relative precision,
    not to an absolute 1e-12."""

    target: str
    architecture: str
    dtype: str
    tolerance: float
    max_abs_diff_worst: float | None
    max_abs_diff_random: float
    n_worst: int
    n_random: int
    seed: int
    outside: list[str]
    notes: list[str] = field(default_factory=list)
    reloaded: bool = False
    sup_error: float | None = None
    sup_error_target: float | None = None
    sup_error_reloaded_search: float | None = None
    output_scale: float = 1.0

    @property
    def allowed(self) -> float:
        """The largest difference that passes: the tolerance relative to the output's scale
        (never below the tolerance itself; a non-finite scale allows nothing)."""
        if not math.isfinite(self.output_scale):
            return -math.inf
        return self.tolerance * max(1.0, abs(self.output_scale))

    @property
    def max_abs_diff(self) -> float:
        vals = [self.max_abs_diff_random]
        if self.max_abs_diff_worst is not None:
            vals.append(self.max_abs_diff_worst)
        return max(vals)

    @property
    def passed(self) -> bool:
        tol = self.allowed
        ok = math.isfinite(self.max_abs_diff) and self.max_abs_diff <= tol
        if self.sup_error is not None and self.sup_error_target is not None:
            ok = ok and abs(self.sup_error - self.sup_error_target) <= tol
        if self.sup_error is not None and self.sup_error_reloaded_search is not None:
            ok = ok and abs(self.sup_error - self.sup_error_reloaded_search) <= tol
        return ok

    def to_dict(self) -> dict:
        d = asdict(self)
        d["max_abs_diff"] = self.max_abs_diff
        d["allowed"] = self.allowed
        d["passed"] = self.passed
        return d


# ------------------------------------------------------------------------------- refusals


def all_equal(values) -> bool:
    return len(set(values)) <= 1


def tl_refusal(cfg) -> str | None:
    """Why TransformerLens's native model cannot express ``cfg`` exactly, or None."""
    why = []
    if not cfg.residual:
        why.append("attention without a residual connection (residual=False)")
    if any(s.ffn_hidden for s in cfg.layers) and not cfg.ffn_residual:
        why.append("an FFN without a residual connection (ffn_residual=False)")
    if cfg.ffn_kind == "bilinear" and any(s.ffn_hidden for s in cfg.layers):
        why.append(
            "a bilinear FFN (ffn_kind='bilinear': TransformerLens's gated MLP has no identity "
            "activation)"
        )
    if any(len(s.ffn_hidden) > 1 for s in cfg.layers):
        why.append("an FFN with more than one hidden layer (TransformerLens's MLP has one)")
    if cfg.ffn_kind == "swiglu" and cfg.ffn_bias and any(s.ffn_hidden for s in cfg.layers):
        why.append("a SwiGLU FFN with biases (TransformerLens's gated MLP has none)")
    if (cfg.layernorm or cfg.rmsnorm) and not cfg.final_norm:
        why.append(
            "a pre-norm model without a final norm (TransformerLens applies its final norm "
            "before the unembedding)"
        )
    if cfg.rope is not None:
        if cfg.rope_freqs is not None:
            why.append("explicit RoPE frequencies (rope_freqs: TransformerLens uses rope_base)")
        if cfg.rope == "full" and not all_equal(s.head_dim for s in cfg.layers):
            why.append(
                "per-layer head widths with full RoPE (TransformerLens has one rotary width)"
            )
    return "; ".join(why) or None


def hf_refusal(cfg) -> str | None:
    """Why the ``approxtheory`` transformers architecture cannot hold ``cfg``, or None (it holds
    every ModelConfig)."""
    return None


def refuse(target: str, cfg) -> None:
    why = tl_refusal(cfg) if target == "tl" else hf_refusal(cfg)
    if why:
        name = "TransformerLens" if target == "tl" else "Hugging Face"
        raise ConfigError(
            f"cannot export to {name} ({target}): it cannot express {why}; "
            f"the other target is {'hf' if target == 'tl' else 'tl'}"
        )
