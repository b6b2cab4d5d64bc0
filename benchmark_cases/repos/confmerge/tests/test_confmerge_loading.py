import json
import subprocess
import sys
from pathlib import Path

import pytest
from confmerge import ConfigError, load, merge


def test_load_toml_and_json(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[db]\nname = "app"\nport = 5432\n')
    (tmp_path / "b.json").write_text('{"db": {"port": 6543}}')
    merged = merge(load(tmp_path / "a.toml"), load(tmp_path / "b.json"))
    assert merged == {"db": {"name": "app", "port": 6543}}


def test_load_yaml(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("features:\n  - search\n  - export\nretries: 3\n")
    assert load(path) == {"features": ["search", "export"], "retries": 3}


def test_top_level_list_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load(path)


def test_cli_merges_toml_and_yaml(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text('[server]\nhost = "0.0.0.0"\nport = 80\n')
    (tmp_path / "prod.yaml").write_text("server:\n  port: 443\n")
    result = subprocess.run(
        [sys.executable, "-m", "confmerge", "base.toml", "prod.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout) == {"server": {"host": "0.0.0.0", "port": 443}}
