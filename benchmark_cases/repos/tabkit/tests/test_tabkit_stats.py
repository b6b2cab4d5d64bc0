from tabkit import column_stats, infer_type


def test_infer_type_prefers_numbers_over_dates() -> None:
    assert infer_type(["12", "7", ""]) == "int"
    assert infer_type(["1.5", "2", ""]) == "float"
    assert infer_type(["2024-01-05", "Jan 9 2024", "14 Feb 2024"]) == "date"
    assert infer_type(["north", "2024-01-05"]) == "text"


def test_numeric_stats_ignore_missing_cells() -> None:
    stats = column_stats(["12", "", "3", "9"])
    assert stats == {"type": "int", "count": 3, "missing": 1, "min": 3.0, "max": 12.0, "mean": 8.0}


def test_date_stats_handle_mixed_spellings() -> None:
    stats = column_stats(["2024/02/02", "Jan 9 2024", "14 Feb 2024"])
    assert stats["type"] == "date"
    assert (stats["min"], stats["max"]) == ("2024-01-09", "2024-02-14")


def test_text_stats_count_distinct_values() -> None:
    assert column_stats(["north", "south", "north"])["distinct"] == 2
