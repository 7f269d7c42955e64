"""Range declarations the catalog's experiments share (see
:mod:`lds_toolkit.experiments.config.ranges`), and the array-size arithmetic of their memory
estimates. Each experiment module declares its own ``ranges`` block from these pieces.

Torch-free, so that the numpy experiments can use it without importing torch.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...systems import eigenvalue_regions
from ..config.ranges import Bool, Check, Choice, Fields, Int, ListOf, MapOf, Maybe, Real, Relation

#: Float64 and float32 sizes in bytes.
F64, F32 = 8, 4

# ------------------------------------------------------------------ scalars and lists

#: A step size or learning rate: positive and finite.
POSITIVE = Real(0.0, None, low_open=True)
#: A fraction of a unit interval, 0 excluded.
FRACTION = Real(0.0, 1.0, low_open=True)
#: q of the context T^q.
Q = Real(0.0, 1.0, low_open=True)

LENGEN_RANGES = {
    "T": Int(2, 2**42),  # eigenvalue_regions' range; memory bounds it far below
    "k": Int(1, 4096),
    "n": Int(1, 2**20),
    "region_q": Q,
    "q_values": ListOf(Q, unique=True),
    "d_in": Int(1, 4096),
    "d_out": Int(1, 4096),
    "lr_grid": MapOf(ListOf(POSITIVE, unique=True), key=Choice("constant", "inv_sqrt")),
    "sensitivity_lrs": ListOf(POSITIVE, unique=True),
    "data_convention": Choice("lengen", "eq1-literal"),
    "filter_precision": Choice("double", "extended"),
    # the learners' feature route (exact taps or the filters' small LDS; issue 44)
    "filters": Choice("exact", "lds", "auto"),
    "region": Choice("A", "B"),
    "algorithm": Choice(1, 2),
    "smooth": Int(1),
    # the safe step of the step-size sweep: this fraction of the stability edge
    "safe_step_factor": FRACTION,
}


def region_b_problem(T: int, q: float) -> str | None:
    """Why Region B of (T, q) cannot be drawn from (``None`` when it can)."""
    try:
        eigenvalue_regions(T, q)
    except ValueError as exc:
        return str(exc)
    return None


def lengen_relations(T_entry: str = "T") -> tuple:
    """``k <= T`` and a non-empty Region B at ``region_q``."""
    def region_b(config):
        T = config[T_entry]
        T = max(T) if isinstance(T, list) else T
        return region_b_problem(T, config["region_q"])

    return (Relation("k", "<=", T_entry), Check(("region_q", T_entry), region_b))


def lengen_largest(config: Mapping, T: int) -> tuple[float, str]:
    """The largest array of one length-generalization task at horizon ``T``: the (T, k)
    filters, the (n, n) system matrix, the (q, T) loss curves or the (2, T, d) streams."""
    q = len(config.get("q_values", [1]))
    d = max(config.get("d_in", 1), config.get("d_out", 1))
    k, n = config.get("k", 1), config.get("n", 1)
    candidates = [
        (F64 * T * k, f"the (T={T}, k={k}) spectral filters"),
        (F64 * n * n, f"the ({n}, {n}) system matrix"),
        (F64 * q * T, f"the ({q}, T={T}) loss curves"),
        (F64 * 2 * T * d, f"the (2, T={T}, {d}) input and output streams"),
    ]
    return max(candidates)


# ------------------------------------------------------------------------- training

PLATEAU_SPEC = Maybe(Fields({"window": Int(1, 10**6), "min_delta": Real(0.0, 1e6),
                             "metric": Choice("loss", "accuracy"),
                             "min_evals": Int(0, 10**6), "min_gain": Real(0.0, 1e6),
                             # z of the noise-aware test (Plateau(confidence=z)); 0: off
                             "confidence": Real(0.0, 100.0)}))

TRAINING_RANGES = {
    "lr": Real(0.0, 10.0, low_open=True),
    "warmup": Int(0, 10**8),
    "weight_decay": Real(0.0, 10.0),
    "batch_size": Int(1, 2**16),
    "eval_every": Int(0, 10**8),
    "schedule": Choice("constant", "cosine"),
    "mlp_ratio": Real(0.0, 64.0, low_open=True),
    "plateau": PLATEAU_SPEC,
    "target_accuracy": Maybe(Real(0.0, 1.0, low_open=True)),
    "n_validation": Int(0, 10**7),
    # arithmetic and compilation of training (TrainConfig.precision / .compile)
    "precision": Choice("fp32", "tf32", "bf16"),
    "compile": Bool(),
}


def model_names(*names: str) -> ListOf:
    """A non-empty list of distinct model names among ``names``."""
    return ListOf(Choice(*names), unique=True)


def activations(batch: int, length: int, width: float, what: str = "activations",
                itemsize: int = F32) -> tuple[float, str]:
    """``(bytes, description)`` of a (batch, length, width) float32 activation."""
    return (itemsize * batch * length * width,
            f"the ({batch}, {length}, {int(width)}) float32 {what}")


def attention_scores(batch: int, heads: int, length: int, keys: int | None = None
                     ) -> tuple[float, str]:
    """``(bytes, description)`` of a (batch, heads, length, keys) float32 score tensor."""
    keys = length if keys is None else keys
    return (F32 * batch * heads * length * keys,
            f"the ({batch}, {heads}, {length}, {keys}) float32 attention scores")


def tokens(n: int, length: int) -> tuple[float, str]:
    """``(bytes, description)`` of an (n, length) int64 token array."""
    return 8.0 * n * length, f"the ({n}, {length}) int64 token sequences"


__all__ = ["Bool", "Check", "Choice", "Fields", "Int", "ListOf", "MapOf", "Maybe", "Real",
           "Relation", "F64", "F32", "POSITIVE", "FRACTION", "Q", "LENGEN_RANGES",
           "region_b_problem", "lengen_relations", "lengen_largest", "PLATEAU_SPEC",
           "TRAINING_RANGES", "model_names", "activations", "attention_scores", "tokens"]
