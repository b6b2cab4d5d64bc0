"""The model: byte embeddings, mixer blocks (a causal token-mixing MLP across positions, then a
channel MLP), a tied output head. Axes are moved with einops, as in the MLP-Mixer paper's code."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from einops import rearrange
from torch import nn


@dataclass(frozen=True)
class MixLMConfig:
    vocab_size: int = 256
    max_len: int = 32
    dim: int = 32
    layers: int = 2


class MixerBlock(nn.Module):
    def __init__(self, config: MixLMConfig) -> None:
        super().__init__()
        self.token_norm = nn.LayerNorm(config.dim)
        # Position i mixes positions 0..i only: the weight is masked to its lower triangle.
        self.token_mix = nn.Linear(config.max_len, config.max_len)
        self.register_buffer("causal", torch.tril(torch.ones(config.max_len, config.max_len)))
        self.channel_norm = nn.LayerNorm(config.dim)
        self.channel_mix = nn.Sequential(
            nn.Linear(config.dim, 4 * config.dim), nn.GELU(), nn.Linear(4 * config.dim, config.dim)
        )

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        length = hidden.shape[1]
        weight = (self.token_mix.weight * self.causal)[:length, :length]
        mixed = rearrange(self.token_norm(hidden), "b t d -> b d t")
        mixed = nn.functional.linear(mixed, weight, self.token_mix.bias[:length])
        hidden = hidden + rearrange(mixed, "b d t -> b t d")
        return hidden + self.channel_mix(self.channel_norm(hidden))


class MixLM(nn.Module):
    def __init__(self, config: MixLMConfig) -> None:
        super().__init__()
        self.config = config
        self.tokens = nn.Embedding(config.vocab_size, config.dim)
        self.blocks = nn.Sequential(*(MixerBlock(config) for _ in range(config.layers)))
        self.norm = nn.LayerNorm(config.dim)
        nn.init.normal_(self.tokens.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (batch, length, vocab) for tokens (batch, length); the loss if given targets."""
        if tokens.shape[1] > self.config.max_len:
            raise ValueError(f"{tokens.shape[1]} tokens exceed max_len={self.config.max_len}")
        logits = self.norm(self.blocks(self.tokens(tokens))) @ self.tokens.weight.T
        if targets is None:
            return logits
        return nn.functional.cross_entropy(
            rearrange(logits, "b t v -> (b t) v"), rearrange(targets, "b t -> (b t)")
        )


def synthetic_batch(batch_size: int, length: int, vocab_size: int, seed: int = 0) -> torch.Tensor:
    """Random byte sequences: enough to check that a training step runs."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (batch_size, length), generator=generator)
