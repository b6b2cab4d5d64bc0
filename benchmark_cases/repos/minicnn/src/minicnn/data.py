"""Synthetic images: each class is a noisy stripe pattern of its own orientation and frequency."""

from __future__ import annotations

import numpy as np
import torch


def synthetic_images(
    batch_size: int, image_size: int, in_channels: int, num_classes: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, size=batch_size)
    grid = np.linspace(0.0, 2.0 * np.pi, image_size, dtype=np.float32)
    rows, cols = np.meshgrid(grid, grid, indexing="ij")
    images = np.empty((batch_size, in_channels, image_size, image_size), dtype=np.float32)
    for index, label in enumerate(labels):
        angle = np.pi * label / num_classes
        pattern = np.sin((1 + label) * (np.cos(angle) * rows + np.sin(angle) * cols))
        noise = rng.normal(0.0, 0.1, size=(in_channels, image_size, image_size))
        images[index] = pattern[None] + noise
    return torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))
