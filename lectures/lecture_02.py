"""CS336 lecture 2: PyTorch building blocks and resource accounting (memory and compute).

An executable lecture: `cs336-lectures trace lectures/lecture_02.py` runs `main()`.
Sizes are small on a CPU and the lecture's full sizes when CUDA is available. What the
lecture teaches lives in the package (`cs336_lectures.accounting`, `.models`,
`.optimizers`, `.data`, `.training`); the lecture calls it and links to the source.
"""

import io
import math
import random
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from einops import einsum, rearrange, reduce
from jaxtyping import Float
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from torch import nn

from cs336_lectures import Reference, link, plot, solution, text, translatable
from cs336_lectures.accounting import timing
from cs336_lectures.accounting import (
    COMPARED_DTYPES,
    PEAKS,
    backward_flops,
    bytes_per_parameter,
    days_to_train,
    dtype_table,
    forward_backward_flops,
    forward_flops,
    get_device,
    get_memory_usage,
    largest_model,
    matmul_flops,
    measure_matmul,
    peak_flop_per_sec,
    same_storage,
    seconds_to_train,
    time_matmul,
    training_flops,
    training_step_memory,
)
from cs336_lectures.data import get_batch, load_tokens, save_tokens
from cs336_lectures.models import Cruncher, Linear, get_num_parameters
from cs336_lectures.optimizers import (
    SGD,
    AdaGrad,
    Adam,
    AdamW,
    Momentum,
    RMSProp,
    get_num_state_values,
)
from cs336_lectures.training import (
    load_checkpoint,
    regression_task,
    save_checkpoint,
    set_seed,
    train,
    train_steps,
)


def main():
    overview()
    motivating_questions()

    memory_accounting()
    tensors_basics()
    tensors_memory()
    float32_format()
    float16_format()
    bfloat16_format()
    dtype_comparison()
    fp8_format()
    precision_takeaways()

    compute_accounting()
    tensors_on_gpus()
    tensor_storage()
    tensor_slicing()
    tensor_contiguity()
    tensor_elementwise()
    tensor_matmul()
    jaxtyping_basics()
    einops_einsum()
    einops_reduce()
    einops_rearrange()

    flops_intuitions()
    linear_model_flops()
    matmul_timing_and_mfu()
    gradients_basics()
    gradients_flops()

    models()
    module_parameters()
    parameter_initialization()
    custom_model()
    note_about_randomness()
    data_loading()
    optimizers()
    optimizer_state_by_hand()
    optimizer_state_table()
    memory_and_compute_per_step()

    training_loop()
    train_loop()
    checkpointing()
    mixed_precision_training()

    exercises()
    exercise_napkin_math_rtx4080()
    exercise_gpt2_xl_memory()
    next_time()


# ----------------------------------------------------------------------
# Overview


def overview():
    text("# Lecture 2: PyTorch and resource accounting")
    text("Last time: the course overview and tokenization.")
    text("Today we assemble, from the bottom up, everything a training run is made of: "
         "tensors first, then models, optimizers and the loop that ties them together. At "
         "every step we ask what it costs.")
    text("Costs come in two currencies, and we keep both accounts: **memory**, counted in "
         "bytes (usually GB), and **compute**, counted in floating-point operations "
         "(FLOPs).")


def motivating_questions():
    text("## Two napkin-math questions")
    text("Try both before opening the answers: a rough estimate is the whole point.")
    text("**Question 1.** A cluster of 1024 H100s is yours. You want a model with 70 billion "
         "parameters to read 15 trillion tokens. How many days will the run take? Assume the "
         "GPUs reach half of their dense bfloat16 peak.")
    with solution():
        text("Training costs about 6 FLOPs per parameter per token; the 6 is derived below, "
             "in *FLOPs of the backward pass*. Take it on trust for now:")
        link(training_flops)
        total_flops = training_flops(15e12, 70e9)  # @inspect total_flops
        link(timing, title="PEAKS: the vendor figures, and why sparse ones are halved")
        h100_flop_per_sec = PEAKS["H100 SXM"]["bf16"].dense  # @inspect h100_flop_per_sec
        text(f"{h100_flop_per_sec / 1e12:g} TFLOP/s per GPU: NVIDIA prints twice that for "
             "bfloat16, but the larger figure assumes sparse matrices; a dense matmul gets half.")
        # the question's assumption: half of the peak
        mfu = 0.5  # @inspect mfu
        flops_per_day = 1024 * mfu * h100_flop_per_sec * (24 * 60 * 60)  # @inspect flops_per_day
        days = total_flops / flops_per_day  # @inspect days
        link(days_to_train)
        napkin_days = days_to_train(70e9, 15e12, num_devices=1024,  # @inspect napkin_days
                                    flop_per_sec_per_device=h100_flop_per_sec, mfu=mfu)
        text(f"About {days:.0f} days, at half the peak.")

    text("**Question 2.** Eight H100s, 80 GB each, and AdamW with nothing clever: float32 "
         "throughout, and every GPU keeps a whole copy of the training state (no sharding). "
         "What is the largest model you can train? And if the state were sharded, split "
         "evenly over the eight GPUs?")
    with solution():
        h100_bytes = 80e9  # @inspect h100_bytes
        link(bytes_per_parameter)
        bytes_per_param = bytes_per_parameter(optimizer_states_per_parameter=2)  # @inspect bytes_per_param
        text(f"Each parameter brings its gradient and AdamW's two running averages (the "
             f"optimizer's state, counted below in *Optimizer state*), 4 values in float32: "
             f"{bytes_per_param} bytes.")
        link(largest_model)
        largest_num_parameters = largest_model(h100_bytes, bytes_per_param)  # @inspect largest_num_parameters
        text(f"Without sharding each GPU must hold everything, so one GPU's memory is the "
             f"limit: about {largest_num_parameters / 1e9:.0f}B parameters. The other seven "
             "GPUs make the run faster, not the model larger.")
        link(zero)
        sharded_num_parameters = largest_model(8 * h100_bytes, bytes_per_param)  # @inspect sharded_num_parameters
        text(f"Sharded (ZeRO's stage 3 splits parameters, gradients and optimizer state), "
             f"the eight GPUs pool their memory: about {sharded_num_parameters / 1e9:.0f}B "
             "parameters, less the room the GPUs need for the pieces they gather to compute.")
        text("Two things this leaves out. Activations: they grow with batch size and sequence "
             "length (see *Memory and compute of one step* below). And lower precision: "
             "keeping bfloat16 weights and gradients beside a float32 master copy of the "
             "weights costs 2 + 2 + 4 bytes where float32 needed 4 + 4, so it saves time "
             "(faster matmuls), not memory.")

    text("This lecture does not walk through the Transformer; these explain it well:")
    link(assignment1_handout)
    link(transformer_math)
    link(illustrated_transformer)
    link(illustrated_gpt2)
    text("Small models are enough to carry today's ideas. In the terms of lecture 1's "
         "table: how the machinery works is ordinary PyTorch here; how to think about cost is "
         "the subject, a number on the memory and FLOPs of everything; which choices pay off "
         "we can only hint at, because nothing large gets trained here.")


# ----------------------------------------------------------------------
# Memory accounting


def memory_accounting():
    text("# Memory accounting")
    text("How many bytes does a training run need? Everything it keeps is a tensor, so this "
         "part is about tensors: how they are made, what one costs, and which number formats "
         "trade bytes against accuracy.")


def tensors_basics():
    text("## Tensors")
    text("Whatever a training run holds in memory (the data, the parameters and their "
         "gradients, the optimizer's state, the activations) lives in tensors.")
    link(pytorch_tensors_docs)
    text("Ways to create them:")
    x = torch.tensor([[1.0, 2, 3], [4, 5, 6]])  # @inspect x
    # 4x8 of zeros
    x = torch.zeros(4, 8)  # @inspect x
    # 4x8 of ones
    x = torch.ones(4, 8)  # @inspect x
    # 4x8 of independent N(0, 1) draws
    x = torch.randn(4, 8)  # @inspect x
    text("`torch.empty` reserves the memory and leaves whatever bytes were there (so its "
         "contents are not shown: they differ from run to run)...")
    x = torch.empty(4, 8)
    text("...which is what you want when your own code fills it right after, here with "
         "normal draws cut off at -2 and 2:")
    nn.init.trunc_normal_(x, mean=0, std=1, a=-2, b=2)  # @inspect x


def tensors_memory():
    text("## Tensor memory")
    text("Apart from token ids, nearly every number in training is a float, so memory comes "
         "down to a product: how many values, times bytes per value:")
    link(get_memory_usage)
    x = torch.zeros(4, 8)  # @inspect x
    # float32 is the default
    dtype = x.dtype  # @inspect dtype
    num_values = x.numel()  # @inspect num_values
    bytes_per_value = x.element_size()  # @inspect bytes_per_value
    memory = get_memory_usage(x)  # @inspect memory
    text("One feed-forward matrix of GPT-3 (12288 x 4 by 12288), in float32:")
    gpt3_ffn_bytes = get_memory_usage(torch.empty(12288 * 4, 12288, device="meta"))  # @inspect gpt3_ffn_bytes
    gpt3_ffn_gib = gpt3_ffn_bytes / 2**30  # @inspect gpt3_ffn_gib
    text(f"{gpt3_ffn_gib:g} GiB for a single matrix! (A `meta` tensor has a shape and dtype "
         "but no storage, so nothing is allocated here.)")


def float32_format():
    text("## float32")
    link(float32_wikipedia)
    text("The formats of this part, bit by bit; each of the next sections takes one row:")
    plot(bit_layout_figure(list(COMPARED_DTYPES)))  # @stepover
    float32_layout = bit_layout(torch.float32)  # @inspect float32_layout
    text("PyTorch creates float32 tensors (\"fp32\", single precision) unless told "
         "otherwise. Numerical scientists see float32 as the minimum and often move up to "
         "float64; neural networks tolerate far coarser numbers.")


def float16_format():
    text("## float16")
    link(float16_wikipedia)
    float16_layout = bit_layout(torch.float16)  # @inspect float16_layout
    text("With 16 bits (\"fp16\", half precision) each value takes half the bytes:")
    x = torch.zeros(4, 8, dtype=torch.float16)
    float16_element_size = x.element_size()  # @inspect float16_element_size
    text("The price is range: with only 5 exponent bits, small magnitudes run out fast.")
    fp16_tiny = torch.tensor([1e-8], dtype=torch.float16)  # @inspect fp16_tiny
    fp16_value = fp16_tiny.item()  # @inspect fp16_value
    text("1e-8 is below float16's smallest value and becomes 0: an **underflow**. Tiny "
         "gradients vanishing like this is one way float16 training goes wrong.")


def bfloat16_format():
    text("## bfloat16")
    link(bfloat16_wikipedia)
    bfloat16_layout = bit_layout(torch.bfloat16)  # @inspect bfloat16_layout
    text("bfloat16 (\"brain float\", Google Brain, 2018) answers exactly this problem by "
         "moving bits from the mantissa to the exponent. With 8 exponent bits, like float32, "
         "it covers the same range in half the memory. What it gives up is precision, only 7 "
         "mantissa bits, and neural networks mind that far less than underflow.")
    bf16_tiny = torch.tensor([1e-8], dtype=torch.bfloat16)  # @inspect bf16_tiny
    bf16_value = bf16_tiny.item()  # @inspect bf16_value
    text(f"No underflow: 1e-8 is kept, as the nearest bfloat16 value, {bf16_value:.5g}.")


def dtype_comparison():
    text("## Range and resolution, side by side")
    text("Each row is read from `torch.finfo`:")
    link(dtype_table)
    rows = dtype_table()  # @inspect rows
    # the header is literal text (translated); the body holds only names and numbers
    body = "\n".join(f"| {row.name} | {row.bytes} | {row.largest:.6g} | {row.smallest_normal:.3g} | {row.eps:.3g} |"
                     for row in rows)
    text(f"| dtype | bytes | largest | smallest normal | eps (gap after 1) |\n| --- | ---: | ---: | ---: | ---: |\n{body}")
    by_name = {row.name: row for row in rows}
    text(f"float16 tops out at {by_name['float16'].largest:g}; bfloat16 reaches float32's "
         f"{by_name['bfloat16'].largest:.2g} but its step after 1 is {by_name['bfloat16'].eps:.2g}.")


def fp8_format():
    text("## fp8")
    text("Eight-bit floats for machine learning were proposed by NVIDIA, Arm and Intel in "
         "2022 and published as the Open Compute Project's standard (OCP FP8) in 2023; H100s "
         "compute with them natively. There are two flavours: E4M3 reaches 448 at most, "
         "E5M2 reaches 57344.")
    link(nvidia_fp8_primer)
    link(fp8_formats_paper)
    e4m3_largest = torch.finfo(torch.float8_e4m3fn).max  # @inspect e4m3_largest
    e5m2_largest = torch.finfo(torch.float8_e5m2).max  # @inspect e5m2_largest
    text("E4M3 spends a bit more on resolution (weights, activations); E5M2 on range "
         "(gradients).")


def precision_takeaways():
    text("## What this means for training")
    text("- All float32: stable, but every value costs 4 bytes.")
    text("- All fp8, float16 or even bfloat16: a fraction of the memory, with a real risk "
         "that the run blows up.")
    text("- Using each where it is safe (mixed precision) gets most of both; it closes "
         "this lecture.")


# ----------------------------------------------------------------------
# Compute accounting: tensors and operations


def compute_accounting():
    text("# Compute accounting")
    text("Where does the time go? First where tensors live and how operations walk through "
         "their memory, then how many FLOPs the forward and backward passes take, and how "
         "close the hardware comes to its promised speed.")


def tensors_on_gpus():
    text("## Tensors on GPUs")
    text("A new tensor is placed in the CPU's RAM:")
    x = torch.zeros(32, 32)
    x_device = x.device  # @inspect x_device
    text("A GPU can only work on data in its own memory, so tensors have to be copied "
         "over the bus that connects the two before its thousands of cores can help.")
    text("Copying x to the GPU and creating a second 32x32 float32 matrix there should "
         "allocate 2 x 32 x 32 x 4 bytes of GPU memory:")
    expected_memory_used = 2 * get_memory_usage(x)  # @inspect expected_memory_used
    num_gpus = torch.cuda.device_count()  # @inspect num_gpus
    text("Where each tensor of this section lives, and the one road between the two memories:")
    plot(devices_figure({"x": str(x_device), "y = x.to(\"cuda:0\")": "cuda:0",  # @stepover
                         "z = torch.zeros(..., device=\"cuda:0\")": "cuda:0"}, num_gpus))
    if num_gpus == 0:
        text("No GPU on this machine, so the copy and the check are skipped; traced on a "
             "CUDA machine, the lines below make the two matrices and compare the counts.")
        return
    gpu_properties = [torch.cuda.get_device_properties(i) for i in range(num_gpus)]  # @inspect gpu_properties @stepover
    memory_allocated = torch.cuda.memory_allocated()  # @inspect memory_allocated
    y = x.to("cuda:0")  # copy to GPU 0
    y_device = y.device  # @inspect y_device
    z = torch.zeros(32, 32, device="cuda:0")  # or create it there directly
    new_memory_allocated = torch.cuda.memory_allocated()  # @inspect new_memory_allocated
    memory_used = new_memory_allocated - memory_allocated  # @inspect memory_used
    assert memory_used == expected_memory_used
    del y, z


def tensor_storage():
    text("## Tensor storage and strides")
    text("Under the hood a tensor is a flat block of memory plus a little bookkeeping: "
         "its shape, and for each dimension a *stride*, the number of elements to jump to "
         "move one step along that dimension.")
    link(stride_docs)
    x = torch.tensor([[0.0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]])  # @inspect x
    strides = x.stride()  # @inspect strides
    text(f"Next row: skip {strides[0]} elements of storage; next column: skip {strides[1]}. "
         "Element (1, 2) is at:")
    r, c = 1, 2  # @inspect r c
    index = r * strides[0] + c * strides[1]  # @inspect index
    element = x.flatten()[index].item()  # @inspect element
    transposed_view_strides = x.t().stride()  # @inspect transposed_view_strides
    text(f"Drawn out: one strip of storage, read by two sets of bookkeeping. The 4x4 view "
         f"steps {strides[0]} cells per row and {strides[1]} per column; its transpose reads "
         f"the very same cells with the strides swapped, {transposed_view_strides}, so nothing is "
         "moved or copied:")
    plot(storage_figure(x.flatten().tolist(), tuple(x.shape), strides, transposed_view_strides))  # @stepover


def tensor_slicing():
    text("## Views")
    text("Basic indexing (integers and slices), `view` and `transpose` do not copy "
         "anything: they return a *view*, new bookkeeping over the same block of memory. "
         "Write through either one and the other sees it.")
    link(same_storage)
    x = torch.tensor([[1.0, 2, 3], [4, 5, 6]])  # @inspect x
    row = x[0]  # @inspect row
    column = x[:, 1]  # @inspect column
    reshaped = x.view(3, 2)  # @inspect reshaped
    transposed = x.transpose(1, 0)  # @inspect transposed
    views_share_storage = [same_storage(x, view) for view in (row, column, reshaped, transposed)]  # @inspect views_share_storage
    x[0][0] = 100  # @inspect x
    transposed_after_write = transposed.clone()  # @inspect transposed_after_write
    text("Writing x[0][0] = 100 changed `transposed` too.")
    text("*Advanced* indexing is different: a list or tensor of indices, or a boolean mask, "
         "can pick rows in any order and any number of times, which no shape and strides "
         "over the old storage can describe. So it copies:")
    picked = x[[0]]  # @inspect picked
    basic_row = x[0:1]  # @inspect basic_row
    picked_shares_storage = same_storage(x, picked)  # @inspect picked_shares_storage
    basic_row_shares_storage = same_storage(x, basic_row)  # @inspect basic_row_shares_storage
    picked[0][0] = -1
    x_after_writing_the_copy = x[0][0].item()  # @inspect x_after_writing_the_copy
    text(f"`x[[0]]` and `x[0:1]` hold the same numbers, but only the slice shares x's storage "
         f"(shares: {basic_row_shares_storage} for the slice, {picked_shares_storage} for the "
         f"list index); writing -1 into the copy left x[0][0] at {x_after_writing_the_copy:g}.")


def tensor_contiguity():
    text("## Contiguous and not")
    text("Some views walk the storage out of order (non-contiguous), and then `view` "
         "cannot reinterpret them:")
    x = torch.tensor([[1.0, 2, 3], [4, 5, 6]])
    y = x.transpose(1, 0)  # @inspect y
    is_contiguous = y.is_contiguous()  # @inspect is_contiguous
    try:
        y.view(2, 3)
        view_error = None
    except RuntimeError as error:
        view_error = str(error)  # @inspect view_error
    text("Make it contiguous first; that copies:")
    y = x.transpose(1, 0).contiguous().view(2, 3)  # @inspect y
    copy_shares_storage = same_storage(x, y)  # @inspect copy_shares_storage
    text("The test behind `is_contiguous`: walking the elements in order must walk the "
         "storage in order, so each stride is the product of the sizes to its right. "
         "A 2x3 tensor has strides (3, 1); its transpose, of shape 3x2, has (1, 3) where "
         "(2, 1) would be needed:")
    transposed_strides = x.transpose(1, 0).stride()  # @inspect transposed_strides
    text("`reshape` picks for you: a view when the strides allow one, otherwise a copy:")
    reshaped = x.transpose(1, 0).reshape(2, 3)  # @inspect reshaped
    reshape_copied = not same_storage(x, reshaped)  # @inspect reshape_copied
    text("Views are free. Copies are not: they take new memory and time to write it.")


def tensor_elementwise():
    text("## Elementwise operations")
    text("An elementwise operation works on each entry on its own; the result has the "
         "input's shape:")
    x = torch.tensor([1, 4, 9])  # @inspect x
    squared = x.pow(2)  # @inspect squared
    root = x.sqrt()  # @inspect root
    # 1 / sqrt(x_i), elementwise
    inverse_root = x.rsqrt()  # @inspect inverse_root
    doubled = [x + x, x * 2, x / 0.5]  # @inspect doubled
    text("`triu` keeps the upper triangle of a matrix:")
    upper = torch.ones(3, 3).triu()  # @inspect upper
    text("That is how a causal attention mask is made: M[i, j] says whether position i "
         "may contribute to position j. The kept triangle includes the diagonal, so every "
         "position sees itself and the positions before it, never one after it.")


def tensor_matmul():
    text("## Matrix multiplication")
    text("Matrix products are where nearly all of a network's FLOPs go:")
    x = torch.ones(16, 32)
    w = torch.ones(32, 2)
    y = x @ w
    y_shape = tuple(y.shape)  # @inspect y_shape
    text("In a network the same weights multiply every token of every sequence in a batch. "
         "`@` takes care of that: all dimensions before the last two are treated as a batch "
         "of independent matrix products.")
    x = torch.ones(4, 8, 16, 32)  # batch, sequence, rows, features
    y = x @ w
    batched_shape = tuple(y.shape)  # @inspect batched_shape
    text(f"{batched_shape[0]} x {batched_shape[1]} independent products, all with the same w:")
    plot(batched_matmul_figure(tuple(x.shape), tuple(w.shape), batched_shape))  # @stepover


def jaxtyping_basics():
    text("## Naming dimensions")
    text("Classic PyTorch code leaves you counting dimensions:")
    x = torch.ones(2, 2, 3)  # batch, sequence, hidden
    y = torch.ones(2, 2, 3)  # batch, sequence, hidden
    # batch, sequence, sequence
    z = x @ y.transpose(-2, -1)  # @inspect z
    text("What were -2 and -1 again? einops names the dimensions, after Einstein's "
         "summation notation (1916).")
    link(einstein_notation)
    link(einops_tutorial)
    text("jaxtyping writes the names into the type:")
    link(jaxtyping_docs)
    x: Float[torch.Tensor, "batch seq heads hidden"] = torch.ones(2, 2, 1, 3)
    x_shape = tuple(x.shape)  # @inspect x_shape
    text("Here the annotation is for the reader: nothing enforces it at run time (jaxtyping "
         "can, together with a runtime type checker).")


def einops_einsum():
    text("## einsum")
    text("`einsum` names every dimension of every operand: a dimension that two inputs "
         "share is multiplied along, and one left out of the output is summed away.")
    x: Float[torch.Tensor, "batch seq1 hidden"] = torch.ones(2, 3, 4)
    y: Float[torch.Tensor, "batch seq2 hidden"] = torch.ones(2, 3, 4)
    old_way = x @ y.transpose(-2, -1)
    z = einsum(x, y, "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2")  # @inspect z
    assert torch.equal(z, old_way)
    text("Dimensions missing from the output are summed over (every entry is 4 = hidden). "
         "`...` stands for any number of leading dimensions:")
    z = einsum(x, y, "... seq1 hidden, ... seq2 hidden -> ... seq1 seq2")  # @inspect z


def einops_reduce():
    text("## reduce")
    text("Collapse a dimension with sum, mean, max or min:")
    x: Float[torch.Tensor, "batch seq hidden"] = torch.ones(2, 3, 4)
    old_way = x.sum(dim=-1)
    y = reduce(x, "... hidden -> ...", "sum")  # @inspect y
    assert torch.equal(y, old_way)


def einops_rearrange():
    text("## rearrange")
    text("A dimension may pack two together, e.g. attention heads times the hidden size "
         "of each head; rearrange unpacks it so one part can be worked on, then packs it "
         "again:")
    x: Float[torch.Tensor, "batch seq total_hidden"] = torch.ones(2, 3, 8)
    w: Float[torch.Tensor, "hidden1 hidden2"] = torch.ones(4, 4)
    # split hidden into (heads, hidden1)
    x = rearrange(x, "... (heads hidden1) -> ... heads hidden1", heads=2)  # @inspect x
    # apply w to every head
    x = einsum(x, w, "... hidden1, hidden1 hidden2 -> ... hidden2")  # @inspect x
    # merge (heads, hidden2) back into one dimension
    x = rearrange(x, "... heads hidden2 -> ... (heads hidden2)")  # @inspect x
    final_shape = tuple(x.shape)  # @inspect final_shape


# ----------------------------------------------------------------------
# Compute accounting: FLOPs


def flops_intuitions():
    text("## FLOPs")
    text("Count one FLOP for each addition or multiplication of two floating-point "
         "numbers. Beware two spellings that read aloud the same:")
    text("- **FLOPs**: a number of operations (how much computing);")
    text("- **FLOP/s**: operations per second (how fast the hardware is); we never write "
         "FLOPS.")
    text("Some orders of magnitude:")
    gpt3_training_flops = 3.14e23  # @inspect gpt3_training_flops
    link(gpt3_paper)
    # an outside estimate, not a published figure
    gpt4_training_flops = 2e25  # @inspect gpt4_training_flops
    link(gpt4_flops_estimate)
    executive_order_threshold = 1e26  # @inspect executive_order_threshold
    text("A 2023 US executive order required reporting models trained with at least 1e26 "
         "FLOPs; it was revoked in 2025.")
    link(executive_order)
    a100_flop_per_sec = PEAKS["A100"]["bf16"].dense  # @inspect a100_flop_per_sec
    h100_flop_per_sec = PEAKS["H100 SXM"]["bf16"].dense  # @inspect h100_flop_per_sec
    link(a100_datasheet)
    link(h100_datasheet)
    text(f"H100's sheet says {2 * h100_flop_per_sec / 1e12:g} TFLOP/s with sparsity; dense "
         "matmuls get half.")
    two_weeks_seconds = 60 * 60 * 24 * 14  # @inspect two_weeks_seconds
    eight_h100_two_weeks = 8 * two_weeks_seconds * h100_flop_per_sec  # @inspect eight_h100_two_weeks
    gpt3_to_cluster = gpt3_training_flops / eight_h100_two_weeks  # @inspect gpt3_to_cluster
    text(f"8 H100s for two weeks ({two_weeks_seconds:,} seconds) at full speed: about "
         f"{eight_h100_two_weeks:.1e} FLOPs, still about {gpt3_to_cluster:.0f} times short of "
         "GPT-3's training run.")


def linear_model_flops():
    text("## FLOPs of a linear model")
    text("B data points, each a vector of D numbers, mapped by a linear model to K outputs:")
    B, D, K = matmul_sizes()  # @inspect B D K
    link(get_device)
    device = get_device()  # @inspect device
    x = torch.ones(B, D, device=device)
    w = torch.randn(D, K, device=device)
    y = x @ w
    text("Each output y[i][k] sums D products x[i][j] * w[j][k]: one multiplication and "
         "one addition per (i, j, k), so 2 x B x D x K in all:")
    link(matmul_flops)
    actual_num_flops = matmul_flops(B, D, K)  # @inspect actual_num_flops
    text("Everything else is small change next to that: an elementwise operation on an "
         "m x n matrix is O(mn) (adding two of them is exactly mn), with no third size "
         "to multiply by. Once matrices are big, their products dominate the bill.")
    text("Reading it as a model: B is the number of data points (tokens), D x K the number "
         "of parameters, so a forward pass costs **2 x tokens x parameters** FLOPs. To a "
         "first approximation that carries over to Transformers.")
    link(forward_flops)
    assert forward_flops(B, D * K) == actual_num_flops


def matmul_timing_and_mfu():
    text("## From FLOPs to seconds: timing a matmul")
    B, D, K = matmul_sizes()  # @inspect B D K
    device = get_device()
    x = torch.ones(B, D, device=device)
    w = torch.randn(D, K, device=device)
    text("Timing needs warm-up runs, several trials, and (on CUDA) waiting for the queued "
         "kernels to finish before reading the clock:")
    link(time_matmul)
    link(measure_matmul)
    float32_measurement = measure_matmul(x, w)  # @inspect float32_measurement @measured
    actual_time = float32_measurement.seconds  # @inspect actual_time @measured
    actual_flop_per_sec = float32_measurement.flop_per_sec  # @inspect actual_flop_per_sec @measured
    text("Every GPU has a datasheet with its peak FLOP/s, and the peak depends heavily on "
         "the dtype. Dense peaks, in TFLOP/s, of the two GPUs this course talks about:")
    link(peak_flop_per_sec)
    datasheet_tflop_per_sec = {  # @inspect datasheet_tflop_per_sec @stepover
        gpu: {"fp32": PEAKS[gpu]["fp32"].dense / 1e12, "bf16": PEAKS[gpu]["bf16"].dense / 1e12}
        for gpu in ("A100", "H100 SXM")
    }
    text(f"These are the dense figures as NVIDIA's datasheets print them (for the H100 SXM, "
         f"{datasheet_tflop_per_sec['H100 SXM']['fp32']:g} TFLOP/s in float32); a figure "
         "quoted with sparsity would be twice as large.")
    text("The promise for the device at hand, in float32:")
    promised_flop_per_sec = float32_measurement.promised.flop_per_sec  # @inspect promised_flop_per_sec
    promised_note = float32_measurement.promised.note  # @inspect promised_note
    text("**Model FLOPs utilization** (MFU) = actual FLOP/s / promised FLOP/s, leaving "
         "communication and overhead aside. Reaching half the promise (MFU 0.5) is "
         "already good; workloads made mostly of big matmuls get higher.")
    mfu = float32_measurement.mfu  # @inspect mfu @measured
    text("The same in bfloat16:")
    bf16_measurement = measure_matmul(x.to(torch.bfloat16), w.to(torch.bfloat16))  # @inspect bf16_measurement @measured
    bf16_actual_flop_per_sec = bf16_measurement.flop_per_sec  # @inspect bf16_actual_flop_per_sec @measured
    bf16_promised_flop_per_sec = bf16_measurement.promised.flop_per_sec  # @inspect bf16_promised_flop_per_sec
    bf16_mfu = bf16_measurement.mfu  # @inspect bf16_mfu @measured
    bf16_speedup = bf16_actual_flop_per_sec / actual_flop_per_sec  # @inspect bf16_speedup @measured
    if device.type == "cuda":
        text("On a GPU, bfloat16 runs much faster than float32 (tensor cores); MFU is often "
             "lower than one hopes: the promised figures are optimistic.")
    else:
        text("On a CPU there is no vendor peak to compare with, so MFU is left empty rather "
             "than invented. Whether bfloat16 beats float32 here depends on whether the CPU "
             "has bfloat16 matrix instructions: compare the two rates above.")
    text("Why the dtype matters so much on a GPU: matmuls in bfloat16 and float16 run on "
         "*tensor cores*, dedicated matrix units, while float32 matmuls by default run on "
         "the ordinary cores at a fraction of the rate. Two more formats run on tensor cores, "
         "but only when asked for:")
    text("- TF32 (float32's range, a 10-bit mantissa) lets float32 matmuls use the tensor "
         "cores, but PyTorch leaves it off until asked: "
         "`torch.set_float32_matmul_precision(\"high\")` or "
         "`torch.backends.cuda.matmul.allow_tf32 = True`;")
    text("- fp8 is never chosen for you: it takes a library such as Transformer Engine "
         "(see *Mixed precision training*) and scaling factors per tensor.")
    text("Summary: matmuls dominate, 2mnk FLOPs; FLOP/s depend on the hardware (H100 >> "
         "A100) and the dtype (bfloat16 >> float32); MFU = actual / promised.")


def gradients_basics():
    text("## Gradients")
    text("Everything so far ran forward: tensors in, results out. Training also needs the "
         "backward pass, the gradient of the loss with respect to each parameter. A small "
         "case worked out, $\\text{loss} = 0.5 (x \\cdot w - 5)^2$:")
    x = torch.tensor([1.0, 2, 3])
    w = torch.tensor([1.0, 1, 1], requires_grad=True)  # we want its gradient
    pred_y = x @ w  # @inspect pred_y
    loss = 0.5 * (pred_y - 5).pow(2)  # @inspect loss
    loss.backward()
    w_grad = w.grad  # @inspect w_grad
    text("$x \\cdot w = 6$, so the gradient is $(6 - 5) \\cdot x = [1, 2, 3]$. Only leaf "
         "tensors that asked for it get a `.grad`: not x (no `requires_grad`), and not the "
         "intermediate results pred_y and loss (not leaves).")
    x_grad = x.grad  # @inspect x_grad


def gradients_flops():
    text("## FLOPs of the backward pass")
    text("Back to the linear model, with two layers: x --w1--> h1 --w2--> h2 -> loss.")
    B, D, K = matmul_sizes()  # @inspect B D K
    device = get_device()
    x = torch.ones(B, D, device=device)
    w1 = torch.randn(D, D, device=device, requires_grad=True)
    w2 = torch.randn(D, K, device=device, requires_grad=True)
    h1 = x @ w1
    h2 = h1 @ w2
    loss = h2.pow(2).mean()  # @inspect loss
    # two matmuls: (B x D) @ (D x D), then (B x D) @ (D x K)
    num_forward_flops = matmul_flops(B, D, D) + matmul_flops(B, D, K)  # @inspect num_forward_flops
    h1.retain_grad()  # keep the intermediate gradients, to look at them
    h2.retain_grad()
    loss.backward()
    text("Start with w2. The chain rule makes its gradient h1ᵀ @ h2.grad: every entry adds "
         "up B products, one per data point, so it is a (D x B) @ (B x K) matmul:")
    num_backward_flops = matmul_flops(D, B, K)  # @inspect num_backward_flops
    text("The layer also hands a gradient back to its input, h1.grad = h2.grad @ w2ᵀ, a "
         "(B x K) @ (K x D) matmul of the same cost:")
    num_backward_flops += matmul_flops(B, K, D)  # @inspect num_backward_flops
    text("That was w2, with D x K parameters. w1, with D x D, takes the same pair: w1.grad "
         "= xᵀ @ h1.grad, and x.grad = h1.grad @ w1ᵀ. This model never uses x.grad, but "
         "in a deeper network x is the previous layer's output, so the rule counts it:")
    num_backward_flops += matmul_flops(D, B, D) + matmul_flops(B, D, D)  # @inspect num_backward_flops
    backward_to_forward = num_backward_flops / num_forward_flops  # @inspect backward_to_forward
    link(flops_calculus)
    text("Putting it together, per data point and parameter:")
    text("- forward: 2 FLOPs;")
    text("- backward: 4 FLOPs;")
    text("- total: **6 x data points x parameters**.")
    num_parameters = D * D + D * K  # @inspect num_parameters
    assert forward_flops(B, num_parameters) == num_forward_flops
    link(backward_flops)
    assert backward_flops(B, num_parameters) == num_backward_flops
    total_step_flops = forward_backward_flops(B, num_parameters)  # @inspect total_step_flops
    flops_per_point_and_parameter = {  # @inspect flops_per_point_and_parameter
        translatable("forward"): num_forward_flops / (B * num_parameters),
        translatable("backward"): num_backward_flops / (B * num_parameters),
    }
    plot(three_matmuls_figure(flops_per_point_and_parameter))  # @stepover


# ----------------------------------------------------------------------
# Models


def models():
    text("# Models")
    text("From tensors to something that learns: parameters and how to initialize them, a "
         "small model of our own, randomness, data, and the optimizers that update the "
         "parameters, with the memory and compute one step of all that takes.")


def module_parameters():
    text("## Parameters")
    text("Model parameters are `nn.Parameter`s: tensors that a module registers.")
    input_dim = 16384  # @inspect input_dim
    output_dim = 32  # @inspect output_dim
    w = nn.Parameter(torch.randn(input_dim, output_dim))
    is_tensor = isinstance(w, torch.Tensor)  # @inspect is_tensor
    # the plain tensor inside the parameter
    data_type = type(w.data).__name__  # @inspect data_type


def parameter_initialization():
    text("## Initialization")
    input_dim = 16384  # @inspect input_dim
    output_dim = 32  # @inspect output_dim
    x = torch.randn(input_dim)
    w = torch.randn(input_dim, output_dim)
    output = x @ w  # @inspect output
    unscaled_output_std = output.std().item()  # @inspect unscaled_output_std
    expected_std = math.sqrt(input_dim)  # @inspect expected_std
    text(f"Each output is a sum of {input_dim} terms of variance 1, so its typical size "
         f"grows like sqrt(input_dim) = {expected_std:g} (the {output_dim} outputs here measure "
         f"{unscaled_output_std:.0f}). Large values make gradients explode and training "
         "unstable.")
    text("Scale by 1/sqrt(input_dim) and the output no longer depends on the width:")
    w = torch.randn(input_dim, output_dim) / math.sqrt(input_dim)
    output = x @ w  # @inspect output
    scaled_output_std = output.std().item()  # @inspect scaled_output_std
    sigma = 1 / math.sqrt(input_dim)  # @inspect sigma
    text(f"Up to a constant, that is Xavier initialization. To be safer still, truncate the "
         f"normal at ±3σ, three of its own standard deviations, so no outlier weights appear. "
         f"The bound has to scale with σ: here σ = {sigma:g}, and an absolute cut at ±3 "
         f"would lie {3 / sigma:.0f} standard deviations out and never cut anything.")
    link(xavier_paper)
    link(Linear)
    layer = Linear(input_dim, output_dim, truncate=True)
    largest_weight_in_stds = (layer.weight.abs().max() * math.sqrt(input_dim)).item()  # @inspect largest_weight_in_stds


def custom_model():
    text("## A model of our own")
    text("A deep linear model built from those layers:")
    link(Cruncher)
    # dimension
    D = 64  # @inspect D
    num_layers = 2  # @inspect num_layers
    model = Cruncher(dim=D, num_layers=num_layers)
    param_sizes = [(name, parameter.numel()) for name, parameter in model.state_dict().items()]  # @inspect param_sizes
    link(get_num_parameters)
    num_parameters = get_num_parameters(model)  # @inspect num_parameters
    assert num_parameters == D * D + D * D + D
    text("Move the model to the GPU (when there is one), then run it on data:")
    device = get_device()
    model = model.to(device)
    # batch size
    B = 8  # @inspect B
    x = torch.randn(B, D, device=device)
    y = model(x)  # @inspect y


def note_about_randomness():
    text("## Randomness")
    text("Random numbers enter through the initial weights, dropout and the shuffling of "
         "the data. Seed all of them explicitly: a run you can replay step for step is a "
         "run whose bugs you can chase down.")
    text("Better still, give each use of randomness its own seed (initialization, dropout, "
         "data order): then you can vary one, say to try another data order, while the "
         "others stay fixed. The simplest case, one seed for the three generators Python "
         "code touches:")
    seed = 0  # @inspect seed
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    draws = [torch.rand(1).item(), np.random.rand(), random.random()]  # @inspect draws
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    same_draws = [torch.rand(1).item(), np.random.rand(), random.random()]  # @inspect same_draws
    assert draws == same_draws


def data_loading():
    text("## Data loading")
    text("After tokenization a corpus is nothing but a very long list of integers. A raw "
         "numpy array on disk is the simplest way to keep it:")
    link(save_tokens)
    link(load_tokens)
    orig_data = np.arange(1, 11, dtype=np.int32)  # @inspect orig_data
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.bin"
        save_tokens(orig_data, path)
        file_size = path.stat().st_size  # @inspect file_size
        llama_num_tokens = 1.4e12  # @inspect llama_num_tokens
        # LLaMA's 32,000 token ids fit in two bytes (uint16)
        llama_bytes = llama_num_tokens * 2  # @inspect llama_bytes
        text(f"Loading it all into memory is not an option at scale: LLaMA was trained on "
             f"{llama_num_tokens / 1e12:.1f} trillion tokens, {llama_bytes / 1e12:.1f} TB as "
             "2-byte ids. `np.memmap` maps the file and reads only the pages that are "
             "touched.")
        data = load_tokens(path)  # @inspect data
        assert np.array_equal(data, orig_data)
        text("A batch is a set of random windows; the targets are the inputs shifted by "
             "one token:")
        link(get_batch)
        generator = torch.Generator().manual_seed(0)
        inputs, targets = get_batch(data, batch_size=2, context_length=4,  # @inspect inputs targets
                                    device=get_device(), generator=generator)
        del data
    text("On a GPU, `get_batch` puts the batch in *pinned* (page-locked) memory and copies "
         "it with `non_blocking=True`. Pinning is what makes an asynchronous copy possible at "
         "all; it does not create any overlap by itself. `get_batch` builds each batch only "
         "when asked and the model's kernels queue behind its copy, so nothing overlaps here. "
         "A loader that prepares and copies the *next* batch while the GPU works on the "
         "current one (a background thread, a second CUDA stream) is what turns pinning into "
         "hidden transfer time.")
    link(pinned_memory_blog)


def optimizers():
    text("## Optimizers")
    text("The lineage, one idea at a time, starting from plain SGD:")
    link(SGD)
    text("- momentum = SGD + an exponential average of the gradient;")
    link(Momentum)
    text("- AdaGrad = SGD + dividing by the root of the summed squared gradients;")
    link(adagrad_paper)
    link(AdaGrad)
    text("- RMSProp = AdaGrad with an exponential average of squared gradients instead of "
         "a sum;")
    link(RMSProp)
    text("- Adam = RMSProp + momentum;")
    link(adam_paper)
    link(Adam)
    text("- AdamW = Adam with weight decay applied to the weights directly.")
    link(adamw_paper)
    link(AdamW)
    text("The update rules, with $\\theta_t$ the parameters at step $t$, $g_t$ their "
         "gradient, $\\eta$ the learning rate and $\\epsilon$ a tiny constant that keeps a "
         "denominator away from zero:")
    text("| optimizer | what it keeps | the step |\n"
         "| --- | --- | --- |\n"
         "| SGD | nothing | $\\theta_{t+1} = \\theta_t - \\eta g_t$ |\n"
         "| Momentum | $v_t = \\beta v_{t-1} + (1 - \\beta) g_t$ | along $v_t$ instead of $g_t$ ($\\beta$ about 0.9) |\n"
         "| AdaGrad | $G_t = G_{t-1} + g_t^2$ | $\\theta_{t+1} = \\theta_t - \\eta g_t / \\sqrt{G_t + \\epsilon}$ |\n"
         "| RMSProp | $v_t = \\alpha v_{t-1} + (1 - \\alpha) g_t^2$ | as AdaGrad, with $v_t$ for $G_t$ ($\\alpha$ about 0.99) |\n"
         "| Adam | $m_t$ averaging $g_t$ and $v_t$ averaging $g_t^2$ | $\\theta_{t+1} = \\theta_t - \\eta \\hat m_t / (\\sqrt{\\hat v_t} + \\epsilon)$ |")
    text("Reading the table down: momentum smooths the direction of travel. AdaGrad "
         "scales each weight's step by the size of its past gradients, but its sum never "
         "shrinks, so a long run slows to a crawl; RMSProp's average lets that history fade. "
         "Adam does both, and since its averages start at zero it divides them by "
         "$1 - \\beta_1^t$ and $1 - \\beta_2^t$ ($\\hat m_t$, $\\hat v_t$), which matters in the "
         "first steps only.")
    text("One AdaGrad step on the two-layer D=4 model:")
    device = get_device()
    model = Cruncher(dim=4, num_layers=2).to(device)
    optimizer = AdaGrad(model.parameters(), lr=0.01)
    weights_before = [parameter.detach().clone() for parameter in model.parameters()]  # @stepover
    x = torch.randn(2, 4, device=device)
    y = torch.tensor([4.0, 5.0], device=device)
    pred_y = model(x)
    loss = F.mse_loss(input=pred_y, target=y)  # @inspect loss
    loss.backward()
    optimizer.step()
    changes = torch.cat([(after.detach() - before).flatten()  # @inspect changes
                         for before, after in zip(weights_before, model.parameters())])
    largest_change = changes.abs().max().item()  # @inspect largest_change
    text(f"Every weight moved by the same amount, {largest_change:.4f}, which is the "
         "learning rate. After one step AdaGrad's running sum holds just the square of the "
         "gradient, and a number divided by the root of its own square keeps only its sign: "
         "the first step ignores how large each gradient was.")
    g2_state = optimizer.state[model.final.weight]["g2"]  # @inspect g2_state
    optimizer.zero_grad(set_to_none=True)  # free the gradients' memory (optional)


def optimizer_state_by_hand():
    text("## What \"state\" means")
    w = nn.Parameter(torch.tensor([2.0]))
    lr = 0.1  # @inspect lr
    gradients = (3.0, 4.0)  # @inspect gradients
    text(f"Follow one weight through two AdaGrad steps: w = {w.item():g}, lr = {lr:g}, and "
         f"the gradients {gradients[0]:g} then {gradients[1]:g}.")
    optimizer = AdaGrad([w], lr=lr)
    g2_history = [0.0]  # the sum before any step
    worked_steps = []  # @inspect worked_steps
    for grad in gradients:  # @inspect grad
        weight_before = w.item()
        w.grad = torch.tensor([grad])
        optimizer.step()
        g2 = optimizer.state[w]["g2"].item()  # @inspect g2
        weight = w.item()  # @inspect weight
        # one table row of formulas and numbers: it sits inside a translated table, so it holds no English word
        worked_steps.append(f"| {len(worked_steps) + 1} | {grad:g} | {g2_history[-1]:g} + {grad:g}² = {g2:g} "  # @inspect worked_steps @stepover
                            f"| {weight_before:.4g} - {lr:g} x {grad:g} / √{g2:g} = {weight:.4g} |")
        g2_history.append(g2)
    text(f"| step | g | g2 | w |\n| ---: | ---: | --- | --- |\n{worked_steps[0]}\n{worked_steps[1]}")
    text(f"Where did the {g2_history[1]:g} in the second row come from? From the first step, "
         "which computed it and left it behind for the next one. Whatever an optimizer "
         "carries over like that, one entry per parameter, is its `state`.")


def optimizer_state_table():
    text("## Optimizer state")
    text("What each optimizer keeps per parameter is memory. One step of each on the same "
         "model, counting the values in their `state`:")
    link(get_num_state_values)
    device = get_device()
    classes = [SGD, Momentum, AdaGrad, RMSProp, Adam, AdamW]
    state_values_per_parameter = {}  # @inspect state_values_per_parameter
    for optimizer_class in classes:
        torch.manual_seed(0)
        model = Cruncher(dim=4, num_layers=2).to(device)
        optimizer = optimizer_class(model.parameters(), lr=0.01)
        loss = model(torch.randn(2, 4, device=device)).pow(2).mean()
        loss.backward()
        optimizer.step()
        ratio = get_num_state_values(optimizer) / get_num_parameters(model)  # @inspect ratio
        state_values_per_parameter[optimizer_class.__name__] = ratio  # @inspect state_values_per_parameter
    values = state_values_per_parameter
    # one literal table, its words translatable, its numbers from the run
    text(f"| optimizer | state | values per parameter |\n| --- | --- | ---: |\n"
         f"| SGD | none | {values['SGD']:g} |\n"
         f"| Momentum | average of g | {values['Momentum']:g} |\n"
         f"| AdaGrad | sum of g² | {values['AdaGrad']:g} |\n"
         f"| RMSProp | average of g² | {values['RMSProp']:g} |\n"
         f"| Adam | averages of g and g² | {values['Adam']:g} |\n"
         f"| AdamW | averages of g and g² | {values['AdamW']:g} |")
    text("Adam's two averages are why training with it costs 16 bytes per float32 "
         "parameter.")


def memory_and_compute_per_step():
    text("## Memory and compute of one step")
    text("The two-layer model again, D = 4, batch B = 2, AdaGrad:")
    B, D, num_layers = 2, 4, 2  # @inspect B D num_layers
    # num_layers hidden D x D matrices, then the final D x 1 head
    num_parameters = num_layers * D * D + D  # @inspect num_parameters
    assert num_parameters == get_num_parameters(Cruncher(dim=D, num_layers=num_layers))
    num_activations = num_layers * B * D  # @inspect num_activations
    text("Activations (B x D per layer) are kept because the backward pass needs them: "
         "the gradient of a layer's weights is (its input)ᵀ @ (the gradient of its "
         "output), so each layer's input must still be in memory. *Activation "
         "checkpointing* keeps only some of them and recomputes the others during the "
         "backward pass, trading compute for memory.")
    num_gradients = num_parameters  # @inspect num_gradients
    # AdaGrad: one sum per parameter
    num_optimizer_states = num_parameters  # @inspect num_optimizer_states
    text("Everything in float32 (4 bytes):")
    link(training_step_memory)
    bytes_per_float32 = 4  # @inspect bytes_per_float32
    num_stored_values = num_parameters + num_gradients + num_optimizer_states + num_activations  # @inspect num_stored_values
    total_memory = bytes_per_float32 * num_stored_values  # @inspect total_memory
    assert total_memory == training_step_memory(num_parameters, num_activations, num_gradients, num_optimizer_states)
    text("With Adam instead, two averages per parameter:")
    adam_total_memory = training_step_memory(num_parameters, num_activations, num_gradients, 2 * num_parameters)  # @inspect adam_total_memory
    memory_by_optimizer = {  # @inspect memory_by_optimizer
        name: {"parameters": 4 * num_parameters, "gradients": 4 * num_gradients,
               "optimizer state": 4 * states * num_parameters, "activations": 4 * num_activations}
        for name, states in (("SGD", 0), ("AdaGrad", 1), ("Adam", 2))
    }
    text(f"Side by side, in bytes: the optimizer's state is the part that grows, from nothing "
         f"for plain SGD to {memory_by_optimizer['Adam']['optimizer state']} bytes for Adam, "
         f"more than the parameters themselves.")
    plot(memory_by_optimizer_figure(memory_by_optimizer))  # @stepover
    text("Compute for one step, by the 6x rule:")
    link(forward_backward_flops)
    flops = forward_backward_flops(B, num_parameters)  # @inspect flops
    text("Transformers are more involved, but the accounting is the same idea; assignment "
         "1 asks for it.")
    link(transformer_memory_blog)
    link(transformer_flops_blog)


def training_loop():
    text("# The training loop")
    text("Everything assembled: a loop that trains the model, checkpoints that let a run "
         "survive interruptions, and mixed precision that makes each step cheaper.")


def train_loop():
    text("## Training a model")
    text("Data from a linear function with weights (0, 1, 2, ..., D-1), and a loop: get a "
         "batch, forward (loss), backward (gradients), step, zero the gradients.")
    link(train)
    text("Two runs of the same model that differ only in the learning rate:")
    link(regression_task)
    D = 16  # @inspect D
    get_regression_batch = regression_task(D)
    true_w = torch.arange(D, dtype=torch.float32)  # @inspect true_w
    num_train_steps = 100  # @inspect num_train_steps
    slow_losses = train(get_regression_batch, dim=D, num_layers=0, batch_size=4,  # @inspect slow_losses
                        num_train_steps=num_train_steps, lr=0.01)
    fast_losses = train(get_regression_batch, dim=D, num_layers=0, batch_size=4,  # @inspect fast_losses
                        num_train_steps=num_train_steps, lr=0.1)
    plot(loss_curves_figure({"lr = 0.01": slow_losses, "lr = 0.1": fast_losses},  # @stepover
                            title=translatable("The same model and batches at two learning rates")))
    slow_final_loss = sum(slow_losses[-10:]) / 10  # @inspect slow_final_loss
    fast_final_loss = sum(fast_losses[-10:]) / 10  # @inspect fast_final_loss
    text(f"Both runs see the same batches (train seeds everything first). Averaged over the "
         f"last 10 of {num_train_steps} steps, the loss is {fast_final_loss:.2g} with lr=0.1 "
         f"and {slow_final_loss:.2g} with lr=0.01. Tuning hyperparameters is worth it.")
    text("Now a deeper model, with two hidden 16x16 layers. It multiplies three matrices, "
         "so its gradients grow with their product, and even lr=0.01 diverges:")
    deep_losses = train(get_regression_batch, dim=D, num_layers=2, batch_size=4,  # @inspect deep_losses
                        num_train_steps=num_train_steps, lr=0.01)
    deep_diverged_at_step = first_non_finite_step(deep_losses)  # @inspect deep_diverged_at_step
    deep_slow_losses = train(get_regression_batch, dim=D, num_layers=2, batch_size=4,  # @inspect deep_slow_losses
                             num_train_steps=num_train_steps, lr=0.001)
    deep_slow_final_loss = sum(deep_slow_losses[-10:]) / 10  # @inspect deep_slow_final_loss
    plot(loss_curves_figure({"lr = 0.01": deep_losses, "lr = 0.001": deep_slow_losses},  # @stepover
                            title=translatable("The deeper model: lr = 0.01 diverges, lr = 0.001 trains")))
    text(f"The loss overflows at step {deep_diverged_at_step}. Ten times smaller, lr=0.001 "
         f"trains the deeper model fine (final loss {deep_slow_final_loss:.2g}): the right "
         "learning rate depends on the architecture.")


def checkpointing():
    text("## Checkpointing")
    text("A run that lasts weeks will be interrupted: a node dies, a job is preempted. "
         "Write the model, the optimizer state, the step number and the random generators "
         "to disk every so often, and a crash costs minutes instead of weeks:")
    link(save_checkpoint)
    link(load_checkpoint)
    link(set_seed)
    link(train_steps)
    device = get_device()
    get_regression_batch = regression_task(16, device)
    set_seed(0)
    model = Cruncher(dim=16, num_layers=2).to(device)
    optimizer = AdaGrad(model.parameters(), lr=0.01)
    first_losses = train_steps(model, optimizer, get_regression_batch, batch_size=4, num_steps=5)  # @inspect first_losses
    # a file on disk in real life
    checkpoint = io.BytesIO()
    save_checkpoint(model, optimizer, iteration=5, out=checkpoint)
    checkpoint_bytes = checkpoint.getbuffer().nbytes  # @inspect checkpoint_bytes
    text("Keep going without interruption:")
    uninterrupted_losses = train_steps(model, optimizer, get_regression_batch, batch_size=4, num_steps=5)  # @inspect uninterrupted_losses
    text("Now pretend the run crashed after the checkpoint: a fresh process builds a new "
         "model and optimizer and loads the checkpoint into them.")
    checkpoint.seek(0)
    restored_model = Cruncher(dim=16, num_layers=2).to(device)
    restored_optimizer = AdaGrad(restored_model.parameters(), lr=0.01)
    resumed_iteration = load_checkpoint(checkpoint, restored_model, restored_optimizer)  # @inspect resumed_iteration
    resumed_losses = train_steps(restored_model, restored_optimizer, get_regression_batch, batch_size=4, num_steps=5)  # @inspect resumed_losses
    resumed_exactly = resumed_losses == uninterrupted_losses  # @inspect resumed_exactly
    text("The resumed run sees the same batches (the random generators were restored too) "
         "and reproduces the uninterrupted losses exactly.")


def mixed_precision_training():
    text("## Mixed precision training")
    text("More bits buy accuracy and stability and cost memory and FLOP/s; fewer bits "
         "save both and risk the run.")
    text("Mixed precision keeps float32 as the default and drops to bfloat16 (or fp8) only "
         "where that is harmless: the forward pass's matmuls and activations run low, "
         "while parameters, gradients and optimizer state stay in float32.")
    link(mixed_precision_paper)
    link(pytorch_amp)
    link(nvidia_mixed_precision)
    device = get_device()
    model = Cruncher(dim=16, num_layers=2).to(device)
    x = torch.randn(4, 16, device=device)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        y = model(x)
    # The matmuls ran in bfloat16
    output_dtype = y.dtype  # @inspect output_dtype
    # The weights stayed float32
    parameter_dtype = model.final.weight.dtype  # @inspect parameter_dtype
    y.float().pow(2).mean().backward()
    gradient_dtype = model.final.weight.grad.dtype  # @inspect gradient_dtype
    text("The training loop does this when asked. The same run twice, once all in float32 "
         "and once in mixed precision:")
    float32_losses = train(regression_task(16), dim=16, num_layers=0,  # @inspect float32_losses
                           batch_size=4, num_train_steps=MIXED_PRECISION_STEPS, lr=0.1)
    mixed_precision_losses = train(regression_task(16), dim=16, num_layers=0,  # @inspect mixed_precision_losses
                                   batch_size=4, num_train_steps=MIXED_PRECISION_STEPS, lr=0.1, mixed_precision=True)
    plot(loss_curves_figure({"float32": float32_losses,  # @stepover
                             translatable("mixed precision (bfloat16 forward)"): mixed_precision_losses},
                            title=translatable("The same run in float32 and in mixed precision")))
    relative_gaps = [abs(mixed - full) / full for mixed, full in zip(mixed_precision_losses, float32_losses)]  # @stepover
    # how many steps the two losses stay within 30% of each other
    steps_together = next((step for step, gap in enumerate(relative_gaps) if gap > 0.3), len(relative_gaps))  # @inspect steps_together
    largest_early_gap = max(relative_gaps[:steps_together])  # @inspect largest_early_gap
    final_losses = (float32_losses[-1], mixed_precision_losses[-1])  # @inspect final_losses
    # 7 stored mantissa bits plus the implicit leading 1
    bfloat16_digits = math.log10(2 ** (bit_layout(torch.bfloat16)["mantissa"] + 1))  # @inspect bfloat16_digits
    text(f"For the first {steps_together} steps the two runs fall together, the loss going "
         f"from {float32_losses[0]:.0f} to {float32_losses[steps_together - 1]:.2g} (on the "
         f"log scale the curves overlap; step by step they differ by up to "
         f"{largest_early_gap:.0%}). Below that the float32 run keeps going, to "
         f"{final_losses[0]:.1e}, while the mixed-precision run levels off "
         f"({final_losses[1]:.1e} at the end): bfloat16 keeps 8 significant bits, about "
         f"{bfloat16_digits:.1f} decimal digits, too few to resolve the tiny errors left. This toy "
         "regression can reach a loss of zero; a language model's loss stays far above the "
         "level where that rounding matters, which is why mixed precision is the norm.")
    text("Rule of thumb: whatever accumulates over many steps (the weights, optimizer "
         "averages, sums inside a matmul) wants float32; what is used once and thrown "
         "away (a forward pass's activations) tolerates bfloat16.")
    text("NVIDIA's Transformer Engine runs linear layers in FP8, and FP8-LM trains in FP8 "
         "throughout.")
    link(nvidia_fp8_primer)
    link(fp8_lm)
    text("Inference is more forgiving still: once training is done, weights can be "
         "*quantized* to 8 bits or fewer, making the model smaller and faster.")


# ----------------------------------------------------------------------
# Exercises


def exercises():
    text("# Exercises")
    text("Try each one before opening its solution.")


def exercise_napkin_math_rtx4080():
    text("## Exercise: napkin math for a small run")
    text("A workstation holds four RTX 4080 cards; each peaks at 97.5 TFLOP/s in dense "
         "bfloat16, and a realistic run reaches 40% of that (MFU 0.4). A model of 125 million "
         "parameters is to read 2.5 billion tokens. Will the run be done in an afternoon, a "
         "day or a week?")
    rtx4080_flop_per_sec = 97.5e12  # @inspect rtx4080_flop_per_sec
    with solution():
        small_run_flops = training_flops(2.5e9, 125e6)  # @inspect small_run_flops
        link(seconds_to_train)
        seconds = seconds_to_train(125e6, 2.5e9, num_devices=4,  # @inspect seconds
                                   flop_per_sec_per_device=rtx4080_flop_per_sec, mfu=0.4)
        hours = seconds / 3600  # @inspect hours
        text(f"6 x parameters x tokens = {small_run_flops:.3g} FLOPs. The four cards deliver "
             f"4 x 0.4 x 97.5e12 FLOP/s, so the run takes about {seconds:,.0f} seconds: "
             f"{hours:.1f} hours, an afternoon.")


def exercise_gpt2_xl_memory():
    text("## Exercise: the training memory of GPT-2 XL")
    text("GPT-2 XL has 48 layers of width 1600 with 25 attention heads, a vocabulary of "
         "50,257 tokens and a context of 1024. It is trained with AdamW on batches of 8 "
         "sequences of 1024 tokens: parameters, gradients and optimizer state in float32, "
         "activations in bfloat16 (mixed precision). How many parameters does it have, how "
         "much memory does a training step hold, and does that fit on one 80 GB H100?")
    text("For the activations a layer keeps for the backward pass, use the estimate of "
         "Korthikanti et al.: $s b h (34 + 5 a s / h)$ bytes, for sequence length $s$, batch "
         "$b$, width $h$ and $a$ heads.")
    link(activation_recomputation)
    with solution():
        num_layers, d_model, num_heads = 48, 1600, 25  # @inspect num_layers d_model num_heads
        vocab_size, context_length, batch_size = 50257, 1024, 8  # @inspect vocab_size context_length batch_size
        # 4 d^2 in attention's projections, 8 d^2 in the MLP; biases and two LayerNorms add 13 d
        layer_parameters = 12 * d_model**2 + 13 * d_model  # @inspect layer_parameters
        # token and position embeddings (the output layer reuses the token embedding), final LayerNorm
        num_parameters = num_layers * layer_parameters + (vocab_size + context_length + 2) * d_model  # @inspect num_parameters
        state_bytes = num_parameters * bytes_per_parameter(optimizer_states_per_parameter=2)  # @inspect state_bytes
        text(f"{num_parameters:,} parameters: $12 h^2 + 13 h$ per layer (attention's four "
             f"projections, the MLP, biases and LayerNorms) and the embeddings. At "
             f"{bytes_per_parameter(optimizer_states_per_parameter=2)} bytes each, the "
             f"parameters, gradients and AdamW's state take {state_bytes / 1e9:.1f} GB.")
        tokens_times_width = context_length * batch_size * d_model  # @inspect tokens_times_width
        activation_bytes = num_layers * tokens_times_width * (34 + 5 * num_heads * context_length / d_model)  # @inspect activation_bytes
        total_gb = (state_bytes + activation_bytes) / 1e9  # @inspect total_gb
        text(f"The activations take {activation_bytes / 1e9:.1f} GB, so a step holds "
             f"{total_gb:.1f} GB: more than one H100 has. At this batch the activations, not "
             "the optimizer, are the larger part.")
        # the 5as/h term is the attention scores and their softmax, s^2 values per head
        fused_activation_bytes = num_layers * tokens_times_width * 34  # @inspect fused_activation_bytes
        fused_total_gb = (state_bytes + fused_activation_bytes) / 1e9  # @inspect fused_total_gb
        text(f"Most of it is the term $5 a s / h$: the attention scores, $s^2$ values per head. "
             f"A fused attention kernel (FlashAttention) recomputes them in the backward pass "
             f"instead of storing them, leaving {fused_activation_bytes / 1e9:.1f} GB of "
             f"activations and {fused_total_gb:.1f} GB in all, which fits. Recomputing whole "
             "layers (activation checkpointing) or a smaller batch would save more.")
        link(flash_attention)


def next_time():
    text("## Next time")
    text("Lecture 3 turns from the simple models of today to the Transformer architecture "
         "and its variants.")


# ----------------------------------------------------------------------
# Helpers used by the lecture (sizes, figures)


def first_non_finite_step(losses: list[float]) -> int | None:
    """The 1-based step whose loss first became inf or nan, or None if training stayed finite."""
    return next((step for step, loss in enumerate(losses, 1) if not math.isfinite(loss)), None)


MIXED_PRECISION_STEPS = 100  # long enough for the loss to fall below what bfloat16 resolves

# (B, D, K) of the matmul examples: data points, input dimension, outputs.
GPU_MATMUL_SIZES = (16384, 32768, 8192)
CPU_MATMUL_SIZES = (1024, 256, 64)


def matmul_sizes() -> tuple[int, int, int]:
    """(B, D, K) for the matmul examples: the lecture's GPU sizes, or small ones on a CPU."""
    return GPU_MATMUL_SIZES if torch.cuda.is_available() else CPU_MATMUL_SIZES


def bit_layout(dtype: torch.dtype) -> dict[str, int]:
    """Sign, exponent and mantissa bits of a float format, read off torch.finfo.

    eps = 2^-mantissa_bits; the exponent takes the bits left after the sign.
    """
    info = torch.finfo(dtype)
    mantissa = round(-math.log2(info.eps))
    return {"sign": 1, "exponent": info.bits - 1 - mantissa, "mantissa": mantissa}


def bit_layout_figure(dtypes: list[torch.dtype]):
    colors = {"sign": "#d9534f", "exponent": "#5bc0de", "mantissa": "#5cb85c"}
    legend = {"sign": translatable("sign bits"), "exponent": translatable("exponent bits"),
              "mantissa": translatable("mantissa bits")}
    figure = Figure(figsize=(10, 0.75 * len(dtypes) + 1.0))
    axes = figure.subplots()
    for row, dtype in enumerate(dtypes):
        y = -1.3 * row
        start = 0
        for field, width in bit_layout(dtype).items():
            for bit in range(start, start + width):
                axes.add_patch(Rectangle((bit, y - 0.4), 0.9, 0.8, color=colors[field]))
            axes.text(start + width / 2 - 0.05, y + 0.45, str(width), ha="center", va="bottom", fontsize=8.5)
            start += width
        axes.text(-0.6, y, str(dtype).removeprefix("torch."), ha="right", va="center", fontsize=10)
        info = torch.finfo(dtype)
        # what the bits buy: the exponent sets the range, the mantissa the step after 1
        axes.text(33, y, f"up to {info.max:.3g}, step {info.eps:.2g}", ha="left", va="center",
                  fontsize=8.5, color="#555555")
    handles = [Rectangle((0, 0), 1, 1, color=color) for color in colors.values()]
    axes.legend(handles, [legend[field] for field in colors], loc="upper center", bbox_to_anchor=(0.5, 0.0),
                ncol=3, fontsize=9, frameon=False)
    axes.set_xlim(-9, 45)
    axes.set_ylim(-1.3 * (len(dtypes) - 1) - 0.6, 1.1)
    axes.axis("off")
    axes.set_title("Floating-point formats bit by bit: exponent bits buy range, mantissa bits precision",
                   fontsize=10)
    figure.tight_layout()
    return figure


STORAGE_COLORS = ["#d9edf7", "#dff0d8", "#fcf8e3", "#f2dede"]  # one colour per row of the original tensor


def storage_figure(values: list[float], shape: tuple[int, int], strides: tuple[int, int],
                   transposed_strides: tuple[int, int]):
    """The storage as a strip, the tensor as a grid over it, and its transpose over the same cells."""
    rows, cols = shape
    figure = Figure(figsize=(9, 3.4))
    strip, view, transposed = figure.subplots(1, 3, gridspec_kw={"width_ratios": [2.2, 1, 1]})
    color = [STORAGE_COLORS[(position // strides[0]) % len(STORAGE_COLORS)] for position in range(len(values))]
    for position, value in enumerate(values):
        # the strip wraps after 8 cells so that it stays legible
        x, y = position % 8, -(position // 8)
        strip.add_patch(Rectangle((x, y), 0.95, 0.95, facecolor=color[position], edgecolor="#555555"))
        strip.text(x + 0.47, y + 0.55, f"{value:g}", ha="center", va="center", fontsize=10)
        strip.text(x + 0.47, y + 0.15, f"@{position}", ha="center", va="center", fontsize=7, color="#777777")
    strip.set_xlim(-0.1, 8.1)
    strip.set_ylim(-(len(values) - 1) // 8 - 0.3, 1.3)
    strip.set_title(f"storage: {len(values)} cells (@ = offset)", fontsize=10)
    for axes, (row_stride, col_stride), (num_rows, num_cols), name in (
            (view, strides, (rows, cols), "x"), (transposed, transposed_strides, (cols, rows), "x.T")):
        for i in range(num_rows):
            for j in range(num_cols):
                position = i * row_stride + j * col_stride
                axes.add_patch(Rectangle((j, -i), 0.95, 0.95, facecolor=color[position], edgecolor="#555555"))
                axes.text(j + 0.47, -i + 0.47, f"{values[position]:g}", ha="center", va="center", fontsize=10)
        axes.set_xlim(-0.1, num_cols + 0.1)
        axes.set_ylim(-num_rows + 0.7, 1.2)
        axes.set_title(f"{name}: shape {num_rows}x{num_cols}, strides {(row_stride, col_stride)}", fontsize=10)
    for axes in (strip, view, transposed):
        axes.set_aspect("equal")
        axes.axis("off")
    figure.suptitle("One storage, two views: x and its transpose read the same cells", fontsize=11)
    figure.tight_layout()
    return figure


def devices_figure(tensors: dict[str, str], num_gpus: int):
    """CPU memory and GPU memory as two boxes joined by the bus, each tensor drawn where it lives."""
    figure = Figure(figsize=(8, 2.8))
    axes = figure.subplots()
    places = {"cpu": (0.0, translatable("CPU memory (RAM)"), "#d9edf7"),
              "cuda:0": (6.0, translatable("GPU memory (HBM)"), "#dff0d8")}
    for x, label, color in places.values():
        axes.add_patch(Rectangle((x, 0), 4, 3, facecolor=color, edgecolor="#31708f"))
        axes.text(x + 2, 2.65, label, ha="center", va="center", fontsize=10, fontweight="bold")
    axes.text(2, -0.35, "CPU cores compute here", ha="center", fontsize=8.5, color="#555555")
    axes.text(8, -0.35, "thousands of GPU cores compute here", ha="center", fontsize=8.5, color="#555555")
    axes.annotate("", xy=(6, 1.5), xytext=(4, 1.5), arrowprops={"arrowstyle": "<->", "color": "#31708f", "lw": 2})
    axes.text(5, 1.75, "PCIe bus", ha="center", fontsize=9)
    axes.text(5, 1.15, ".to(device)", ha="center", fontsize=8.5, family="monospace")
    counts = {device: 0 for device in places}
    for name, device in tensors.items():
        x = places[device][0]
        y = 2.0 - 0.55 * counts[device]
        counts[device] += 1
        axes.text(x + 2, y, name, ha="center", va="center", fontsize=8.5, family="monospace",
                  bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "#999999"})
    axes.set_xlim(-0.2, 10.2)
    axes.set_ylim(-0.6, 3.2)
    axes.axis("off")
    if num_gpus:
        title = translatable(f"Where a tensor lives ({num_gpus} GPU(s) on the machine that traced this)")
    else:
        title = translatable("Where a tensor lives (traced without a GPU: the cuda:0 side is where the copies would go)")
    axes.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def batched_matmul_figure(x_shape: tuple[int, ...], w_shape: tuple[int, int], y_shape: tuple[int, ...]):
    """A batch x sequence grid of (rows x features) matrices, each times the same w."""
    batch, sequence, rows, features = x_shape
    figure = Figure(figsize=(9, 3.2))
    axes = figure.subplots()
    scale = 0.06  # drawing units per element

    def stack(x0: float, height: float, width: float, label: str, color: str, depth: int) -> None:
        # a few offset copies suggest the batch x sequence stack behind the front matrix
        for k in reversed(range(depth)):
            axes.add_patch(Rectangle((x0 + 0.12 * k, 0.12 * k), width, height, facecolor=color, edgecolor="#555555"))
        axes.text(x0 + width / 2, -0.35, label, ha="center", va="top", fontsize=9)

    depth = 4
    stack(0, rows * scale, features * scale, translatable(f"x: {batch} x {sequence} matrices\nof {rows} x {features}"), "#d9edf7", depth)
    w_x = features * scale + 1.6
    axes.text((features * scale + w_x) / 2 + 0.15, rows * scale / 2, "@", fontsize=16, ha="center", va="center")
    stack(w_x, w_shape[0] * scale, w_shape[1] * scale, translatable(f"w: one {w_shape[0]} x {w_shape[1]}\nshared by all"), "#fcf8e3", 1)
    y_x = w_x + w_shape[1] * scale + 2.2
    axes.text((w_x + y_x) / 2, rows * scale / 2, "=", fontsize=16, ha="center", va="center")
    stack(y_x, y_shape[2] * scale, y_shape[3] * scale, translatable(f"y: {y_shape[0]} x {y_shape[1]} matrices\nof {y_shape[2]} x {y_shape[3]}"), "#dff0d8", depth)
    axes.set_xlim(-0.3, y_x + 2.2)
    axes.set_ylim(-1.3, max(rows, w_shape[0]) * scale + 0.8)
    axes.set_aspect("equal")
    axes.axis("off")
    axes.set_title(f"Batched matmul: {x_shape} @ {w_shape} -> {y_shape}", fontsize=10)
    figure.tight_layout()
    return figure


# The three matmuls one weight matrix w2 (D x K) takes part in, for a batch h1 (B x D):
# (pass, what it computes, [(operand, rows, columns)], the operand that is the weight or its gradient).
WEIGHT_MATMULS = [
    ("forward", translatable("forward: the layer's output"), [("h1", "B", "D"), ("w2", "D", "K"), ("h2", "B", "K")], 1),
    ("backward", translatable("backward: the gradient for the weight"),
     [("h1ᵀ", "D", "B"), ("h2.grad", "B", "K"), ("w2.grad", "D", "K")], 2),
    ("backward", translatable("backward: the gradient for the input"),
     [("h2.grad", "B", "K"), ("w2ᵀ", "K", "D"), ("h1.grad", "B", "D")], 1),
]
DRAWN_SIZE = {"B": 1.5, "D": 1.0, "K": 0.7}  # a batch larger than the widths, as in training


def three_matmuls_figure(per_point_and_parameter: dict[str, float]):
    """The three matmuls of one weight matrix drawn as boxes of their shapes, with what each costs."""
    colors = {"forward": "#5bc0de", "backward": "#f0ad4e"}
    backward_matmuls = sum(1 for kind, *_ in WEIGHT_MATMULS if kind == "backward")
    per_matmul = {"forward": per_point_and_parameter["forward"],
                  "backward": per_point_and_parameter["backward"] / backward_matmuls}
    figure = Figure(figsize=(8.5, 4.4))
    axes = figure.subplots()
    for row, (kind, purpose, operands, weight_index) in enumerate(WEIGHT_MATMULS):
        top, x = -2.2 * row, 0.0
        for index, (name, rows, columns) in enumerate(operands):
            height, width = DRAWN_SIZE[rows], DRAWN_SIZE[columns]
            # the weight (or its gradient) in the pass's colour, the batch's tensors in grey
            face = colors[kind] if index == weight_index else "#eeeeee"
            axes.add_patch(Rectangle((x, top - height), width, height, facecolor=face, edgecolor="#555555"))
            axes.text(x + width / 2, top + 0.12, name, ha="center", va="bottom", fontsize=9, family="monospace")
            axes.text(x + width / 2, top - height / 2, rows + "×" + columns, ha="center", va="center", fontsize=8)
            x += width + 0.25
            if index < 2:
                axes.text(x + 0.1, top - 0.5, "@" if index == 0 else "=", ha="center", va="center", fontsize=12)
                x += 0.45
        axes.text(6.0, top - 0.5, purpose, ha="left", va="center", fontsize=10, fontweight="bold", color="#333333")
        axes.text(6.0, top - 0.95, f"2BDK FLOPs: {per_matmul[kind]:g} per data point and parameter",
                  ha="left", va="center", fontsize=8.5, color="#555555")
    axes.set_xlim(-0.2, 11.5)
    axes.set_ylim(-2.2 * len(WEIGHT_MATMULS) + 0.4, 0.6)
    axes.set_aspect("equal")
    axes.axis("off")
    total = sum(per_point_and_parameter.values())
    axes.set_title(f"One weight matrix, three matmuls: {total:g} FLOPs per data point and parameter",
                   fontsize=10)
    figure.tight_layout()
    return figure


def memory_by_optimizer_figure(memory: dict[str, dict[str, int]]):
    """Bytes of one training step by optimizer, stacked by what they hold."""
    # the parts name the legend's entries too
    colors = {translatable("parameters"): "#5bc0de", translatable("gradients"): "#5cb85c",
              translatable("optimizer state"): "#f0ad4e", translatable("activations"): "#d9534f"}
    figure = Figure(figsize=(7, 3.1))
    axes = figure.subplots()
    names = list(memory)
    for row, name in enumerate(names):
        left = 0
        for part, color in colors.items():
            value = memory[name][part]
            axes.barh(row, value, left=left, color=color, edgecolor="white", label=part if row == 0 else None)
            left += value
        axes.text(left, row, f" {left} bytes", va="center", fontsize=9)
    axes.set_yticks(range(len(names)), names)
    axes.invert_yaxis()
    axes.set_xlim(0, max(sum(parts.values()) for parts in memory.values()) * 1.25)
    axes.set_xlabel(f"bytes in float32 ({memory[names[0]]['parameters'] // 4} parameters)")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=8, ncol=4, frameon=False)
    axes.set_title("Memory of one training step, by optimizer", fontsize=10)
    figure.tight_layout()
    return figure


def loss_curves_figure(curves: dict[str, list[float]], title: str):
    figure = Figure(figsize=(6, 3))
    axes = figure.subplots()
    for label, losses in curves.items():
        line, = axes.plot(range(1, len(losses) + 1), losses, label=label)
        diverged_at = first_non_finite_step(losses)
        if diverged_at is not None and diverged_at > 1:
            # the log scale drops inf and nan: mark where the curve stops, or it just ends silently
            last_finite = losses[diverged_at - 2]
            axes.plot([diverged_at - 1], [last_finite], marker="X", markersize=9, color=line.get_color())
            axes.annotate(f"overflow at step {diverged_at}", (diverged_at - 1, last_finite),
                          xytext=(8, -4), textcoords="offset points", fontsize=8.5, color=line.get_color())
    axes.set_yscale("log")
    axes.set_xlabel("step")
    axes.set_ylabel("training loss (MSE)")
    axes.set_title(title)
    axes.legend()
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    return figure


# ----------------------------------------------------------------------
# References


activation_recomputation = Reference(title="Reducing Activation Recomputation in Large Transformer Models",
                                     url="https://arxiv.org/abs/2205.05198",
                                     authors=("Vijay Korthikanti", "et al."), organization="NVIDIA", date="2022")
flash_attention = Reference(title="FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
                            url="https://arxiv.org/abs/2205.14135", authors=("Tri Dao", "et al."), date="2022")
zero = Reference(title="ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
                 url="https://arxiv.org/abs/1910.02054",
                 authors=("Samyam Rajbhandari", "Jeff Rasley", "Olatunji Ruwase", "Yuxiong He"), date="2019")
assignment1_handout = Reference(title="CS336 assignment 1 (basics): handout and code",
                                url="https://github.com/stanford-cs336/assignment1-basics",
                                organization="Stanford CS336", date="2025")
transformer_math = Reference(title="The Transformer Model in Equations", url="https://johnthickstun.com/docs/transformers.pdf",
                             authors=("John Thickstun",))
illustrated_transformer = Reference(title="The Illustrated Transformer",
                                    url="https://jalammar.github.io/illustrated-transformer/",
                                    authors=("Jay Alammar",), date="2018")
illustrated_gpt2 = Reference(title="The Illustrated GPT-2", url="https://jalammar.github.io/illustrated-gpt2/",
                             authors=("Jay Alammar",), date="2019")
pytorch_tensors_docs = Reference(title="torch.Tensor", url="https://pytorch.org/docs/stable/tensors.html",
                                 organization="PyTorch")
float32_wikipedia = Reference(title="Single-precision floating-point format",
                              url="https://en.wikipedia.org/wiki/Single-precision_floating-point_format",
                              organization="Wikipedia")
float16_wikipedia = Reference(title="Half-precision floating-point format",
                              url="https://en.wikipedia.org/wiki/Half-precision_floating-point_format",
                              organization="Wikipedia")
bfloat16_wikipedia = Reference(title="bfloat16 floating-point format",
                               url="https://en.wikipedia.org/wiki/Bfloat16_floating-point_format",
                               organization="Wikipedia")
nvidia_fp8_primer = Reference(title="Using FP8 with Transformer Engine",
                              url="https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html",
                              organization="NVIDIA")
fp8_formats_paper = Reference(title="FP8 Formats for Deep Learning", url="https://arxiv.org/abs/2209.05433",
                              authors=("Paulius Micikevicius", "et al."), date="2022")
stride_docs = Reference(title="torch.Tensor.stride", url="https://pytorch.org/docs/stable/generated/torch.Tensor.stride.html",
                        organization="PyTorch")
einstein_notation = Reference(title="Einstein notation", url="https://en.wikipedia.org/wiki/Einstein_notation",
                              organization="Wikipedia")
einops_tutorial = Reference(title="Einops tutorial, part 1: basics", url="https://einops.rocks/1-einops-basics/",
                            authors=("Alex Rogozhnikov",))
jaxtyping_docs = Reference(title="jaxtyping", url="https://docs.kidger.site/jaxtyping/", authors=("Patrick Kidger",))
gpt3_paper = Reference(title="Language Models are Few-Shot Learners", url="https://arxiv.org/abs/2005.14165",
                       authors=("Tom B. Brown", "et al."), organization="OpenAI", date="2020")
gpt4_flops_estimate = Reference(title="GPT-4 Architecture, Infrastructure, Training Dataset, Costs, Vision, MoE",
                                url="https://www.semianalysis.com/p/gpt-4-architecture-infrastructure",
                                organization="SemiAnalysis", date="2023-07-10")
executive_order = Reference(title="Executive Order 14110: Safe, Secure, and Trustworthy Development and Use of Artificial Intelligence",
                            url="https://www.federalregister.gov/documents/2023/11/01/2023-24283/safe-secure-and-trustworthy-development-and-use-of-artificial-intelligence",
                            organization="Federal Register", date="2023-11-01")
a100_datasheet = Reference(title="NVIDIA A100 Tensor Core GPU", url="https://www.nvidia.com/en-us/data-center/a100/",
                           organization="NVIDIA")
h100_datasheet = Reference(title="NVIDIA H100 Tensor Core GPU", url="https://www.nvidia.com/en-us/data-center/h100/",
                           organization="NVIDIA")
flops_calculus = Reference(title="The FLOPs Calculus of Language Model Training",
                           url="https://medium.com/@dzmitrybahdanau/the-flops-calculus-of-language-model-training-3b19c1f025e4",
                           authors=("Dzmitry Bahdanau",), date="2022")
xavier_paper = Reference(title="Understanding the difficulty of training deep feedforward neural networks",
                         url="https://proceedings.mlr.press/v9/glorot10a/glorot10a.pdf",
                         authors=("Xavier Glorot", "Yoshua Bengio"), date="2010")
pinned_memory_blog = Reference(title="How to Optimize Data Transfers in CUDA C/C++",
                               url="https://developer.nvidia.com/blog/how-optimize-data-transfers-cuda-cc/",
                               authors=("Mark Harris",), organization="NVIDIA", date="2012")
adagrad_paper = Reference(title="Adaptive Subgradient Methods for Online Learning and Stochastic Optimization",
                          url="https://jmlr.org/papers/v12/duchi11a.html",
                          authors=("John Duchi", "Elad Hazan", "Yoram Singer"), date="2011")
adam_paper = Reference(title="Adam: A Method for Stochastic Optimization", url="https://arxiv.org/abs/1412.6980",
                       authors=("Diederik P. Kingma", "Jimmy Ba"), date="2014")
adamw_paper = Reference(title="Decoupled Weight Decay Regularization", url="https://arxiv.org/abs/1711.05101",
                        authors=("Ilya Loshchilov", "Frank Hutter"), date="2017")
transformer_memory_blog = Reference(title="Transformer memory usage", url="https://erees.dev/transformer-memory/",
                                    authors=("Eric Rees",))
transformer_flops_blog = Reference(title="Transformer FLOPs", url="https://www.adamcasson.com/posts/transformer-flops",
                                   authors=("Adam Casson",), date="2023")
mixed_precision_paper = Reference(title="Mixed Precision Training", url="https://arxiv.org/abs/1710.03740",
                                  authors=("Paulius Micikevicius", "et al."), date="2017")
pytorch_amp = Reference(title="Automatic Mixed Precision package: torch.amp", url="https://pytorch.org/docs/stable/amp.html",
                        organization="PyTorch")
nvidia_mixed_precision = Reference(title="Train With Mixed Precision",
                                   url="https://docs.nvidia.com/deeplearning/performance/mixed-precision-training/index.html",
                                   organization="NVIDIA")
fp8_lm = Reference(title="FP8-LM: Training FP8 Large Language Models", url="https://arxiv.org/abs/2310.18313",
                   authors=("Houwen Peng", "et al."), date="2023")


if __name__ == "__main__":
    main()
