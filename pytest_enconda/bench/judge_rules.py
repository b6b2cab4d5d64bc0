"""The judge set's rules: how a golden error is reworded (positives) and nudged into a near miss
(negatives), one function per rule, each deterministic for the ``random.Random`` it is given.

``judge_set.build_judge_set`` applies them to every distinct golden error; the module docstring
there lists what each rule writes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

# --- rewording rules -------------------------------------------------------------------------

_CODE = re.compile(r"```[\w+-]*\n?.*?```|`[^`\n]+`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'", re.S)

# Phrase-level rewrites a person makes when restating an error or a fix in their own words.
_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"\bincorrectly\b", ("wrongly", "mistakenly", "erroneously")),
    (r"\bincorrect\b", ("wrong", "invalid", "not correct")),
    (r"\bwrong\b", ("incorrect", "mistaken")),
    (r"\bis missing\b", ("is absent", "is not included", "is left out")),
    (r"\bmissing\b", ("absent", "omitted", "left-out")),
    (r"\bdoes not exist\b", ("is not present", "cannot be found", "is nonexistent")),
    (r"\bdoesn't exist\b", ("isn't there", "is not present")),
    (r"\bwill fail\b", ("fails", "will break", "won't work")),
    (r"\bcausing\b", ("leading to", "resulting in", "which causes")),
    (r"\bcause\b", ("lead to", "result in", "trigger")),
    (r"\brequired\b", ("needed", "necessary")),
    (r"\brequires\b", ("needs", "depends on")),
    (r"\binstructs (?:the )?users? to\b", ("tells the reader to", "asks users to")),
    (r"\bThe README\b", ("The documentation", "The readme file", "The instructions")),
    (r"\bthe README\b", ("the documentation", "the readme file", "the instructions")),
    (r"\busers\b", ("readers", "people")),
    (r"\bspecifies\b", ("states", "gives", "lists")),
    (r"\bspecify\b", ("state", "give", "list")),
    (r"\bcommand\b", ("command line", "invocation", "instruction")),
    (r"\binstallation\b", ("install", "setup")),
    (r"\bdirectory\b", ("folder",)),
    (r"\bfolder\b", ("directory",)),
    (r"\boutdated\b", ("old", "obsolete", "out of date")),
    (r"\bincompatible\b", ("not compatible", "not working together")),
    (r"\bunclear\b", ("confusing", "ambiguous", "vague")),
    (r"\bexplanation\b", ("description", "explanatory text")),
    (r"\bsection\b", ("part", "heading")),
    (r"\bcontains\b", ("has", "includes")),
    (r"\bshould be\b", ("needs to be", "must be", "ought to be")),
    (r"\binstead of\b", ("rather than", "in place of")),
    (r"\bRemove\b", ("Delete", "Drop", "Get rid of")),
    (r"\bremove\b", ("delete", "drop")),
    (r"\bAdd\b", ("Insert", "Include", "Put in")),
    (r"\bChange\b", ("Update", "Modify", "Correct")),
    (r"\bReplace\b", ("Substitute", "Swap out")),
    (r"\bUse\b", ("Switch to", "Go with")),
    (r"\bprovide\b", ("give", "supply")),
    (r"\bProvide\b", ("Give", "Supply")),
    (r"\bensure\b", ("make certain", "guarantee")),
    (r"\bproper\b", ("correct", "right")),
    (r"\bcorrect\b", ("right", "proper")),
    (r"\bmakes?\b", ("renders",)),
    (r"\bfile\b", ("document",)),
    (r"\bpackage\b", ("library", "distribution")),
    (r"\bdependencies\b", ("requirements", "deps")),
    (r"\binstructs\b", ("tells", "directs")),
    (r"\bstates\b", ("says", "claims")),
    (r"\bsteps\b", ("instructions", "stages")),
    (r"\border\b", ("sequence",)),
    (r"\bthe user\b", ("the reader", "you")),
    (r"\bprevent\b", ("stop", "block")),
    (r"\bexternal\b", ("third-party",)),
    (r"\blatest\b", ("newest", "most recent")),
    (r"\bdeprecated\b", ("obsolete", "no longer maintained")),
    (r"\bprerequisite\b", ("precondition", "requirement")),
    (r"\butility\b", ("tool",)),
    (r"\bexample\b", ("sample", "snippet")),
    (r"\bfails?\b", ("breaks", "errors out")),
    (r"\berror\b", ("failure", "problem", "mistake")),
    (r"\brun\b", ("execute", "invoke")),
    (r"\bcreate\b", ("make", "set up")),
    (r"\bdocumentation\b", ("docs",)),
    (r"\blink\b", ("URL", "reference")),
    (r"\bpoints to\b", ("refers to", "leads to")),
    (r"\blocated\b", ("found", "stored")),
    (r"\brepository\b", ("repo", "project")),
    (r"\bbecause\b", ("since", "as")),
    (r"\buses\b", ("relies on", "employs")),
    (r"\bno longer supported\b", ("unsupported", "end-of-life")),
    (r"\bmentions\b", ("refers to", "names")),
    (r"\b(?:explicitly|simply|actually|potentially|likely|entirely) ", ("",)),
    (r"\bwhich is\b", ("and that is", "and this is")),
    (r"\bis missing the\b", ("lacks the", "leaves out the")),
)
# A person restating a long sentence often leaves out its trailing consequence.
_TRAILING_CLAUSE = re.compile(r",\s+(?:which|causing|leading|so that|making)\b[^.]*(?=\.|$)")
_OPENERS = (
    "",
    "In short: ",
    "Problem: ",
    "As far as I can tell, ",
    "Basically, ",
    "The issue is this: ",
)
_FIX_OPENERS = ("", "Fix: ", "Suggested fix: ", "To fix it, ", "My suggestion: ")


def _protect(text: str) -> tuple[str, list[str]]:
    """Replace code spans and quotations by placeholders so rewording leaves them intact."""
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    return _CODE.sub(keep, text), spans


def _restore(text: str, spans: Sequence[str], rng: random.Random) -> str:
    def back(match: re.Match[str]) -> str:
        span = spans[int(match.group(1))]
        # People quote code however they like: backticks, quotes or nothing.
        if span.startswith("`") and not span.startswith("```") and rng.random() < 0.4:
            inner = span.strip("`")
            return rng.choice((f"'{inner}'", f'"{inner}"', inner))
        return span

    return re.sub(r"\x00(\d+)\x00", back, text)


def reword(text: str, rng: random.Random, *, fix: bool = False, strength: float = 0.7) -> str:
    """A rewording with the same meaning: synonyms, an opener, sentences in another order."""
    body, spans = _protect(text.strip())
    if not fix and len(body.split()) > 14 and rng.random() < 0.4:
        body = _TRAILING_CLAUSE.sub("", body, count=1)
    for pattern, choices in _PHRASES:
        if rng.random() < strength:
            body = re.sub(pattern, lambda _m, c=choices: rng.choice(c), body)
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\x00])", body)
    if len(sentences) >= 2 and rng.random() < 0.5:
        sentences = sentences[1:] + sentences[:1]
    body = " ".join(sentences)
    opener = rng.choice(_FIX_OPENERS if fix else _OPENERS)
    if opener and body[:1].isupper() and not body.startswith(("I ", "\x00")):
        body = body[0].lower() + body[1:]
    # A sentence that opens with a code span ("`x` is wrong") keeps its case.
    return _restore(opener + body, spans, rng)


# --- commands --------------------------------------------------------------------------------

_HEADS = """
pip pip3 python python3 conda mamba git cd apt apt-get sudo npm yarn make cmake docker export
source bash sh curl wget poetry uv pipx brew mkdir cp mv tar pytest tox ./configure jupyter cargo
go node
"""
_COMMAND_HEADS = frozenset(_HEADS.split())
_LONG_FLAGS = {
    "pip": {"-e": "--editable", "-r": "--requirement", "-U": "--upgrade", "-q": "--quiet"},
    "conda": {"-c": "--channel", "-n": "--name", "-y": "--yes", "-f": "--file"},
    "mamba": {"-c": "--channel", "-n": "--name", "-y": "--yes", "-f": "--file"},
    "apt-get": {"-y": "--yes"},
    "apt": {"-y": "--yes"},
}
_WRONG_FLAGS = {
    "pip": (
        "--user",
        "-U",
        "--no-deps",
        "--pre",
        "-e",
        "--force-reinstall",
        "--no-build-isolation",
    ),
    "conda": ("--override-channels", "-y", "--no-deps", "--freeze-installed", "--offline"),
    "git": ("--depth 1", "--bare", "--mirror", "--single-branch", "--recursive"),
    "python": ("-O", "-B", "-u", "-I"),
    "npm": ("-g", "--save-dev", "--legacy-peer-deps"),
    "apt-get": ("--no-install-recommends", "-q", "--reinstall"),
    "docker": ("--rm", "-d", "--privileged"),
}


def _program(command: str) -> str:
    words = command.split()
    while words and words[0] in ("sudo", "$"):
        words = words[1:]
    if len(words) >= 3 and words[0].startswith("python") and words[1] == "-m":
        return words[2]
    head = words[0] if words else ""
    return {"pip3": "pip", "python3": "python", "apt": "apt-get"}.get(head, head)


def is_command(line: str) -> bool:
    words = line.strip().lstrip("$ ").split()
    return bool(words) and (words[0] in _COMMAND_HEADS or words[0].startswith("./"))


def command_steps(text: str) -> list[str] | None:
    """The golden fix as an ordered list of commands, when it is nothing but commands."""
    lines = [line.split(" #")[0].strip().lstrip("$ ").strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    steps = [part.strip() for line in lines for part in line.split("&&") if part.strip()]
    if steps and all(is_command(step) for step in steps) and "`" not in text:
        return steps
    return None


def _flags(command: str) -> list[str]:
    return [w for w in command.split() if re.fullmatch(r"--?[A-Za-z][\w-]*", w)]


def long_flag_variant(command: str) -> str | None:
    table = _LONG_FLAGS.get(_program(command), {})
    words = command.split()
    for i, word in enumerate(words):
        if word in table:
            words[i] = table[word]
            return " ".join(words)
    return None


def wrong_flag_variant(command: str, rng: random.Random) -> str | None:
    """The same command with one flag swapped for another plausible one (E2's near miss)."""
    words = command.split()
    flags = [i for i, w in enumerate(words) if re.fullmatch(r"--?[A-Za-z][\w-]*", w)]
    program = _program(command)
    # A long spelling of a flag already there is the same flag, not a wrong one.
    same = {f for w in words for f in (w, _LONG_FLAGS.get(program, {}).get(w, w))}
    same |= {short for short, long in _LONG_FLAGS.get(program, {}).items() if long in words}
    pool = [f for f in _WRONG_FLAGS.get(program, ()) if f not in same]
    if flags:
        i = rng.choice(flags)
        flag = words[i]
        if len(flag) == 2 and flag[1].isalpha() and rng.random() < 0.5:
            words[i] = flag[0] + flag[1].swapcase()  # -P (password) vs -p (port)
        elif pool:
            words[i] = rng.choice(pool)
        else:
            return None
        return " ".join(words)
    if pool and len(words) >= 2:
        at = 1
        while at < len(words) and words[at - 1] in ("sudo", "-m", "python", "python3", "$"):
            at += 1
        if at < len(words) and words[at] in _SUBCOMMANDS:
            at += 1
        return " ".join([*words[:at], rng.choice(pool), *words[at:]])
    return None


_SUBCOMMANDS = frozenset({"install", "uninstall", "clone", "run", "create", "env", "build"})


# In "Change X to Y" and "Y instead of X" only Y is proposed: a near miss must change Y, since a
# changed X leaves the fix as right as it was.
_OLD_FIRST = re.compile(
    r"^\W*(?:change|replace|update|rename|correct|modify|switch)\b.{0,300}?\s(?:to|with|by)\s",
    re.I | re.S,
)
_OLD_AFTER = re.compile(r"\b(?:instead of|rather than|in place of)\b", re.I)


def proposal_region(text: str) -> tuple[int, int]:
    start, end = 0, len(text)
    match = _OLD_FIRST.search(text)
    if match:
        start = match.end()
    match = _OLD_AFTER.search(text, start)
    if match:
        end = match.start()
    return start, end


def _in_region(text: str, matches: Iterable[re.Match[str]]) -> list[re.Match[str]]:
    start, end = proposal_region(text)
    return [m for m in matches if m.start() >= start and m.end() <= end]


# --- versions and paths ----------------------------------------------------------------------

_SPEC = re.compile(
    r"(?P<op>>=|<=|==|~=|>|<)\s*(?P<v>\d+(?:\.\d+)+)(?:\s*,\s*(?P<op2><=|<)\s*(?P<v2>\d+(?:\.\d+)+))?"
)
_PLUS = re.compile(r"(?<![\w.])(?P<v>\d+\.\d+(?:\.\d+)?)\+(?!\w)")


def _before(version: str) -> str | None:
    """The last minor release below ``version`` ("3.12" -> "3.11"), when that is unambiguous."""
    parts = version.split(".")
    if len(parts) == 2 and int(parts[1]) > 0:
        return f"{parts[0]}.{int(parts[1]) - 1}"
    return None


def version_in_words(text: str, rng: random.Random) -> str | None:
    """The first version constraint written in words; None when there is none."""
    match = _SPEC.search(text)
    if match:
        op, v, op2, v2 = match["op"], match["v"], match["op2"], match["v2"]
        if op == ">=" and op2 == "<" and _before(v2):
            phrase = rng.choice(
                (f"{v} to {_before(v2)}", f"{v} through {_before(v2)}", f"from {v} up to {v2}")
            )
            if phrase.startswith("from"):
                phrase = f"at least {v} and below {v2}"
        elif op == ">=" and not op2:
            phrase = rng.choice((f"{v} or later", f"at least {v}", f"{v} or newer"))
        elif op == "<" and not op2:
            phrase = rng.choice((f"below {v}", f"older than {v}", f"anything before {v}"))
        elif op == "==" and not op2:
            phrase = rng.choice((f"exactly {v}", f"version {v} exactly", f"pinned to {v}"))
        else:
            return None
        start, end = match.span()
        # "pkg>=1.2" becomes "pkg at least 1.2": keep a space between name and phrase.
        sep = " " if start and text[start - 1].isalnum() else ""
        out = text[:start] + sep + phrase + text[end:]
        return out.replace("`", "") if "`" in text[start - 30 : start] else out
    match = _PLUS.search(text)
    if match:
        v = match["v"]
        phrase = rng.choice((f"{v} or later", f"{v} or newer", f"at least {v}"))
        return text[: match.start()] + phrase + text[match.end() :]
    return None


_VERSION_NUMBER = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?:\.(\d+))?(?![\w.]*[a-zA-Z])")


def wrong_version(text: str, rng: random.Random) -> str | None:
    matches = [
        m
        for m in _VERSION_NUMBER.finditer(text)
        if not re.search(r"[./]\d*$", m.string[: m.start()])
    ]
    if not matches:
        return None
    m = rng.choice(matches)
    minor = int(m.group(2))
    new_minor = minor - 1 if minor > 0 and rng.random() < 0.5 else minor + rng.choice((1, 2))
    new = f"{m.group(1)}.{new_minor}" + (f".{m.group(3)}" if m.group(3) else "")
    return text[: m.start()] + new + text[m.end() :]


_PATH = re.compile(
    r"(?<![\w./:~$<@-])(?P<p>(?:[\w.-]+/)+[\w.-]*|[\w-]+\.(?:txt|py|md|rst|cfg|toml|yml|yaml|json|sh|ini|in))(?![\w/:-])"
)


def _paths(text: str) -> list[re.Match[str]]:
    code = [(m.start(), m.end()) for m in _CODE.finditer(text)]
    whole_command = command_steps(text) is not None
    out = []
    for m in _in_region(text, _PATH.finditer(text)):
        p = m["p"]
        in_code = whole_command or any(a <= m.start() < b for a, b in code)
        # "Debian/Ubuntu" or "caching/task" in prose is not a path; "setup.cfg" is.
        if not in_code and not re.search(r"\.[a-z]{2,4}$", p):
            continue
        if "://" in text[max(0, m.start() - 10) : m.start() + 3] or p.startswith("."):
            continue
        if re.fullmatch(r"[\d.]+/?", p) or ("/" not in p and not re.search(r"\.\w+$", p)):
            continue
        out.append(m)
    return out


def path_variant(text: str, rng: random.Random) -> str | None:
    """The same path written with ``./`` (or without its trailing ``/``)."""
    matches = _paths(text)
    if not matches:
        return None
    m = rng.choice(matches)
    p = m["p"]
    new = p.rstrip("/") if p.endswith("/") and rng.random() < 0.5 else "./" + p
    return text[: m.start()] + new + text[m.end() :]


def wrong_path(text: str, rng: random.Random) -> str | None:
    """A path in another folder: the classic E4 mistake."""
    matches = _paths(text)
    if not matches:
        return None
    m = rng.choice(matches)
    p = m["p"]
    parts = p.rstrip("/").split("/")
    if len(parts) > 1 and rng.random() < 0.5:
        new = parts[-1]
    else:
        new = rng.choice(("docs/", "src/", "scripts/", "config/")) + p
    return text[: m.start()] + new + text[m.end() :]


# --- order -----------------------------------------------------------------------------------

_ORDER_WORD = re.compile(r"\b(before|after)\b")
_ORDER_OPERAND = re.compile(r"`[^`\n]+`|'[^'\n]{2,80}'|\"[^\"\n]{2,80}\"")


def flip_order_word(text: str) -> str | None:
    """ "Move X before Y" -> "Move X after Y": the opposite order, nearly the same words."""
    match = _ORDER_WORD.search(text)
    if not match:
        return None
    new = "after" if match.group(1) == "before" else "before"
    return text[: match.start()] + new + text[match.end() :]


def order_stated_the_other_way(text: str, rng: random.Random) -> str | None:
    """ "Move X to be before Y" -> "Y should come after X" (same order, other words)."""
    match = _ORDER_WORD.search(text)
    if not match:
        return None
    left = _ORDER_OPERAND.findall(text[: match.start()])
    right = _ORDER_OPERAND.findall(text[match.end() :])
    if not left or not right:
        return None
    x, y = left[-1], right[0]
    other = "after" if match.group(1) == "before" else "before"
    return rng.choice(
        (
            f"{y} should come {other} {x}.",
            f"Make sure {y} is done {other} {x}.",
            f"The order must be changed so that {y} runs {other} {x}.",
        )
    )


def steps_as_prose(steps: Sequence[str], rng: random.Random) -> str:
    quoted = [f"`{s}`" for s in steps]
    style = rng.randrange(3)
    if style == 0:
        middle = "".join(f", then {q}" for q in quoted[1:-1])
        return f"First run {quoted[0]}{middle}, and finally {quoted[-1]}."
    if style == 1:
        return "Run these in order:\n" + "\n".join(f"{i}. {q}" for i, q in enumerate(quoted, 1))
    return " && ".join(steps)


def steps_as_move(steps: Sequence[str], candidates: Sequence[str], rng: random.Random) -> str:
    """One move that states the golden order of a pair, preferring a pair a candidate inverts."""
    pairs = [(i, i + 1) for i in range(len(steps) - 1)]
    for candidate in candidates:
        other = command_steps(candidate)
        if other and sorted(other) == sorted(steps) and other != list(steps):
            inverted = [(i, j) for i, j in pairs if other.index(steps[i]) > other.index(steps[j])]
            if inverted:
                pairs = inverted
                break
    i, j = rng.choice(pairs)
    a, b = steps[i], steps[j]
    return rng.choice(
        (
            f"Move `{b}` after `{a}`.",
            f"Run `{a}` before `{b}`.",
            f"`{b}` has to come after `{a}`.",
        )
    )


def wrong_order(steps: Sequence[str], rng: random.Random) -> list[str] | None:
    if len(set(steps)) < 2:
        return None
    for _ in range(10):
        i = rng.randrange(len(steps) - 1)
        out = list(steps)
        out[i], out[i + 1] = out[i + 1], out[i]
        if out != list(steps):
            return out
    return None
