"""Train MixLM for a few steps on a synthetic batch.

Single process:  python train.py --steps 1
Distributed:     torchrun --standalone --nproc_per_node=2 train.py --steps 1

Under torchrun the process-group backend is ENCONDA_DDP_BACKEND if set, else nccl when CUDA is
available and gloo otherwise.
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from mixlm.model import MixLM, MixLMConfig, synthetic_batch
from torch.nn.parallel import DistributedDataParallel


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Train MixLM on a synthetic batch.")
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--seq-len", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def launched_by_torchrun() -> bool:
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ


def ddp_backend() -> str:
    default = "nccl" if torch.cuda.is_available() else "gloo"
    return os.environ.get("ENCONDA_DDP_BACKEND") or default


def pick_device(name: str, local_rank: int) -> torch.device:
    if name == "auto":
        name = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def main(argv: list[str] | None = None) -> float:
    args = parse_args(argv)
    ddp = launched_by_torchrun()
    rank = local_rank = 0
    if ddp:
        dist.init_process_group(backend=ddp_backend())
        rank = dist.get_rank()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = pick_device(args.device, local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    torch.manual_seed(args.seed)

    config = MixLMConfig()
    model: torch.nn.Module = MixLM(config).to(device)
    if ddp:
        model = DistributedDataParallel(
            model, device_ids=[device] if device.type == "cuda" else None
        )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    loss_value = float("nan")
    for step in range(args.steps):
        seed = args.seed + step * 1000 + rank
        batch = synthetic_batch(args.batch_size, args.seq_len + 1, config.vocab_size, seed)
        batch = batch.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = model(batch[:, :-1], batch[:, 1:])
        loss.backward()
        optimizer.step()
        loss_value = loss.item()
        if rank == 0:
            print(f"step {step + 1}/{args.steps} loss {loss_value:.4f} device {device}")
    if ddp:
        dist.barrier()
        if rank == 0:
            print(f"ddp: {dist.get_world_size()} processes on {dist.get_backend()}")
        dist.destroy_process_group()
    return loss_value


if __name__ == "__main__":
    main()
