import pytest
from pyunits import Quantity, convert


def test_length():
    assert convert(Quantity(1.5, "km"), "m") == Quantity(1500.0, "m")


def test_inches():
    assert convert(Quantity(12, "in"), "ft").value == pytest.approx(1.0)


def test_mass():
    assert convert(Quantity(1, "lb"), "g").value == pytest.approx(453.59237)


def test_temperature():
    assert convert(Quantity(100, "C"), "F").value == pytest.approx(212.0)


def test_incompatible():
    with pytest.raises(ValueError):
        convert(Quantity(1, "kg"), "m")


def test_frozen():
    with pytest.raises(AttributeError):
        Quantity(1, "m").value = 2
