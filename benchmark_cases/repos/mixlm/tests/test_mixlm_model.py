import torch
from mixlm.model import MixLM, MixLMConfig, synthetic_batch


def test_logits_shape() -> None:
    config = MixLMConfig()
    model = MixLM(config)
    tokens = synthetic_batch(2, 8, config.vocab_size)
    assert model(tokens).shape == (2, 8, config.vocab_size)


def test_prediction_ignores_future_tokens() -> None:
    torch.manual_seed(0)
    model = MixLM(MixLMConfig()).eval()
    tokens = synthetic_batch(1, 8, 256, seed=1)
    changed = tokens.clone()
    changed[0, -1] = (changed[0, -1] + 1) % 256
    with torch.no_grad():
        assert torch.allclose(model(tokens)[0, :-1], model(changed)[0, :-1], atol=1e-5)


def test_one_training_step_gives_finite_loss() -> None:
    from train import main

    assert torch.isfinite(torch.tensor(main(["--steps", "1", "--device", "cpu"])))
