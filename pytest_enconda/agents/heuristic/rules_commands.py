"""Rules for how a command is used (E2: options, subcommands, choices the program rejects),
the paths it names (E4) and input it waits for (E8)."""

from __future__ import annotations

import re
import shlex

from .classify_context import Context, closest, replace_word
from .findings import Finding
from .steps import words_of

_OPTION = re.compile(
    r"No such option:? '?(?P<a>-[\w-]+)'?|no such option:? '?(?P<b>-[\w-]+)'?|"
    r"unrecognized arguments?: (?P<c>\S+)|unknown option:? '?(?P<d>-[\w-]+)'?|"
    r"[Uu]nrecognized option:? '?(?P<e>-[\w-]+)'?|unexpected argument '(?P<f>-[\w-]+)'|"
    r"option (?P<g>-[\w-]+) not recognized|invalid option -- '?(?P<h>\w)'?"
)
_CHOICE = re.compile(r"invalid choice: '(?P<bad>[^']+)' \(choose from (?P<choices>[^)]*)\)")
_NO_COMMAND = re.compile(r"No such command '?(?P<bad>[\w-]+)'?")
# A program naming the subcommand it did not know and the one it takes it for: pip's
# 'unknown command "install:" - maybe you meant "install"' (astropy/extension-helpers' README),
# git's "'stauts' is not a git command ... The most similar command is\n\tstatus".
_MEANT = re.compile(
    r'unknown command "(?P<pip>[^"]+)" - maybe you meant "(?P<pip_good>[^"]+)"'
    # git's hint follows within a line or two: an unbounded lazy gap rescanned the rest of the
    # text from every "is not a git command".
    r"|'(?P<git>[^']+)' is not a git command\..{0,500}?most similar commands? (?:is|are)\s+"
    r"(?P<git_good>[\w-]+)",
    re.DOTALL,
)
_SUGGEST = re.compile(r"Did you mean '?(?P<s>-{0,2}[\w-]+)'?\?|Possible options: (?P<p>[^)\n]+)")


def _flags(help_text: str) -> list[str]:
    found = re.findall(r"(?:^|[\s,\[|])(--[A-Za-z][\w-]*|-[A-Za-z])\b", help_text)
    return sorted(set(found) - {"-h", "--help"}, key=found.index)


def program_words(command: str) -> list[str]:
    """``tabkit head`` of ``tabkit head data/x.csv --lines 3``: the program and its subcommands
    (``python cli.py sub`` and ``python -m pkg sub`` keep the script or module)."""
    words = words_of(command)
    out: list[str] = []
    if words and re.fullmatch(r"python\d?(?:\.\d+)?", words[0]):
        if len(words) > 2 and words[1] == "-m":
            out, words = words[:3], words[3:]
        elif len(words) > 1 and words[1].endswith(".py"):
            out, words = words[:2], words[2:]
        else:
            return words[:1]
    for word in words:
        if word.startswith("-") or "/" in word or "." in word[1:] or "=" in word or word.isdigit():
            break
        out.append(word)
        if len(out) >= 3:
            break
    return out


# ---------------------------------------------------------------------- E2: usage


def bad_usage(step, command, output, ctx: Context):
    meant = _MEANT.search(output)
    if meant:
        bad = meant.group("pip") or meant.group("git")
        good = meant.group("pip_good") or meant.group("git_good")
        if bad in words_of(command) or bad in command.split():
            fixed = replace_word(command, bad, good)
            return Finding(
                "E2",
                f"`{command}`: `{bad}` is not a subcommand of `{program_words(command)[0]}`, "
                f"which takes it for `{good}` ('{' '.join(meant.group(0).split())[:160]}').",
                f"`{fixed}`",
                action="replace",
                commands=[fixed],
                key=f"usage:{step.index}",
                rule="unknown subcommand, the program's suggestion",
            )
    option = _OPTION.search(output)
    choice = _CHOICE.search(output)
    no_command = _NO_COMMAND.search(output)
    if not (option or choice or no_command):
        return None
    program = program_words(command)
    wrong = choice or no_command
    if wrong:
        bad = wrong.group("bad")
        if choice:
            options = re.findall(r"'([^']+)'", choice.group("choices"))
        else:
            _, help_text = ctx.probe(shlex.join(program[: program.index(bad)] if bad in program
                                                else program[:1]) + " --help")  # fmt: skip
            options = re.findall(r"^\s{2,}([\w-]+)\s", help_text, re.MULTILINE)
        best = closest(bad, options, 0.4)
        fixed = replace_word(command, bad, best) if best else command
        return Finding(
            "E2",
            f"`{command}`: `{bad}` is not a valid subcommand or choice ('{wrong.group(0)}').",
            f"`{fixed}`" if best else f"Use one of: {', '.join(options[:8])}.",
            action="replace" if best else "none",
            commands=[fixed] if best else [],
            key=f"usage:{step.index}",
            rule="invalid choice or subcommand",
        )
    assert option is not None
    bad = next(g for g in option.groups() if g).split("=")[0]
    if not bad.startswith("-"):
        bad = next((w for w in words_of(command) if w.startswith("-")), bad)
    suggestion = _SUGGEST.search(output)
    candidates: list[str] = []
    if suggestion:
        text = suggestion.group("s") or suggestion.group("p") or ""
        candidates = re.findall(r"-{1,2}[\w-]+", text)
    help_text = ""
    if not candidates:
        _, help_text = ctx.probe(shlex.join(program) + " --help")
        candidates = _flags(help_text)
    best = closest(bad, candidates, 0.4)
    fixed = replace_word(command, bad, best) if best else command
    shown = f"`{best}`"
    line = next((ln for ln in help_text.splitlines() if best and best in _flags(ln)), "")
    aliases = _flags(line)
    if len(aliases) > 1:
        # The help line names every spelling of the option: ``-n ROWS, --rows ROWS``.
        shown = "/".join(f"`{a}`" for a in aliases) + f" ('{line.strip()[:100]}')"
    return Finding(
        "E2",
        f"`{command}`: `{bad}` is not an option of `{' '.join(program)}` "
        f"('{option.group(0)}')." + (f" Its --help lists {shown}." if best else ""),
        f"`{fixed}`" if best else f"Remove `{bad}`; see `{' '.join(program)} --help`.",
        action="replace" if best else "none",
        commands=[fixed] if best else [],
        key=f"usage:{step.index}",
        rule="invalid option",
    )


# ---------------------------------------------------------------------- E4: paths


def _path_tokens(command: str) -> list[str]:
    out = []
    for word in words_of(command)[1:]:
        if word.startswith("-") or "=" in word or "://" in word:
            continue
        if "/" in word or re.search(r"\.\w{1,5}$", word):
            out.append(word)
    return out


def missing_path(step, command, output, ctx: Context):
    if not re.search(
        r"No such file or directory|does not exist|can't open file|cannot access|"
        r"FileNotFoundError|no such file|not found",
        output,
        re.IGNORECASE,
    ):
        return None
    facts = ctx.facts
    cwd = ctx.cwd
    words = words_of(command)
    candidates = _path_tokens(command)
    if words and words[0] == "cd" and len(words) > 1:
        candidates = [words[1]]
    missing = [w for w in candidates if not facts.exists(w, cwd) and "*" not in w]
    if not missing:
        return None
    bad = missing[0]
    if (
        step.kind == "usage"
        and bad.endswith(".py")
        and facts.closest_path(bad, cwd, kind="file") is None
    ):
        # ``python my_script.py`` shown as an example of the reader's own code.
        return None
    kind = "dir" if (words and words[0] == "cd") or bad.endswith("/") else "any"
    if bad.endswith(".py"):
        kind = "file"
    best = facts.closest_path(bad.rstrip("/"), cwd, kind=kind)
    shown = re.search(rf"[^\n]*{re.escape(bad)}[^\n]*", output)
    evidence = (shown.group(0).strip() if shown else "No such file or directory")[:160]
    if best is None:
        return Finding(
            "E4",
            f"`{command}` refers to `{bad}`, which is not in the repository ('{evidence}').",
            f"Point `{bad}` at an existing file or explain where it comes from.",
            action="drop",
            key=f"path:{bad}",
            rule="missing path",
        )
    fixed = replace_word(command, bad, best + ("/" if bad.endswith("/") else ""))
    fixed_all = fixed
    prefix = bad.rstrip("/").split("/")[0]
    best_prefix = best.split("/")[0]
    same_depth = best.count("/") == bad.rstrip("/").count("/")
    if "/" in bad and prefix != best_prefix and same_depth and best.endswith(bad.split("/", 1)[1]):
        # The same wrong folder in the other arguments: ``example/a example/b``.
        fixed_all = re.sub(rf"(?<![\w/.-]){re.escape(prefix)}/", f"{best_prefix}/", command)
    folder = best.rsplit("/", 1)[0] if "/" in best else ""
    return Finding(
        "E4",
        f"`{command}` refers to `{bad}`, which does not exist ('{evidence}'); the repository "
        f"has `{best}`" + (f" (in the folder `{folder}/`)." if folder else "."),
        f"`{fixed_all}`",
        action="replace",
        commands=[fixed_all],
        key=f"path:{bad}",
        rule="missing path",
    )


def interactive(step, command, output, ctx: Context):
    match = re.search(r"EOFError: EOF when reading a line|not a tty|Inappropriate ioctl", output)
    if not match:
        return None
    return Finding(
        "E8",
        f"`{command}` waits for interactive input (its input is closed here: "
        f"'{match.group(0)}'), which the README does not say.",
        "Say which answers the command expects, or give its non-interactive form.",
        key=f"interactive:{step.index}",
        rule="interactive command",
    )
