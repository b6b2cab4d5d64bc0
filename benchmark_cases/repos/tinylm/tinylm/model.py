"""The model: token and position embeddings, causal transformer blocks, a tied output head."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class TinyLMConfig:
    vocab_size: int = 256
    max_len: int = 64
    dim: int = 32
    heads: int = 2
    layers: int = 2
    dropout: float = 0.0


class TinyLM(nn.Module):
    def __init__(self, config: TinyLMConfig) -> None:
        super().__init__()
        self.config = config
        self.tokens = nn.Embedding(config.vocab_size, config.dim)
        self.positions = nn.Embedding(config.max_len, config.dim)
        layer = nn.TransformerEncoderLayer(
            d_model=config.dim,
            nhead=config.heads,
            dim_feedforward=4 * config.dim,
            dropout=config.dropout,
            batch_first=True,
            norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(
            layer, num_layers=config.layers, enable_nested_tensor=False
        )
        self.norm = nn.LayerNorm(config.dim)
        nn.init.normal_(self.tokens.weight, std=0.02)
        nn.init.normal_(self.positions.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (batch, length, vocab) for tokens (batch, length); the loss if given targets."""
        length = tokens.shape[1]
        if length > self.config.max_len:
            raise ValueError(f"sequence of {length} tokens exceeds max_len={self.config.max_len}")
        positions = torch.arange(length, device=tokens.device)
        hidden = self.tokens(tokens) + self.positions(positions)
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=tokens.device)
        hidden = self.blocks(hidden, mask=mask, is_causal=True)
        logits = self.norm(hidden) @ self.tokens.weight.T
        if targets is None:
            return logits
        return nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        )


def synthetic_batch(batch_size: int, length: int, vocab_size: int, seed: int = 0) -> torch.Tensor:
    """Random byte sequences: enough to check that a training step runs."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (batch_size, length), generator=generator)
