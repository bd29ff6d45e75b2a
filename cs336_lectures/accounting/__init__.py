"""Resource accounting for lecture 2: memory, FLOPs, timing and MFU, napkin estimates.

Read top to bottom: memory.py (bytes per tensor, dtypes), flops.py (counting operations),
timing.py (seconds, promised FLOP/s, MFU), napkin.py (estimates for whole training runs).
"""

from cs336_lectures.accounting.flops import (
    backward_flops,
    forward_backward_flops,
    forward_flops,
    matmul_flops,
    training_flops,
)
from cs336_lectures.accounting.memory import (
    COMPARED_DTYPES,
    DtypeInfo,
    dtype_info,
    dtype_table,
    get_memory_usage,
    same_storage,
)
from cs336_lectures.accounting.napkin import (
    bytes_per_parameter,
    days_to_train,
    largest_model,
    seconds_to_train,
    training_step_memory,
)
from cs336_lectures.accounting.timing import (
    PEAKS,
    SPARSITY_FACTOR,
    MatmulMeasurement,
    Peak,
    PromisedFlops,
    get_device,
    match_device,
    measure_matmul,
    mfu,
    peak_flop_per_sec,
    precision_of,
    promised_flop_per_sec,
    time_matmul,
)

__all__ = [
    "COMPARED_DTYPES", "PEAKS", "SPARSITY_FACTOR", "DtypeInfo", "MatmulMeasurement", "Peak",
    "PromisedFlops", "backward_flops", "bytes_per_parameter", "days_to_train", "dtype_info",
    "dtype_table", "forward_backward_flops", "forward_flops", "get_device", "get_memory_usage",
    "largest_model", "match_device", "matmul_flops", "measure_matmul", "mfu",
    "peak_flop_per_sec", "precision_of", "promised_flop_per_sec", "same_storage",
    "seconds_to_train", "time_matmul", "training_flops", "training_step_memory",
]
