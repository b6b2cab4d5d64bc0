import torch
from tinylm.model import TinyLM, TinyLMConfig, synthetic_batch


def test_logits_shape() -> None:
    config = TinyLMConfig()
    model = TinyLM(config)
    tokens = synthetic_batch(2, 8, config.vocab_size)
    assert model(tokens).shape == (2, 8, config.vocab_size)


def test_prediction_ignores_future_tokens() -> None:
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig()).eval()
    tokens = synthetic_batch(1, 8, 256, seed=1)
    changed = tokens.clone()
    changed[0, -1] = (changed[0, -1] + 1) % 256
    with torch.no_grad():
        assert torch.allclose(model(tokens)[0, :-1], model(changed)[0, :-1], atol=1e-5)


def test_one_training_step_gives_finite_loss() -> None:
    from train import main

    assert torch.isfinite(torch.tensor(main(["--steps", "1", "--device", "cpu"])))
