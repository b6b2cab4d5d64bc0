from pathlib import Path

import torch
from minicnn.data import synthetic_images
from minicnn.model import MiniCNN
from minicnn.train import load_config, main

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "tiny.yaml"


def test_synthetic_images_are_deterministic() -> None:
    first, labels = synthetic_images(3, 16, 3, 4, seed=7)
    second, _ = synthetic_images(3, 16, 3, 4, seed=7)
    assert first.shape == (3, 3, 16, 16)
    assert labels.dtype == torch.int64
    assert torch.equal(first, second)


def test_logits_shape() -> None:
    config = load_config(CONFIG)
    model = MiniCNN(3, config["model"]["channels"], config["model"]["num_classes"])
    assert model(torch.zeros(2, 3, 16, 16)).shape == (2, 4)


def test_one_step_from_the_tiny_config() -> None:
    assert torch.isfinite(torch.tensor(main(["--config", str(CONFIG), "--device", "cpu"])))
