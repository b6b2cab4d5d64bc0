"""README command extraction: Markdown, reStructuredText, and every shared EnConda README."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest

from pytest_enconda.agents.readme_commands import build_script, extract_commands

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"


def md(text: str) -> list[str]:
    return extract_commands(textwrap.dedent(text), "README.md")


def rst(text: str) -> list[str]:
    return extract_commands(textwrap.dedent(text), "README.rst")


# ----------------------------------------------------------------------------- Markdown


def test_markdown_fenced_shell_block_in_order_without_comments_or_blanks() -> None:
    text = """
    # Project

    ```bash
    # create the environment
    python -m venv .venv

    source .venv/bin/activate
    pip install -e .   # editable
    ```

    Then:

    ```sh
    pytest -q
    ```
    """
    assert md(text) == [
        "python -m venv .venv",
        "source .venv/bin/activate",
        "pip install -e .   # editable",
        "pytest -q",
    ]


@pytest.mark.parametrize("language", ["shell", "bash", "", "bibtex"])
def test_a_citation_is_not_run_whatever_its_fence_says(language: str) -> None:
    """trafilatura's README cites itself in a ``shell`` block: the literal reader ran
    ``@inproceedings{...`` and its setup failed with 127 before any install."""
    readme = (
        "```bash\npip install trafilatura\n```\n\n"
        f"``` {language}\n@inproceedings{{barbaresi-2021-trafilatura,\n"
        "  title = {{Trafilatura}},\n  year = 2021,\n}\n```\n"
    )
    assert extract_commands(readme, "README.md") == ["pip install trafilatura"]


def test_markdown_backslash_continuations_are_joined() -> None:
    text = """
    ```shell
    pip install \\
        numpy \\
        scipy
    make test
    ```
    """
    assert md(text) == ["pip install numpy scipy", "make test"]


def test_markdown_prompt_lines_are_commands_and_the_rest_is_output() -> None:
    text = """
    ```console
    $ pip install foo
    Collecting foo
    Successfully installed foo-1.0
    (venv) $ python -m foo --version
    foo 1.0
    user@host:~/src$ make \\
    >   install
    ```
    """
    assert md(text) == ["pip install foo", "python -m foo --version", "make install"]


def test_markdown_help_output_pasted_under_a_command_is_not_run() -> None:
    # As in LettuceDetect's README: the serve command, then its --help output in the same block.
    text = """
    ```bash
    python scripts/start_api.py dev  # use "prod" for production
    usage: start_api.py [-h] [--model MODEL] {prod,dev}

    positional arguments:
      {prod,dev}            Choose "dev" for development or "prod" for production
                            environments. The serve script uses "fastapi dev"

    options:
      -h, --help            show this help message and exit
    pip install streamlit
    ```
    """
    assert md(text) == [
        'python scripts/start_api.py dev  # use "prod" for production',
        "pip install streamlit",
    ]


def test_markdown_percent_prompt() -> None:
    assert md("```\n% pip install foo\nok\n```\n") == ["pip install foo"]


def test_markdown_console_block_without_prompts_is_judged_by_content() -> None:
    output = """
    ```console
    Fundus-Article:
    - Title: "Something happened"
    - URL:    https://example.org/news
    ```
    """
    commands = """
    ```console
    pip install fundus
    ```
    """
    assert md(output) == []
    assert md(commands) == ["pip install fundus"]


@pytest.mark.parametrize("language", ["python", "pycon", "json", "yaml", "toml", "ini", "output"])
def test_markdown_non_shell_languages_are_skipped(language: str) -> None:
    text = f"""
    ```{language}
    import foo
    foo.run(config="x.yaml")
    ```
    """
    assert md(text) == []


def test_markdown_pip_in_a_python_block_is_taken_only_when_every_line_is_a_command() -> None:
    mislabelled = "```python\npip install neuralforecast\n```\n"
    mixed = "```python\npip install foo\nimport foo\n```\n"
    assert md(mislabelled) == ["pip install neuralforecast"]
    assert md(mixed) == []


def test_markdown_language_less_blocks_are_decided_by_content() -> None:
    text = """
    ```
    git clone https://github.com/o/r.git
    cd r
    pip install -r requirements.txt
    ```

    ```
    import r
    r.main()
    ```

    ```
    >>> import r
    >>> r.version
    '1.0'
    ```

    ```
    project/
    ├── src
    └── tests
    ```
    """
    assert md(text) == [
        "git clone https://github.com/o/r.git",
        "cd r",
        "pip install -r requirements.txt",
    ]


@pytest.mark.parametrize(
    "opening",
    ["~~~bash", "``` bash", "```Shell", "```BASH", '```bash title="setup"', "```{.bash}", "````sh"],
)
def test_markdown_fence_spellings(opening: str) -> None:
    closing = "````" if opening.startswith("````") else opening[:3]
    assert md(f"{opening}\nmake install\n{closing}\n") == ["make install"]


def test_markdown_fence_inside_a_list_and_a_blockquote() -> None:
    text = """
    1. Install:

       ```bash
       pip install foo
       ```

    > **Note**
    > ```bash
    > export FOO=1
    > ```
    """
    assert md(text) == ["pip install foo", "export FOO=1"]


def test_markdown_unclosed_fence_runs_to_the_end() -> None:
    assert md("```bash\npip install a\npip install b\n") == ["pip install a", "pip install b"]


def test_markdown_heredoc_is_one_command() -> None:
    text = "```bash\ncat > cfg.ini <<EOF\n# a comment inside\n[x]\nEOF\necho done\n```\n"
    assert md(text) == ["cat > cfg.ini <<EOF\n# a comment inside\n[x]\nEOF", "echo done"]


def test_markdown_indented_code_block() -> None:
    text = """
    To install the latest version, run:

        pip install hazm

    The text below is a quote, not code:

        Hazm is a library for the Persian language, and it is fast.
    """
    assert md(text) == ["pip install hazm"]


def test_markdown_inline_code_that_a_reader_would_type() -> None:
    text = """
    `pip install hydropandas`

    1. Install the required packages: `pip install -r requirements.txt`
    2. Create a virtual environment: `python -m venv venv`

    To get started, run `make setup` in the root.
    Use `pip` to install it, or read about the `pip install` command.
    The `README` mentions `conda`.
    """
    assert md(text) == [
        "pip install hydropandas",
        "pip install -r requirements.txt",
        "python -m venv venv",
        "make setup",
    ]


def test_markdown_inline_code_in_a_fence_info_line_is_not_a_fence() -> None:
    assert md("```pip install x``` is how\n\n```bash\nmake\n```\n") == ["make"]


# ----------------------------------------------------------------------------- reStructuredText


def test_rst_code_block_directives_with_options() -> None:
    text = """
    Install
    =======

    .. code-block:: bash
       :linenos:
       :caption: setup

       python -m venv env
       # activate it
       source env/bin/activate

    .. code:: sh

        pip install -e .

    .. sourcecode:: shell

        make docs
    """
    assert rst(text) == [
        "python -m venv env",
        "source env/bin/activate",
        "pip install -e .",
        "make docs",
    ]


def test_rst_console_prompts_and_python_skipped() -> None:
    text = """
    .. code-block:: console

        $ pip install foo
        Successfully installed foo

    .. code-block:: python

        import foo
        foo.main()

    .. code:: pycon

        >>> import foo
    """
    assert rst(text) == ["pip install foo"]


def test_rst_literal_blocks_after_double_colon() -> None:
    text = """
    Install with::

        pip install pyfoo
        pyfoo --init

    Example
    -------

    ::

       import firebirdsql
       conn = firebirdsql.connect(host='localhost')

    A paragraph that is not followed by a literal block.
    """
    assert rst(text) == ["pip install pyfoo", "pyfoo --init"]


def test_rst_literal_block_in_a_list_keeps_its_continuation() -> None:
    text = """
    - Build it::

          pip install \\
              pyfoo[all]

    - Done.
    """
    assert rst(text) == ["pip install pyfoo[all]"]


def test_rst_prompt_directive() -> None:
    text = """
    .. prompt:: bash $

       pip install sphinx
       sphinx-build docs out
    """
    assert rst(text) == ["pip install sphinx", "sphinx-build docs out"]


def test_rst_inline_literals_block_quotes_and_markdown_fences() -> None:
    text = """
    Run the setup command:

    ``python manage.py migrate``

    Install django-machina using the following command:

        pip install django-machina

    .. note::

        This project is great, and you will like it.

    ```bash
    python -m distutils build
    ```
    """
    assert rst(text) == [
        "python manage.py migrate",
        "pip install django-machina",
        "python -m distutils build",
    ]


def test_rst_image_directives_and_links_are_not_commands() -> None:
    text = """
    .. image:: https://img.shields.io/pypi/v/foo.svg
       :target: https://pypi.org/project/foo

    See `the docs <https://foo.readthedocs.io>`_ and the `changelog`_.
    """
    assert rst(text) == []


# ----------------------------------------------------------------------------- format detection


def test_unknown_suffix_tries_markdown_then_rst() -> None:
    assert extract_commands("```bash\nmake\n```\n", "README") == ["make"]
    assert extract_commands("Install::\n\n    pip install x\n", "README.txt") == ["pip install x"]


def test_crlf_and_tabs() -> None:
    assert md("```bash\r\npip install a\r\n\tpip install b\r\n```\r\n") == [
        "pip install a",
        "pip install b",
    ]


# ----------------------------------------------------------------------------- robustness


@pytest.mark.parametrize(
    "text",
    [
        "",
        "```",
        "``````",
        "~~~\n~~~\n~~~",
        ".. code-block::",
        "::",
        "::\n\n",
        "$ \n$\n% \n",
        "```bash\n\\",
        "```bash\ncat <<EOF\nno terminator",
        "\x00\x01\x02```\x00",
        "`" * 10_000,
        "a" * 200_000,
        "    " * 1000 + "pip install x",
        "```\n" + "pip install x \\\n" * 2000 + "```",
    ],
)
@pytest.mark.parametrize("name", ["README.md", "README.rst", "README", ""])
def test_malformed_input_never_raises(text: str, name: str) -> None:
    commands = extract_commands(text, name)
    assert isinstance(commands, list)
    assert all(isinstance(command, str) and command.strip() for command in commands)


def test_random_input_never_raises() -> None:
    rng = random.Random(20240501)
    alphabet = "`~:$%>#.\\ \n\t-abcdpipinstall|├─()=[]{}<>\"'"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        for name in ("README.md", "README.rst", "README"):
            assert isinstance(extract_commands(text, name), list)


def test_non_text_input_yields_no_crash() -> None:
    assert extract_commands(None, "README.md") == []  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- build_script


def test_build_script() -> None:
    script = build_script(["cd repo", "pip install -e .", "  "])
    assert script == "#!/bin/bash\ncd repo\npip install -e .\n"
    assert build_script([]) == "#!/bin/bash\n"


# ----------------------------------------------------------------------------- shared data


@pytest.mark.shared_data
def test_every_shared_readme_parses(record_property: pytest.RecordProperty) -> None:
    instances = SHARED / "instances"
    if not instances.is_dir():
        pytest.skip(f"EnConda-Bench reference data not found at {instances}")
    readmes = [
        path
        for path in sorted(instances.glob("*/*/*"))
        if path.stem.lower() == "readme" and path.suffix.lower() != ".json"
    ]
    totals = {"readmes": len(readmes), "commands": 0, "with_commands": 0}
    for path in readmes:
        commands = extract_commands(path.read_text(encoding="utf-8"), path.name)
        assert all(isinstance(command, str) and command.strip() for command in commands), path
        totals["commands"] += len(commands)
        totals["with_commands"] += bool(commands)
    for key, value in totals.items():
        record_property(key, value)
    print(
        f"\n{totals['readmes']} READMEs, {totals['commands']} commands, "
        f"{totals['readmes'] - totals['with_commands']} with none"
    )
    assert totals["readmes"] >= 2000
    # Measured: 1,769 of 2,074 READMEs (85%) yield commands. Of the rest, a sample read by hand
    # had none in a code block or an instruction (prose-only READMEs, Python examples, plain
    # numbered lists); 80% leaves room for heuristic changes but fails if a parser breaks.
    assert totals["with_commands"] >= 0.8 * totals["readmes"]


def test_a_projects_own_console_script_makes_an_inline_line_a_command() -> None:
    # cclib's README (dev split): the usage line is inline code whose first word is its script.
    readme = (
        "### Installation and Usage\n\n"
        "To install from source, clone the repository and run `pip install .` from the root.\n\n"
        "You can extract properties using the `ccget` script:\n"
        "`ccget scfenergies --file my_output.log`\n"
    )
    assert extract_commands(readme, "README.md") == ["pip install ."]
    assert extract_commands(readme, "README.md", known=["ccget", "ccwrite"]) == [
        "pip install .",
        "ccget scfenergies --file my_output.log",
    ]
    # A mention of the script alone is no command, known or not.
    assert extract_commands("Run `ccget` for help.\n", "README.md", known=["ccget"]) == []
