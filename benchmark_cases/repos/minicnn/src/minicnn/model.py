"""Convolution blocks (conv, batch norm, ReLU, pooling) and a linear classifier."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class MiniCNN(nn.Module):
    def __init__(self, in_channels: int, channels: Sequence[int], num_classes: int) -> None:
        super().__init__()
        blocks: list[nn.Module] = []
        previous = in_channels
        for width in channels:
            blocks += [
                nn.Conv2d(previous, width, kernel_size=3, padding=1, bias=False),
                nn.GroupNorm(1, width),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
            ]
            previous = width
        self.features = nn.Sequential(*blocks)
        self.head = nn.Linear(previous, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        features = self.features(images).mean(dim=(2, 3))
        return self.head(features)
