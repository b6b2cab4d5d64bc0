import collections

import pytest
import torch
from patchvit.model import build_model
from patchvit.registry import instantiate, locate


def test_locate_finds_module_attributes() -> None:
    assert locate("collections.OrderedDict") is collections.OrderedDict
    assert locate("torch.nn.Flatten") is torch.nn.Flatten


def test_locate_reports_a_missing_module() -> None:
    with pytest.raises(ModuleNotFoundError):
        locate("no_such_package_here.Thing")


def test_instantiate_passes_arguments() -> None:
    layer = instantiate({"_target_": "torch.nn.Flatten", "start_dim": 2})
    assert layer(torch.zeros(1, 3, 4, 4)).shape == (1, 3, 16)


def test_model_with_a_flatten_patch_layer() -> None:
    # One patch per channel: (batch, 3, 4, 4) -> (batch, 3, 16).
    model = build_model(
        {
            "patchify": {"_target_": "torch.nn.Flatten", "start_dim": 2},
            "patch_dim": 16,
            "num_patches": 3,
            "dim": 8,
            "heads": 2,
            "layers": 1,
            "num_classes": 5,
        }
    )
    assert model(torch.zeros(2, 3, 4, 4)).shape == (2, 5)
