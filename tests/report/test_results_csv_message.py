"""results.csv's message column (issue 48 item 8): the whole message on one line, bounded."""

from __future__ import annotations

from pytest_enconda.report.exports import MAX_CSV_MESSAGE, csv_message


def test_every_line_is_kept_on_one_line() -> None:
    message = (
        "c::execution: setup step exited with 1: bash setup.sh\n--- last output ---\nTerminated\n"
    )
    # Before: "Terminated" alone.
    assert csv_message(message) == (
        "c::execution: setup step exited with 1: bash setup.sh\\n--- last output ---\\nTerminated"
    )
    assert csv_message("") == "" and csv_message("one line") == "one line"
    assert csv_message("a\r\nb  \n") == "a\\nb"


def test_a_long_message_keeps_its_head_and_tail() -> None:
    message = "HEAD what failed\n" + "\n".join(f"line {i}" for i in range(5000)) + "\nLAST LINE"
    shown = csv_message(message)
    assert len(shown) <= MAX_CSV_MESSAGE and "\n" not in shown
    assert shown.startswith("HEAD what failed\\nline 0") and shown.endswith("line 4999\\nLAST LINE")
    assert " … " in shown
