from __future__ import annotations

import attrs

_LENGTH = {"m": 1.0, "km": 1000.0, "cm": 0.01, "mm": 0.001, "in": 0.0254, "ft": 0.3048}
_MASS = {"kg": 1.0, "g": 0.001, "lb": 0.45359237}


@attrs.frozen
class Quantity:
    value: float
    unit: str


def _temperature(value: float, source: str, target: str) -> float:
    kelvin = {"K": value, "C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15}[source]
    return {"K": kelvin, "C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32}[target]


def convert(quantity: Quantity, target: str) -> Quantity:
    for table in (_LENGTH, _MASS):
        if quantity.unit in table and target in table:
            return Quantity(quantity.value * table[quantity.unit] / table[target], target)
    if {quantity.unit, target} <= {"K", "C", "F"}:
        return Quantity(_temperature(quantity.value, quantity.unit, target), target)
    raise ValueError(f"cannot convert {quantity.unit} to {target}")
