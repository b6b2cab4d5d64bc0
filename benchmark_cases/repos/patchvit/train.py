"""Train PatchViT from a YAML config on random images.

Single process:  python train.py --config configs/tiny.yaml --steps 1
Distributed:     torchrun --standalone --nproc_per_node=2 train.py --config configs/tiny.yaml

Under torchrun the process-group backend is ENCONDA_DDP_BACKEND if set, else nccl when CUDA is
available and gloo otherwise.
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
import yaml
from patchvit.model import build_model
from torch.nn.parallel import DistributedDataParallel


def ddp_backend() -> str:
    default = "nccl" if torch.cuda.is_available() else "gloo"
    return os.environ.get("ENCONDA_DDP_BACKEND") or default


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description="Train PatchViT on random images.")
    parser.add_argument("--config", default="configs/tiny.yaml")
    parser.add_argument("--steps", type=int, default=None, help="overrides train.steps")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    data_cfg, train_cfg = config["data"], config["train"]
    steps = args.steps if args.steps is not None else int(train_cfg["steps"])

    ddp = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    rank = local_rank = 0
    if ddp:
        dist.init_process_group(backend=ddp_backend())
        rank = dist.get_rank()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device_name = args.device
    if device_name == "auto":
        device_name = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    device = torch.device(device_name)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    torch.manual_seed(int(train_cfg["seed"]))

    model: torch.nn.Module = build_model(config["model"]).to(device)
    if ddp:
        model = DistributedDataParallel(
            model, device_ids=[device] if device.type == "cuda" else None
        )
    optimizer = torch.optim.AdamW(model.parameters(), lr=float(train_cfg["lr"]))
    num_classes = int(config["model"]["num_classes"])
    size, channels = int(data_cfg["image_size"]), int(data_cfg["in_channels"])

    loss_value = float("nan")
    for step in range(steps):
        generator = torch.Generator().manual_seed(int(train_cfg["seed"]) + 1000 * step + rank)
        batch = int(train_cfg["batch_size"])
        images = torch.randn(batch, channels, size, size, generator=generator).to(device)
        labels = torch.randint(0, num_classes, (batch,), generator=generator).to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        loss_value = loss.item()
        if rank == 0:
            print(f"step {step + 1}/{steps} loss {loss_value:.4f} device {device}")
    if ddp:
        dist.barrier()
        if rank == 0:
            print(f"ddp: {dist.get_world_size()} processes on {dist.get_backend()}")
        dist.destroy_process_group()
    return loss_value


if __name__ == "__main__":
    main()
