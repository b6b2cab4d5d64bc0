import pytest
from labbug import days_in_month, is_leap


def test_leap_plain():
    assert is_leap(2024)


def test_not_leap_century():
    assert not is_leap(1900)


def test_leap_400():
    # Fails until issue #12 is fixed.
    assert is_leap(2000)


def test_days():
    assert days_in_month(2023, 2) == 28
    assert days_in_month(2023, 4) == 30


def test_bad_month():
    with pytest.raises(ValueError):
        days_in_month(2023, 13)
