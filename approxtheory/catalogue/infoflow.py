"""Claims of *InfoFlow: A Framework for Multi-Layer Transformer Analysis* (arXiv 2605.17930).

Source: ``shared/papers/infoflow.md``. Only the abstract was seen by the digest. Provenance follows
the catalogue scheme (``PROVENANCES``), and a claim takes the label of its weakest part: statements
tagged [A] (the abstract) are ``stated``; claims rebuilt from the third-party summaries [Q1]/[Q2] of
the full text (the paper's own text unavailable) are ``reconstructed``; the digest's own derivations
and constructions ([DER], [NUM]) are ``derived``.
"""

from __future__ import annotations

import sympy as sp

from ._build import SymbolTable, cond

P = SymbolTable("2605.17930")

eps = P.sym("epsilon", "target sup-norm precision ε")
T = P.sym("T", "sequence length", integer=True)
a = P.sym("a", "slope of the exponent k(T) = aT + b (unknown)")
b = P.sym("b", "offset of the exponent k(T) = aT + b (unknown)", real=True)
c1 = P.sym("c1", "constant of the one-layer lower bound")
C2 = P.sym("C2", "constant of the two-layer upper bound")
beta = P.sym("beta", "softmax inverse temperature β")
delta = P.sym("delta", "score margin used in the error split")
k = P.sym("k", "rank of the retrieved score (k-th largest)", integer=True)
n = P.sym("n", "per-head dimension", integer=True)
c3 = P.sym("c3", "constant of the k-th largest lower bound")
I_size = P.sym("I_size", "size |I| of the coupled information set", integer=True)
d = P.sym("d", "token dimension", integer=True)
E = P.sym("E", "embedding width", integer=True)
C4 = P.sym("C4", "constant of the decoding cost")
Lf = P.sym("L_f", "Lipschitz constant of the readout f")
N = P.sym("N", "number of interpolation knots (FFN width)", integer=True)
h = P.sym("h", "heads per layer", integer=True)
D = P.sym("D", "intrinsic dimension (number of retrieved terms)", integer=True)

k_T = a * T + b
err_attn = (1 + sp.log(beta * T)) / beta

P.claim(
    "IF-T1",
    section="main theorem [A]",
    kind="theorem",
    provenance="stated",
    statement="Depth separation: every one-layer transformer needs N >= c1 ε^{-k(T)} with k(T) "
    "linear in T, while a two-layer model with one head per layer needs N <= C2/ε.",
    expressions={
        "N1_lower": c1 * eps ** (-k_T),
        "N2_upper": C2 / eps,
        "separation": c1 * eps ** (-k_T) / (C2 / eps),
    },
    rate=("N1_lower", eps),
    notes="The task family and the slope a are unknown; candidates are TASK-PMAX(1) and "
    "TASK-KTH(2), both with explicit two-layer constructions (IF-K1, IF-K2).",
    depends_on=("IF-K1", "IF-K2", "IF-T4"),
)
P.claim(
    "IF-T2",
    section="[A] + digest §3",
    kind="upper",
    provenance="derived",
    statement="One softmax head retrieves the maximum: max - softmax-average <= δ + T e^{-βδ} for "
    "every δ, hence <= (1 + ln(βT))/β, with no parameter cost in T.",
    expressions={"err_attn": err_attn, "err_split": delta + T * sp.exp(-beta * delta)},
    regime=[cond(sp.Ge(beta * T, 1), "beta*T >= 1")],
    notes="The statement that max-retrieval is cheap is [A]; the error law is [DER]. "
    "Solving err_attn = ε gives β ≈ ln(T/ε)/ε.",
)
P.claim(
    "IF-T3",
    section="[A]; rate from [Q2]",
    kind="lower",
    provenance="reconstructed",
    statement="Retrieving the k-th largest score (k >= 2) with one softmax layer costs a parameter "
    "count exponential in T; [Q2]'s Ω(ε^{-(k-1)/n}) contradicts this and is kept apart.",
    expressions={"N_lower_A": c3 * eps ** (-k_T), "N_lower_Q2": c3 * eps ** (-(k - 1) / n)},
    regime=[cond(sp.Ge(k, 2), "k >= 2")],
    rate=("N_lower_A", eps),
)
P.claim(
    "IF-T4",
    section="[A]; rate from [Q2]",
    kind="lower",
    provenance="reconstructed",
    statement="Decoding a target from a coupled mixture of |I| tokens costs N ~ ε^{-|I| d/E}, "
    "growing exponentially with |I|.",
    expressions={"N_decode": C4 * eps ** (-I_size * d / E)},
    rate=("N_decode", eps),
)
P.claim(
    "IF-P1",
    section="[Q1]",
    kind="theorem",
    provenance="reconstructed",
    statement="InfoFlow recovers the head-count law: for D-retrieval, h >= D gives a "
    "T-independent cost, h < D forces global aggregation and ε^{-cT}.",
    expressions={"h_needed": D},
    regime=[],
    notes="h_needed (read by the check) is the statement's threshold: the least number of heads "
    "h of the one layer with a T-independent cost (h >= h_needed), with ε^{-cT} below it. The "
    "statement covers every h (no regime); c is not given.",
    depends_on=("IF-T4",),
)
P.claim(
    "IF-P2",
    section="[Q1]",
    kind="theorem",
    provenance="reconstructed",
    statement="InfoFlow recovers the induction-head separation: two layers are efficient, one "
    "layer's cost grows with T.",
)
P.claim(
    "IF-P3",
    section="[Q1],[Q2] §6.1",
    kind="empirical",
    provenance="reconstructed",
    statement="For TASK-PMAX(D) efficient approximation needs h1 >= D and h2 >= D heads; removing "
    "a head from either layer raises NMSE by orders of magnitude.",
    expressions={"heads_needed": D},
)
P.claim(
    "IF-P3b",
    section="[Q1],[Q2] §6.1",
    kind="empirical",
    provenance="reconstructed",
    statement="The head-threshold gap depends on D: removing one head from either layer makes "
    "NMSE two to three orders of magnitude worse for D <= 4, about one order at D = 5 and a few "
    "times at D = 6 (d = 4, T = 64): the gap shrinks as D grows.",
    notes="The summaries report it as a table of NMSE per (D, config); no formula. The digest's "
    "IF-P3 test (§7 item 5) uses only D in {2, 3} at T = 16.",
    depends_on=("IF-P3",),
)
P.claim(
    "IF-P3c",
    section="digest §6.1, §7 item 5 ([Q2] mentions D+1)",
    kind="empirical",
    provenance="reconstructed",
    statement="The (D+1, D+1) control: a model with one head more than needed in both layers "
    "performs like the (D, D) model on TASK-PMAX(D) (the extra head costs nothing and buys "
    "nothing), as the framework predicts: both T-independent with the same rate.",
    expressions={"heads_ctrl": D + 1, "alpha_gap_control": sp.Integer(0)},
    notes="[Q2] only mentions D+1 among the configurations; the digest's §7 item 5 writes the "
    "control as 'should match (D, D)'. Read by the check: heads_ctrl, the control's heads in "
    "each of the two layers; alpha_gap_control, the control's ε-exponent minus that of the "
    "(D, D) model (IF-P3's heads_needed): 0, the same rate (the extra head buys nothing and "
    "costs nothing).",
    depends_on=("IF-P3",),
)
P.claim(
    "IF-P4",
    section="[Q1],[Q2] §6.2",
    kind="empirical",
    provenance="reconstructed",
    statement="Order-3 comparison (triangle-center) is intractable for fixed-size two-layer "
    "models: NMSE approaches 1 as T grows, whatever the heads or width.",
    expressions={"comparisons": T**3},
)
P.claim(
    "IF-K1",
    section="digest §4.1",
    kind="construction",
    provenance="derived",
    statement="Two layers, one head each, with positional self-exclusion compute f(2nd largest) "
    "with error <= L_f(2 err_attn) + L_f/N: O(ε^{-1}) parameters, T-independent exponent.",
    expressions={"err_bound": Lf * 2 * err_attn + Lf / N, "params_order": 1 / eps},
    rate=("params_order", eps),
    depends_on=("IF-T2",),
)
P.claim(
    "IF-K2",
    section="digest §4.2",
    kind="construction",
    provenance="derived",
    statement="Two layers of D heads compute Σ_i max_{s,t} x(s)ᵀA_i x(t); each term's error is "
    "one max-retrieval error per layer.",
    expressions={"err_bound": 2 * D * err_attn},
    depends_on=("IF-T2",),
    notes="Per term: layer-1 retrieval of the argmax key (error in the score) plus layer-2 max "
    "over tokens; each retrieval's error is at most err_attn, whose ln β makes the bound loose "
    "by a factor that grows like ln β (one softmax over T scores errs by at most g(T)/β, g "
    "independent of β). The digest's 7e-3 / 2.8e-4 / 2.7e-5 at β = 1e2 / 1e3 / 1e4 (D = 1, "
    "T = 8) are maxima over random inputs, not sup-norm errors (see IF-K2p).",
)
P.claim(
    "IF-K2p",
    section="digest §7 item 3 [NUM]",
    kind="upper",
    provenance="derived",
    statement="The digest's quantitative prediction for the pairwise-max construction (§4.2): its "
    "sup-error falls like 1/β up to a log T factor, and at β = 1e4 it stays <= 1e-4 for T up to "
    "256 and D <= 3 (its numerical check gave <= 4.3e-5).",
    expressions={
        "err_pred": 1 / beta,
        "beta_stated": sp.Integer(10**4),
        "T_max": sp.Integer(256),
        "D_max": sp.Integer(3),
    },
    notes="err_pred is the stated 1e-4 at the stated β = 1e4 (beta_stated), written as 1/β "
    "(the 'falls like 1/β'); the check compares it at β = beta_stated only, for T <= T_max and "
    "D <= D_max. The digest's figures (7e-3 / 2.8e-4 / 2.7e-5 at D = 1, T = 8; 4.3e-5 at "
    "D = 3, T = 256) were measured on inputs the digest does not describe.",
    depends_on=("IF-K2",),
)
P.claim(
    "IF-K3",
    section="digest §2.7, §5.3 W8 (construction of this project)",
    kind="construction",
    provenance="derived",
    statement="A constructed induction head: two layers with positional encoding (layer 1: a "
    "previous-token head and a last-token head, SPA; layer 2: one matching head at CLS, MPR) "
    "compute TASK-IND (the token after the latest earlier occurrence of the last token, 0 if "
    "none) with sup error <= T exp(-β(1/(4T) - 6T e^{-β})) and a read-out of d non-zero "
    "weights, whatever T: the two-layer side of IF-P2 as a network.",
    expressions={
        "err_bound": T * sp.exp(-beta * (1 / (4 * T) - 6 * T * sp.exp(-beta))),
        "readout_nonzero": d,
    },
    notes="Derived here for the construction in approxtheory.constructions.infoflow "
    "(if_induction): layer 2's scores separate the latest match from the next candidate by "
    "1/(4T) (a position ramp of height 1/4), the no-match key (CLS, value 0) sits at 1/2; "
    "layer 1's retrievals move a score by at most 5q, q <= T e^{-β} (the 6T e^{-β} term); "
    "the T other keys each weigh at most e^{-β·gap}. The digest states only that two layers "
    "with PE are T-independent (W8, from [Q1] citing Sanford et al.).",
    depends_on=("IF-P2", "IF-T2"),
)

P.claim(
    "IF-E1",
    section="[Q2] §6.4",
    kind="empirical",
    provenance="reconstructed",
    statement="Specific position aggregation: a one-layer, one-head transformer with positional "
    "encoding trained on x(1) + x(2) + x(3) (T = 10, x ~ N(0, I_2)) puts about 1/3 "
    "of the CLS attention on each of positions 1, 2, 3 and about 0 elsewhere, "
    "whatever the content of the tokens.",
    expressions={"weight_per_position": sp.Rational(1, 3)},
    notes="The digest's test (§7 item 7): mean CLS attention on each of positions 1-3 in "
    "[0.30, 0.37] and < 0.02 in total on the rest. The paper trained 2000 epochs with AdamW "
    "1e-3; the validation MSE value is not given.",
)
P.claim(
    "IF-E2",
    section="[Q2] §6.3",
    kind="empirical",
    provenance="reconstructed",
    statement="Argmax probe: in trained two-layer models, a linear probe on token t's "
    "post-attention state recovers x(argmax_s A(t,s)) much better than at "
    "initialisation (error ratio trained/init clearly below 1), but not the token with "
    "the second-largest score (ratio about 1).",
    notes="The digest's test (§7 item 8): argmax ratio < 0.9, runner-up ratio in [0.9, 1.1]. "
    "The probe protocol (layer, token, self position, sample counts) is not given; the check "
    "uses ours, with each uncertain piece a parameter (experiments/infoflow_trained.py, "
    "PROBE_DEFAULTS).",
)
P.claim(
    "IF-E3",
    section="digest §7 item 4 (empirical side of IF-T1)",
    kind="empirical",
    provenance="derived",
    statement="Trained one-layer versus two-layer models with one head per layer on the candidate "
    "separation tasks TASK-KTH(2) and TASK-PMAX(1): the fitted log-log slope of NMSE against "
    "the parameter count flattens as T grows for one layer (its exponent k(T) grows with T) and "
    "not for two layers (a T-free exponent: IF-T1's 1 for KTH(2), the slope_two_layers below; "
    "predict_rate gives 0 for PMAX(1), whose two-layer read-out is exact: no slope).",
    expressions={"slope_one_layer": -2 / k_T, "slope_two_layers": sp.Integer(-2)},
    # a one-layer exponent k(T) <= 0 predicts no slope (and -2/k(T) is undefined at 0)
    regime=[cond(sp.Gt(k_T, 0), "a*T + b > 0")],
    notes="Derived by the digest from IF-T1 (N ~ ε^-α and NMSE ~ ε² give NMSE ~ N^(-2/α)); the "
    "task family of IF-T1 is unknown, KTH(2) and PMAX(1) are the digest's candidates (ambiguity "
    "2). Whether the paper ran this experiment is not known.",
    depends_on=("IF-T1",),
)

# ------------------------------------------------------------------ the calculus's cost laws
# The laws approxtheory.infoflow charges per step (digest §5.2); the calculus reads every exponent
# from these claims and from IF-T4, never from a formula of its own.
C5 = P.sym("C5", "constant of one step's parameter count")
m = P.sym("m", "number of scalar inputs of a Lipschitz read-out or FFN map", integer=True)
alpha1 = P.sym("alpha1", "exponent of step 1's parameter count C_1 ε^-α_1", nonnegative=True)
alpha2 = P.sym("alpha2", "exponent of step 2's parameter count C_2 ε^-α_2", nonnegative=True)
C_1 = P.sym("C_1", "constant of step 1's parameter count")
C_2 = P.sym("C_2", "constant of step 2's parameter count")

P.claim(
    "IF-R1",
    section="[Q1],[Q2] + digest §5.2",
    kind="lemma",
    provenance="reconstructed",
    statement="Propagation-mode costs: max-position retrieval (MPR) and the residual charge no "
    "parameters that grow as ε -> 0 (β is free, IF-T2); global information aggregation (GIA) "
    "couples all T positions into one block, |I| = T, decoded at IF-T4's cost; specific "
    "position aggregation (SPA) over a fixed set P couples |P| positions, free when the "
    "consumer needs only the mixture (a linear function of the average), else decoded at "
    "IF-T4's cost with |I| = |P|.",
    expressions={
        "err_mpr": err_attn,
        "N_mpr": C5,
        "N_residual": C5,
        "I_global": T,
    },
    primary="err_mpr",
    notes="The sources give only the qualitative labels (MPR efficient, GIA costly and growing "
    "with T, SPA selects fixed positions); the per-mode charges are the digest's table in §5.2 "
    "[DER] built on [Q1]/[Q2]. err_mpr is what makes MPR free: the sup error a max-position "
    "retrieval head of fixed size reaches at inverse temperature β (IF-T2's err_attn, the same "
    "expression, in its regime βT >= 1), so a precision ε is bought with β, not with "
    "parameters; N_mpr's ε-exponent (0) is the charge itself.",
    depends_on=("IF-T2", "IF-T4"),
)
P.claim(
    "IF-R2",
    section="digest §3 (classical building block), §5.2",
    kind="upper",
    provenance="derived",
    statement="A ReLU FFN approximating a Lipschitz function of m decoupled scalar inputs to "
    "sup-error ε needs Θ(ε^{-m}) parameters (m = 1: a piecewise-linear interpolant with about "
    "L_f/ε knots); exactly representable maps (min, max, sums, linear maps) cost ε^0.",
    expressions={"N_lipschitz": C5 * eps ** (-m), "N_exact": C5, "knots_1d": Lf / eps},
    rate=("N_lipschitz", eps),
    primary="knots_1d",
    notes="knots_1d is the digest's m = 1 count ('a piecewise-linear interpolant with about "
    "L_f/ε knots'); C5 is unknown, so only the exponent of N_lipschitz and the m = 1 constant "
    "of knots_1d can be tested.",
)
P.claim(
    "IF-R3",
    section="digest §5.2 (decode_law='lipschitz')",
    kind="lower",
    provenance="derived",
    statement="Sensitivity variant of IF-T4 without the width: decoding a coupled mixture of "
    "|I| tokens of dimension d costs ε^{-|I| d} (the plain Lipschitz count of |I|·d numbers).",
    expressions={"N_decode": C4 * eps ** (-I_size * d)},
    rate=("N_decode", eps),
    notes="The digest marks IF-T4's exponent |I|d/E as uncertain (ambiguity 4) and proposes "
    "this law as the sensitivity check of predict_rate's decode_law.",
)
P.claim(
    "IF-R4",
    section="digest §5.2 (composition)",
    kind="lemma",
    provenance="derived",
    statement="Composition: the parameter count is the sum of the steps' counts, "
    "N(ε) = Σ_j C_j ε^{-α_j}, so the predicted rate is α = max_j α_j (the worst step "
    "dominates as ε -> 0).",
    expressions={
        "alpha_total": sp.Max(alpha1, alpha2),
        "N_total": C_1 * eps ** (-alpha1) + C_2 * eps ** (-alpha2),
    },
    notes="Inferred by the digest (ambiguity 8); the sources give no composition rule. Written "
    "for two steps (the rule folds: max over j is a nested max of pairs); alpha_total is the "
    "exponent claimed for N_total as ε -> 0.",
)

CLAIMS = P.claims
SYMBOLS = P.table
