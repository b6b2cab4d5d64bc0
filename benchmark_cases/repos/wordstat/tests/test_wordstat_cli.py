import json
from pathlib import Path

from click.testing import CliRunner
from wordstat.cli import main


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_text_output_over_two_files(tmp_path: Path) -> None:
    first = _write(tmp_path, "a.txt", "apple banana apple\n")
    second = _write(tmp_path, "b.txt", "banana apple cherry\n")
    result = CliRunner().invoke(main, [first, second, "--top", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "lines: 2",
        "words: 6",
        "chars: 39",
        "     3  apple",
        "     2  banana",
    ]


def test_json_output(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.txt", "to be or not to be\n")
    result = CliRunner().invoke(main, [path, "--json", "--keep-stopwords", "-n", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"lines": 1, "words": 6, "chars": 19, "top": [["be", 2]]}


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [str(tmp_path / "absent.txt")])
    assert result.exit_code == 2
    assert "does not exist" in result.output
