"""Train MiniCNN from a YAML config on synthetic images.

Single process:  python -m minicnn.train --config configs/tiny.yaml --steps 1
Distributed:     torchrun --standalone --nproc_per_node=2 -m minicnn.train --config ...

Under torchrun the process-group backend is ENCONDA_DDP_BACKEND if set, else nccl when CUDA is
available and gloo otherwise.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel

from .data import synthetic_images
from .model import MiniCNN


def load_config(path: str | Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def ddp_backend() -> str:
    default = "nccl" if torch.cuda.is_available() else "gloo"
    return os.environ.get("ENCONDA_DDP_BACKEND") or default


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description="Train MiniCNN on synthetic images.")
    parser.add_argument("--config", default="configs/tiny.yaml")
    parser.add_argument("--steps", type=int, default=None, help="overrides train.steps")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    model_cfg, data_cfg, train_cfg = config["model"], config["data"], config["train"]
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

    model: torch.nn.Module = MiniCNN(
        data_cfg["in_channels"], model_cfg["channels"], model_cfg["num_classes"]
    ).to(device)
    if ddp:
        model = DistributedDataParallel(
            model, device_ids=[device] if device.type == "cuda" else None
        )
    optimizer = torch.optim.SGD(model.parameters(), lr=float(train_cfg["lr"]), momentum=0.9)

    loss_value = float("nan")
    for step in range(steps):
        images, labels = synthetic_images(
            int(train_cfg["batch_size"]),
            int(data_cfg["image_size"]),
            int(data_cfg["in_channels"]),
            int(model_cfg["num_classes"]),
            seed=int(train_cfg["seed"]) + 1000 * step + rank,
        )
        images, labels = images.to(device), labels.to(device)
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
