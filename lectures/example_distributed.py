"""A distributed program traced rank by rank: collectives and a data-parallel step on CPU (gloo).

The tracer follows `torch.multiprocessing.spawn` into every worker process, so the trace holds
each rank's steps; in the viewer, `[` and `]` move to the same point of the program on the
previous or next rank.
"""

import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from cs336_lectures import text

WORLD_SIZE = 2


def main():
    text("# Collective communication, one rank at a time")
    text("A data-parallel program runs the same code in several processes, called **ranks**. "
         "They cooperate through *collective operations*: every rank calls the same operation, "
         "and each ends up with its part of the result. "
         f"Here {WORLD_SIZE} processes on one CPU talk through the `gloo` backend.")
    text("Step into `worker` below: each rank's run is in the trace. "
         "Press `]` and `[` to look at the same line on the next or previous rank.")
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")  # where the ranks find each other
    mp.spawn(worker, args=(WORLD_SIZE, rendezvous), nprocs=WORLD_SIZE, join=True)
    text("Every rank returned: the program is done. "
         "In a real job the same code runs on several GPUs (backend `nccl`) or machines.")


def worker(rank: int, world_size: int, rendezvous: str):
    # A file on a shared filesystem lets the ranks meet without choosing a network port.
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world_size)
    try:
        all_reduce(rank)
        all_gather(rank, world_size)
        reduce_scatter(rank, world_size)
        broadcast(rank)
        data_parallel_step(rank, world_size)
    finally:
        dist.destroy_process_group()


def all_reduce(rank: int):
    text("## all-reduce: every rank gets the sum")
    x = torch.tensor([1.0, 2.0, 3.0]) * (rank + 1)  # @inspect x
    dist.all_reduce(x, op=dist.ReduceOp.SUM)  # @inspect x
    text("Before the call rank $r$ held $(r+1) \\cdot [1, 2, 3]$; afterwards every rank holds the "
         "same sum. Cost: each rank sends and receives about twice the tensor's size (a ring does it "
         "as a reduce-scatter followed by an all-gather).")


def all_gather(rank: int, world_size: int):
    text("## all-gather: every rank gets every rank's piece")
    piece = torch.full((2,), float(rank))  # @inspect piece
    pieces = [torch.zeros(2) for _ in range(world_size)]
    dist.all_gather(pieces, piece)  # @inspect pieces
    text("Each rank contributes one piece and receives all of them, in rank order.")


def reduce_scatter(rank: int, world_size: int):
    text("## reduce-scatter: sum, then keep one slice each")
    slices = [torch.tensor([float(rank + index)]) for index in range(world_size)]  # @inspect slices
    mine = torch.zeros(1)
    dist.reduce_scatter(mine, slices, op=dist.ReduceOp.SUM)  # @inspect mine
    text("Rank $r$ keeps the sum over ranks of slice $r$; all-gathering those sums would rebuild "
         "the all-reduce.")


def broadcast(rank: int):
    text("## broadcast: rank 0's tensor everywhere")
    weights = torch.randn(3) if rank == 0 else torch.zeros(3)  # @inspect weights
    dist.broadcast(weights, src=0)  # @inspect weights


def data_parallel_step(rank: int, world_size: int):
    text("## A data-parallel step")
    text("Each rank owns a copy of the model and a different slice of the batch. "
         "After the backward pass the gradients are averaged with an all-reduce, so every copy "
         "takes the same optimizer step and the copies stay equal.")
    torch.manual_seed(0)  # the same initial weights on every rank
    model = torch.nn.Linear(4, 1, bias=False)
    batch = torch.randn(8 * world_size, 4)
    targets = batch.sum(dim=1, keepdim=True)
    local = batch[rank * 8:(rank + 1) * 8]  # @inspect local
    loss = ((model(local) - targets[rank * 8:(rank + 1) * 8]) ** 2).mean()  # @inspect loss
    loss.backward()
    grad = model.weight.grad  # @inspect grad
    dist.all_reduce(grad, op=dist.ReduceOp.SUM)  # @inspect grad
    grad /= world_size  # @inspect grad
    with torch.no_grad():
        model.weight -= 0.1 * grad
    weight = model.weight.detach()  # @inspect weight
    text("The losses differ from rank to rank (different data), the averaged gradient and the "
         "updated weights do not.")


if __name__ == "__main__":
    main()
