"""Patch embedding, learned positions, a transformer encoder and a mean-pooled classifier."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .registry import instantiate


class PatchViT(nn.Module):
    def __init__(
        self,
        patchify: nn.Module,
        patch_dim: int,
        num_patches: int,
        dim: int,
        heads: int,
        layers: int,
        num_classes: int,
    ) -> None:
        super().__init__()
        self.patchify = patchify
        self.embed = nn.Linear(patch_dim, dim)
        self.positions = nn.Parameter(torch.zeros(1, num_patches, dim))
        layer = nn.TransformerEncoderLayer(
            d_model=dim, nhead=heads, dim_feedforward=2 * dim, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        tokens = self.embed(self.patchify(images)) + self.positions
        return self.head(self.encoder(tokens).mean(dim=1))


def build_model(model_cfg: dict[str, Any]) -> PatchViT:
    settings = dict(model_cfg)
    patchify = instantiate(settings.pop("patchify"))
    return PatchViT(patchify=patchify, **settings)
