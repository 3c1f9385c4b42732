"""Type stub of logratio (the full documentation: help(logratio.<name>))."""
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import verl as verl

__version__: str

class Error(ValueError):
    """A bad value (NaN, Inf, positive log-prob) naming tensor, row and column, or malformed state bytes."""

Tensor = Any  # torch.Tensor, numpy.ndarray, or any object with __dlpack__ / the buffer protocol

def simd_level() -> str:
    """The SIMD level the kernels run: 'avx512', 'avx2', 'sse2' or 'scalar' (LOGRATIO_SIMD overrides)."""
def available_simd_levels() -> List[str]:
    """Levels this CPU can run, narrowest first."""
def set_simd_level(name: str) -> None:
    """Run later calls at level `name` (tests, benchmarks)."""
def panel(train: Tensor, rollout: Tensor, mask: Optional[Tensor] = ..., cu_seqlens: Optional[Tensor] = ..., *,
          quantiles: bool = ..., threads: int = ..., nonfinite: str = ..., flavour: str = ...) -> Dict[str, Any]:
    """The ratio panel (SPEC.md keys) plus delta_abs_max_row / delta_abs_max_column."""
def panel_state(train: Tensor, rollout: Tensor, mask: Optional[Tensor] = ..., cu_seqlens: Optional[Tensor] = ..., *,
                nonfinite: str = ...) -> bytes:
    """Serialized panel state of one shard."""
def merge_panel_states(states: Sequence[bytes]) -> Dict[str, Any]:
    """The panel of merged shard states (no quantiles)."""
def correct(train: Tensor, rollout: Tensor, mask: Optional[Tensor] = ..., cu_seqlens: Optional[Tensor] = ..., *,
            rollout_is: Optional[str] = ..., rollout_is_threshold: Union[float, str, None] = ...,
            rollout_is_threshold_lower: Optional[float] = ..., rollout_is_batch_normalize: bool = ...,
            rollout_rs: Optional[str] = ..., rollout_rs_threshold: Union[float, str, None] = ...,
            rollout_rs_threshold_lower: Optional[float] = ..., rollout_token_veto_threshold: Optional[float] = ...,
            threads: int = ..., prefix: str = ..., flavour: Optional[str] = ..., mode: Optional[str] = ...,
            mode_options: Optional[Dict[str, Any]] = ..., nonfinite: str = ...) -> Tuple[Optional[Tensor], Tensor, Dict[str, float]]:
    """verl's rollout correction (or slime's / TRL's with flavour / mode): (float32 weights or None, response mask in the input mask's dtype, metrics)."""
def diagnose(train: Tensor, rollout: Tensor, mask: Optional[Tensor] = ..., cu_seqlens: Optional[Tensor] = ..., *,
             old: Optional[Tensor] = ..., threads: int = ...) -> Dict[str, Any]:
    """logratio doctor: {"findings": [...], "breakdowns": {...}, "worst": 'ok'|'warn'|'fail'}."""
def quantiles(train: Tensor, rollout: Tensor, mask: Optional[Tensor] = ..., cu_seqlens: Optional[Tensor] = ..., *,
              q: Sequence[float] = ..., of: str = ..., method: str = ..., nonfinite: str = ...) -> np.ndarray:
    """Exact quantiles (numpy.quantile's) of delta, abs_delta or ratio."""
def split_mismatch(train: Tensor, rollout: Tensor, old: Tensor, mask: Optional[Tensor] = ...,
                   cu_seqlens: Optional[Tensor] = ..., *, threads: int = ..., nonfinite: str = ...) -> Dict[str, Any]:
    """The mismatch split into numeric (old vs rollout) and lag (train vs old) parts."""
def logits(train: Tensor, rollout: Optional[Tensor] = ..., tokens: Optional[Tensor] = ..., *,
           temperature: float = ..., threads: int = ...) -> Dict[str, np.ndarray]:
    """Per-row entropy, KL both ways, TV (and sampled-token values) from logits."""

class KLLSketch:
    """Mergeable quantile sketch (KLL) of float64 values."""
    def __init__(self, k: int = ..., seed: int = ...) -> None: ...
    def update(self, values: Union[float, Tensor]) -> None:
        """Add one value or every value of an array (float32/64/16, bfloat16; NaN ignored)."""
    def merge(self, other: "KLLSketch") -> None:
        """Add another sketch's values."""
    def quantile(self, q: float) -> float:
        """Estimated q-quantile."""
    def quantiles(self, q: Sequence[float]) -> List[float]:
        """Estimated quantiles."""
    def rank(self, x: float, inclusive: bool = ...) -> float:
        """Estimated fraction of values <= x (< x when not inclusive)."""
    def normalized_rank_error(self, confidence: float = ...) -> float:
        """Rank error bound at the given confidence."""
    @property
    def n(self) -> int: ...
    @property
    def k(self) -> int: ...
    def serialize(self) -> bytes:
        """The sketch as bytes (deserialize() reads them back)."""
    @staticmethod
    def deserialize(data: bytes) -> "KLLSketch":
        """A sketch from serialize()'s bytes."""
    def __len__(self) -> int: ...
