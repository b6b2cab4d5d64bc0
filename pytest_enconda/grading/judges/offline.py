"""The offline judge: deterministic, no network, and every verdict says why.

What makes two fixes (or two error descriptions) the same in this domain is rarely the prose: it is
the command, flag, package name, version, file path or the action (remove, add, move) they name.
Those appear in backticks and quotes, or as tokens with digits and punctuation (``-L``,
``litgpt[all]``, ``docs/conf.py``, ``3.8``); plain package names are recognised by position (after
``install``) or because the whole fix is a command line. The judge therefore

* normalises both texts (quotes, code fences, Markdown links, whitespace, case),
* weighs tokens: key tokens (code-like) 3, action verbs 2, other words 1, stop words 0,
* for a fix, compares the golden fix with what the prediction *proposes* (in "replace X with Y"
  the X is dropped, so quoting the wrong command does not count for it), accepts it when it covers
  the golden key tokens and most of its words, and rejects it on a version conflict or a token
  substitution (``lhotse`` vs ``lhotse-speech``), naming the tokens in the reason;
* for a description, measures the share of golden key tokens the prediction mentions (*where*)
  and the weighted word overlap (*what*); naming the same command counts only up to
  ``KEY_BONUS_LIMIT`` above the word overlap, because other errors of the same README name the
  same package (score = max(overlap, min(key coverage, overlap + 0.25)) >= 0.5).

How the numbers were chosen: the fix thresholds and the token weights come from the rules above;
the description rule was settled after looking at score distributions on the ``dev`` half of the
labelled set built from the golden files (repositories split by a hash of their name).
``python -m pytest_enconda.bench grading`` prints accuracy, precision and recall on both halves.
``holdout`` is the less optimistic figure, not an untouched one: tokenisation bugs (shell prompts,
the "." of ``pip install -e .``) were fixed from mistakes sampled across both.

Rules added for issue 7 (measured by ``python -m pytest_enconda.bench judge``, a rule-generated
set of rewordings and near misses): version constraints in words ("3.9 to 3.11", "at least 3.9",
"below 3.12", "3.8+") become PEP 440 clauses with one spelling per range; long flags become short
ones (``--editable`` is ``-e``); ``./`` and a trailing ``/`` of a path do not count; the same
command with other flags (or another value of ``-c``) is rejected; an order the prediction
states (before/after, "first … then …", numbered steps, command sequences) that reverses the
golden one is rejected, and one that restates it is accepted.

Known blind spots: paraphrases that share no tokens, equivalent commands written
differently (``3.8+`` vs ``>= 3.8`` is handled, ``pip install a b`` vs two ``pip install`` lines
is not), and near-identical errors of different READMEs. That is what
``--judge llm:<model>`` is for.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from .base import JudgeRequest, JudgeStats, Verdict

FIX_KEY_COVERAGE = 0.8
FIX_COVERAGE = 0.6
DESCRIPTION_THRESHOLD = 0.5
KEY_BONUS_LIMIT = 0.25

KEY_WEIGHT = 3.0
VERB_WEIGHT = 2.0
WORD_WEIGHT = 1.0

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
        "\u2192": " -> ",
    }
)
_FENCE = re.compile(r"```[\w+-]*\n?(.*?)```", re.S)
# Link text stops at the next bracket: from every "[" of a long line the scan ran to its end.
_MD_LINK = re.compile(r"\[([^\[\]\n]*)\]\(([^)\s]*)\)")
_BACKTICK = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"(?<![\w])'([^'\n]{1,200}?)'(?![\w])|\"([^\"\n]{1,200}?)\"")
_UPPER_FLAG = re.compile(r"(?<![\w-])-([A-Z])(?![\w-])")
_TOKEN = re.compile(r"[^\s,;]+")
_CODE_CHARS = re.compile(r"[\d_./=\\\[\]<>:@+~$*#|&-]")
# From the start of a number only: from each digit of a long one the rest was rescanned.
_VERSION = re.compile(r"(?<!\d)\d+(?:\.(?:\d+|x|\*))+")
_VERSION_TOKEN = re.compile(r"^(?:[<>=~!^]=?|==)?v?\d+(?:\.(?:\d+|x|\*))+\+?$")
# Dropping the old value of "replace X with Y" (or "X -> Y") keeps the judge from crediting a
# prediction for quoting the wrong command it wants to change.
_OLD_VALUE = (
    re.compile(
        r"\b(?:replace|change|rename|update|modify|correct|fix)\s+(?:the\s+\w+\s+)?"
        r"(`[^`]{1,300}`)\s+(?:with|to|into|by)\s+(?=\S)",
        re.S,
    ),
    re.compile(
        # The old value ends on a non-blank, and blank runs are possessive: a lazy value
        # walking a long blank run rescanned the rest of it at every step.
        r"\b(?:replace|change|rename|update|modify|correct|fix)\s++(?:the\s+\w+\s+)?"
        r"([^`]{1,200}?)(?<!\s)\s++(?:with|to|into|by)\s+(?=\S)",
        re.S,
    ),
    re.compile(r"\binstead of\s+(`[^`]{1,300}`|[^`]{1,200}?(?=[,;]|\.\s|\.$|$))", re.S),
    # Blanks before the arrow from the start of their run only: a lazy value walking a long
    # blank run rescanned the rest of it at every step.
    re.compile(r"^(.{1,200}?)(?:(?<!\s)\s+)?(?:->|=>)\s*+(?=\S)", re.S),
)


def _words(text: str) -> list[str]:
    return text.split()


_STOP = frozenset(
    _words(
        """
        a an the and or but if then else of to in on at by for from with without into onto as is are
        was were be been being it its this that these those there their they them which who what
        when where how why not no nor so such than too very can could should would will may might
        must do does did done has have had i you we he she our your my me us e.g. i.e. e.g i.e etc
        eg ie also just only some any all each both more most other same own here via per instead
        please use using used make sure ensure need needs needed required requires require step
        steps line lines following follow e g
        """
    )
)
# Words that name *where* the error is rather than *what* it is: in this domain they appear in
# nearly every description, so they count as ordinary words, never as key tokens.
_COMMON_COMMANDS = frozenset(
    _words(
        """
        pip pip3 python python3 py install installation installed installing conda mamba git clone
        cd run sudo apt apt-get brew npm yarn env venv virtualenv create activate source bash sh
        command commands package packages dependency dependencies readme file files directory folder
        version versions error section setup project repository repo library module script
        """
    )
)
_COMMAND_START = frozenset(
    _words(
        """
        pip pip3 python python3 py conda mamba micromamba git cd apt apt-get sudo npm yarn pnpm make
        cmake docker export source bash sh curl wget poetry uv pipx brew mkdir cp mv ln tar unzip
        chmod pytest tox nox pre-commit jupyter cargo go java mvn gradle node ./configure .
        ./install.sh
        """
    )
)
_SEPARATORS = frozenset({"&&", ";", "\\", "|", "||", "$"})
# Shell prompts ("$ ", "(venv) $ ") at the start of a line or of a code span.
_PROMPT = re.compile(r"(^|\n|`)[ \t]*(?:\([\w.-]+\)[ \t]*)?\$[ \t]+")
_INSTALL_VERBS = frozenset({"install", "add", "uninstall", "remove", "upgrade", "-r", "-e"})
_VERBS = {
    "remove": "remove",
    "delete": "remove",
    "drop": "remove",
    "omit": "remove",
    "add": "add",
    "insert": "add",
    "include": "add",
    "append": "add",
    "prepend": "add",
    "move": "move",
    "swap": "move",
    "reorder": "move",
    "rearrange": "move",
    "place": "move",
    "change": "change",
    "replace": "change",
    "modify": "change",
    "update": "change",
    "correct": "change",
    "fix": "change",
    "rename": "rename",
    "upgrade": "upgrade",
    "downgrade": "downgrade",
    "pin": "pin",
    "combine": "combine",
    "merge": "combine",
    "split": "split",
}


@dataclass(frozen=True)
class _Token:
    text: str
    weight: float
    key: bool


@dataclass(frozen=True)
class _Analysis:
    normal: str  # lower-cased, normalised text (what substring checks run on)
    tokens: tuple[_Token, ...]
    versions: frozenset[str]
    command_like: bool

    def unique(self) -> list[_Token]:
        seen: dict[str, _Token] = {}
        for token in self.tokens:
            if token.weight and token.text not in seen:
                seen[token.text] = token
        return list(seen.values())

    def texts(self) -> frozenset[str]:
        return frozenset(t.text for t in self.tokens)

    def stems(self) -> frozenset[str]:
        # Word tokens are stored stemmed, key tokens verbatim: lookups try both forms.
        return self.texts() | frozenset(_stem(t.text) for t in self.tokens if t.weight)

    def sequence(self, minimum: float = KEY_WEIGHT) -> list[str]:
        return [t.text for t in self.tokens if t.weight >= minimum]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _clean(token: str) -> str:
    previous = None
    while token != previous:
        previous = token
        token = token.strip("\"'`*")
        if token == ".":
            return token  # "pip install -e ." names the current directory
        token = token.rstrip(".:!?")
        if token.startswith("(") and ")" not in token:
            token = token[1:]
        if token.endswith(")") and "(" not in token:
            token = token[:-1]
    return token


def _canonical_version(token: str) -> str:
    # "3.8+" and ">=3.8" say the same thing; "v1.2" and "1.2" too.
    if token.endswith("+"):
        token = ">=" + token[:-1]
    return token.replace("v", "", 1) if token.startswith("v") else token


def _fence(match: re.Match[str]) -> str:
    lines = [line.strip() for line in match.group(1).splitlines() if line.strip()]
    return " `" + " ; ".join(lines) + "` " if lines else " "


# Long flags with one meaning wherever they appear; conda's only after "conda"/"mamba".
_LONG_FLAGS = {"--editable": "-e", "--requirement": "-r", "--upgrade": "-U", "--yes": "-y"}
_CONDA_FLAGS = {"--channel": "-c", "--name": "-n", "--file": "-f"}
_LONG_FLAG = re.compile(r"(?<![\w-])(--[a-z]+)(?=[\s=`'\"]|$)", re.I)
_V = r"v?(\d+(?:\.\d+)+(?:[a-z]+\d*)?)"
# Version constraints written in words, rewritten to PEP 440 operators before tokenising so that
# "3.9 to 3.11" and ">=3.9,<3.12" become the same token. Order matters: ranges first. A None
# replacement is ``_at_least``'s.
_VERSION_WORDS: tuple[tuple[re.Pattern[str], str | None], ...] = tuple(
    (re.compile(pattern, re.I), replacement)
    for pattern, replacement in (
        (rf"\bbetween\s+{_V}\s+and\s+{_V}", r">=\1,<=\2"),
        (rf"(?<![\w.]){_V}\s*(?:to|through|-)\s*{_V}(?!\w|\.\d)", r">=\1,<=\2"),
        (rf"\bat least\s+(?:version\s+)?{_V}(?:\s+and\s+(?:below|under|less than)\s+{_V})?", None),
        (
            rf"(?<![\w.]){_V}\s+(?:or|and)\s+(?:later|newer|higher|above|greater|up|more|"
            r"any later(?: version)?)\b",
            r">=\1",
        ),
        (rf"\b(?:minimum|min\.?)\s+(?:version\s+)?{_V}", r">=\1"),
        (
            rf"\b(?:below|under|less than|lower than|older than|earlier than|prior to|"
            rf"anything before|before)\s+(?:version\s+)?{_V}",
            r"<\1",
        ),
        (rf"\b(?:up to|at most|no later than|no newer than)\s+(?:version\s+)?{_V}", r"<=\1"),
        (rf"(?<![\w.]){_V}\s+or\s+(?:earlier|older|lower|below)\b", r"<=\1"),
        (rf"\b(?:exactly|pinned to|pin to|pinned at)\s+(?:version\s+)?{_V}", r"==\1"),
        (rf"\bversion\s+{_V}\s+exactly\b", r"==\1"),
    )
)
_SPEC = re.compile(r"(>=|<=|==|~=|!=|>|<)\s*v?(\d+(?:\.\d+)*(?:\.?[a-z]+\d*)?)")
_ONE_SPEC = r"(?:>=|<=|==|~=|!=|>|<)\s*v?\d+(?:\.\d+)*(?:\.?[a-z]+\d*)?"
_SPEC_LIST = re.compile(rf"{_ONE_SPEC}(?:\s*,\s*{_ONE_SPEC})*")
_PLUS_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)\+(?![\w+])")
_DOT_SLASH = re.compile(r"(?<![\w./~-])\./(?=[\w-]+(?:/|\.[a-z]{1,5}\b))")


_OP_RANK = {">=": 0, ">": 0, "==": 1, "~=": 1, "!=": 2, "<=": 3, "<": 3}


def _clause_key(clause: str) -> tuple[int, str]:
    op = re.match(r"[<>=~!]+", clause)
    return (_OP_RANK.get(op.group(0), 2) if op else 2, clause)


def _at_least(match: re.Match[str]) -> str:
    low, high = match.group(1), match.group(2)
    return f">={low},<{high}" if high else f">={low}"


def _spec_list(match: re.Match[str]) -> str:
    """One spelling per version range: sorted clauses, "<=3.11" as "<3.12"."""
    clauses = []
    for op, version in _SPEC.findall(match.group(0)):
        parts = version.split(".")
        if op == "<=" and len(parts) == 2 and all(p.isdigit() for p in parts):
            # "up to 3.11" means every 3.11.x too: the same range as "<3.12".
            op, version = "<", f"{parts[0]}.{int(parts[1]) + 1}"
        clauses.append(op + version)
    return ",".join(sorted(set(clauses), key=_clause_key))


def _versions_in_words(text: str) -> str:
    text = _PLUS_VERSION.sub(r">=\1", text)
    for pattern, replacement in _VERSION_WORDS:
        text = pattern.sub(replacement if replacement else _at_least, text)
    # "lxml ==3.6.4" (from "lxml pinned to 3.6.4"), "lxml `==3.6.4`" and "lxml==3.6.4" are one
    # token.
    text = re.sub(rf"`({_ONE_SPEC}(?:\s*,\s*{_ONE_SPEC})*)`", r"\1", text)
    text = re.sub(r"(?<=[a-z0-9\]])\s+(?=(?:>=|<=|==|~=|<|>)\s*\d)", "", text)
    return _SPEC_LIST.sub(_spec_list, text)


def _long_flags(text: str) -> str:
    def short(match: re.Match[str]) -> str:
        flag = match.group(1).lower()
        if flag in _LONG_FLAGS:
            return _LONG_FLAGS[flag]
        if flag in _CONDA_FLAGS and re.search(r"\b(?:conda|mamba)\b", text[: match.start()]):
            return _CONDA_FLAGS[flag]
        return match.group(1)

    return _LONG_FLAG.sub(short, text)


def _normalise(text: str) -> str:
    text = text.translate(_TRANSLATE)
    text = _long_flags(text)
    # Case matters for one-letter flags only ("curl -L" is not "curl -l").
    text = _UPPER_FLAG.sub(lambda m: "-^" + m.group(1), text)
    text = _FENCE.sub(_fence, text)
    text = _MD_LINK.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    text = _PROMPT.sub(r"\1", text)
    text = " ".join(text.split()).lower()
    # "./requirements/dev.txt" is "requirements/dev.txt"; "./configure" stays (a command).
    text = _DOT_SLASH.sub("", text)
    return _versions_in_words(text)


def _drop_old_values(body: str) -> str:
    def blank(match: re.Match[str]) -> str:
        start, end = match.span(1)
        offset = match.start()
        whole = match.group(0)
        return whole[: start - offset] + " " + whole[end - offset :]

    for pattern in _OLD_VALUE:
        body = pattern.sub(blank, body)
    return " ".join(body.split())


def _code_spans(normal: str) -> list[str]:
    spans = [m.group(1) for m in _BACKTICK.finditer(normal)]
    spans += [m.group(1) or m.group(2) for m in _QUOTED.finditer(normal)]
    return [span.strip() for span in spans if span.strip()]


def _merge_operators(raw: list[str]) -> list[str]:
    # ">= 3.8" written with a space is one version constraint.
    out: list[str] = []
    for token in raw:
        if out and out[-1] in {">=", "<=", "==", "~=", ">", "<", "!="} and token[:1].isdigit():
            out[-1] = out[-1] + token
        else:
            out.append(token)
    return out


def _tokens(body: str, span_tokens: frozenset[str]) -> tuple[list[_Token], set[str], bool]:
    raw = _merge_operators([c for c in (_clean(t) for t in _TOKEN.findall(body)) if c])
    # A command line has no English in it: a sentence that starts with `pip install` is prose.
    command_like = (
        bool(raw)
        and not any(t in _STOP for t in raw)
        and (
            raw[0] in _COMMAND_START
            or raw[0].startswith("./")
            # "flask run --reload": a short line with flags.
            or (len(raw) <= 15 and any(t.startswith("-") and len(t) > 1 for t in raw))
        )
        # A sentence ends with "word."; "pip install -e ." does not.
        and not re.search(r"[a-z]\.$", body.rstrip())
    )
    tokens: list[_Token] = []
    versions: set[str] = set()
    previous = ""
    for word in raw:
        if _VERSION_TOKEN.match(word):
            word = _canonical_version(word)
        versions.update(_VERSION.findall(word))
        if command_like and word not in _SEPARATORS:
            # In a command line every word is load-bearing: "pip3" is not "pip", "add" not
            # "install", and "-e ." needs its dot.
            tokens.append(_Token(word, KEY_WEIGHT, True))
        elif word in _STOP or len(word) < 2 or not any(ch.isalnum() for ch in word):
            tokens.append(_Token(word, 0.0, False))
        elif word in _VERBS:
            tokens.append(_Token(_VERBS[word], VERB_WEIGHT, False))
        elif word in _COMMON_COMMANDS or word.isdigit():
            tokens.append(_Token(word, WORD_WEIGHT, False))
        elif _CODE_CHARS.search(word) or word in span_tokens or previous in _INSTALL_VERBS:
            tokens.append(_Token(word, KEY_WEIGHT, True))
        elif len(word) > 1:
            tokens.append(_Token(_stem(word), WORD_WEIGHT, False))
        else:
            tokens.append(_Token(word, 0.0, False))
        previous = word
    return tokens, versions, command_like


@lru_cache(maxsize=131072)
def _analyse(text: str, proposal_only: bool) -> _Analysis:
    """Tokens of a text; for a fix (``proposal_only``) without the values it replaces."""
    normal = _normalise(text)
    body = _drop_old_values(normal) if proposal_only else normal
    spans = _code_spans(body)
    span_tokens = frozenset(_clean(t) for span in spans for t in span.split())
    tokens, versions, command_like = _tokens(body, span_tokens)
    if not command_like and len(spans) == 1 and spans[0].strip(" .") == body.strip(" .`'\""):
        command_like = True
    return _Analysis(
        normal=body, tokens=tuple(tokens), versions=frozenset(versions), command_like=command_like
    )


@lru_cache(maxsize=131072)
def _segments(text: str) -> tuple[_Analysis, ...]:
    """The commands a fix proposes: its code spans (after dropping old values)."""
    body = _drop_old_values(_normalise(text))
    out = []
    for span in _code_spans(body):
        tokens, versions, _ = _tokens(span, frozenset(_clean(t) for t in span.split()))
        out.append(
            _Analysis(
                normal=span, tokens=tuple(tokens), versions=frozenset(versions), command_like=True
            )
        )
    return tuple(out)


_BOUNDARY = r"(?<![\w\-.\[/])" + "{}" + r"(?![\w\-\[/]|\.\w)"


def _found(token: str, other: _Analysis, key: bool = True) -> bool:
    if token in other.texts() or (not key and token in other.stems()):
        return True
    # A key token glued to punctuation in the other text ("lhotse," or "(docs/conf.py)").
    if len(token) < 2:
        return False
    if re.search(_BOUNDARY.format(re.escape(token)), other.normal):
        return True
    # "imgs/" and "imgs" name the same folder; "src/imgs" does not.
    if token.endswith("/") and len(token) > 2:
        return re.search(_BOUNDARY.format(re.escape(token[:-1])), other.normal) is not None
    return False


_ACTIONS = frozenset(_VERBS.values())


def _kind(token: str) -> str:
    if token in _ACTIONS:
        return "action"
    if _VERSION.search(token):
        return "version"
    if token.startswith("-"):
        return "flag"
    if "/" in token or re.search(r"\.[a-z]{1,5}$", token):
        return "path"
    return "name"


def _substitutions(golden: _Analysis, predicted: _Analysis) -> list[tuple[str, str, str]]:
    """Key tokens and actions the prediction replaced: (kind, golden, predicted)."""
    a = golden.sequence(VERB_WEIGHT)
    b = predicted.sequence(VERB_WEIGHT)
    out = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        old = [t for t in a[i1:i2] if not _found(t, predicted)]
        new = [t for t in b[j1:j2] if t not in golden.texts()]
        if old and new:
            kind = _kind(old[0])
            if kind == "action":
                old, new = old[:1], [t for t in new if t in _ACTIONS][:1] or new[:1]
            elif kind == "name" and i1 > 0 and a[i1 - 1] in _INSTALL_VERBS:
                kind = "package name"
            out.append((kind, " ".join(old[:3]), " ".join(new[:3])))
    return out


def _show(token: str) -> str:
    return re.sub(r"-\^([a-z])", lambda m: "-" + m.group(1).upper(), token)


def _quote(tokens: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(f"'{_show(t)}'" for t in list(tokens)[:limit])
    return shown + (f" (+{len(tokens) - limit} more)" if len(tokens) > limit else "")


def _coverage(golden: _Analysis, other: _Analysis) -> tuple[float, float, list[_Token]]:
    unique = golden.unique()
    total = sum(t.weight for t in unique) or 1.0
    key_total = sum(t.weight for t in unique if t.key)
    missing = [t for t in unique if not _found(t.text, other, t.key)]
    coverage = 1.0 - sum(t.weight for t in missing) / total
    missing_key = sum(t.weight for t in missing if t.key)
    key_coverage = 1.0 - missing_key / key_total if key_total else 1.0
    return coverage, key_coverage, missing


def _command_mismatch(golden: _Analysis, predicted_text: str) -> str | None:
    """For a golden command line: what the proposed command adds or reorders, if anything."""
    segments = _segments(predicted_text)
    if not segments:
        whole = _analyse(predicted_text, True)
        if not whole.command_like:
            return None
        segments = (whole,)
    best = max(segments, key=lambda seg: (_coverage(golden, seg)[1], -len(seg.tokens)))
    g_keys = golden.sequence()
    added = [t for t in best.sequence() if not _found(t, golden)]
    if added:
        return f"adds {_kind(added[0])} {_quote(added)} to the golden command"
    found = [t for t in best.sequence() if t in g_keys]
    expected = [t for t in g_keys if t in found]
    if found != expected and sorted(found) == sorted(expected):
        return f"same tokens in a different order: {_quote(found, 6)}"
    return None


# --- flags ---------------------------------------------------------------------------------------

# Flags whose next word is their value: "-c conda-forge" and "-c anaconda" are different flags.
_VALUE_FLAGS = frozenset(
    [
        "-c",
        "-n",
        "-r",
        "-f",
        "-i",
        "-o",
        "-b",
        "-u",
        "-t",
        "-p",
        "--index-url",
        "--extra-index-url",
        "--depth",
        "--branch",
        "--config",
        "--prefix",
        "--target",
        "--python",
        "--channel",
        "--name",
        "--file",
        "--output",
    ]
)
_FLAG = re.compile(r"^--?[a-z^][\w^-]*(?:=\S+)?$")


def _program(words: Sequence[str]) -> tuple[str, list[str]]:
    """The program a command runs (``python -m pip`` counts as ``pip``) and its arguments."""
    words = [w for w in words if w not in ("sudo", "$")]
    if len(words) >= 3 and re.fullmatch(r"python[\d.]*|py", words[0]):
        at = next((i for i, w in enumerate(words) if w == "-m"), -1)
        if at >= 0 and at + 1 < len(words):
            return words[at + 1].replace("pip3", "pip"), words[at + 2 :]
    head = words[0] if words else ""
    return {"pip3": "pip", "python3": "python"}.get(head, head), words[1:]


def _flag_set(args: Sequence[str]) -> set[str]:
    out = set()
    for i, word in enumerate(args):
        if not _FLAG.match(word):
            continue
        if word in _VALUE_FLAGS and i + 1 < len(args) and not args[i + 1].startswith("-"):
            out.add(f"{word} {args[i + 1]}")
        else:
            out.add(word)
    return out


def _commands(text: str) -> list[list[str]]:
    """Commands a text proposes: the whole text when it is a command line, else its code spans."""
    whole = _analyse(text, True)
    steps = _steps(text)
    if steps:
        sources = [_normalise(step) for step in steps]
    elif whole.command_like:
        sources = [whole.normal.replace("`", " ")]
    else:
        sources = [seg.normal for seg in _segments(text)]
    out = []
    for source in sources:
        for part in re.split(r"\s(?:&&|;|\|\|)\s", source):
            words = [_clean(w) for w in part.split()]
            words = [w for w in words if w]
            if words and (words[0] in _COMMAND_START or words[0] == "sudo"):
                out.append(words)
    return out


def _flag_mismatch(golden_text: str, predicted_text: str) -> str | None:
    """The same command with other flags: the near miss token overlap cannot see (E2)."""
    predicted = [_program(c) for c in _commands(predicted_text)]
    for command in _commands(golden_text):
        program, args = _program(command)
        rivals = [p for p in predicted if p[0] == program]
        if not rivals or not program:
            continue
        positional = {a for a in args if not _FLAG.match(a)}
        _, best = max(rivals, key=lambda p: len(positional & set(p[1])))
        if positional and not positional & set(best) and len(positional) > 1:
            continue  # another command of the same program, not this one reworded
        golden_flags, predicted_flags = _flag_set(args), _flag_set(best)
        if golden_flags == predicted_flags:
            continue
        extra = sorted(predicted_flags - golden_flags)
        missing = sorted(golden_flags - predicted_flags)
        shown = _show(" ".join(command))
        if extra and missing:
            return (
                f"different flag in '{shown}': golden {_quote(missing)} vs predicted "
                f"{_quote(extra)}"
            )
        if extra:
            return f"adds flag {_quote(extra)} to '{shown}'"
        return f"missing flag {_quote(missing)} of '{shown}'"
    return None


# --- order ---------------------------------------------------------------------------------------

_ORDER_KEY = re.compile(r"\b(before|after|prior to|once)\b")
_THEN = re.compile(
    # Blanks from the start of their run only (or none: the match may start right after the
    # last one took the blanks): from each blank of a long run the rest was rescanned.
    r",?(?:(?<!\s)\s+)?(?:\band\s++)?\b(?:then|finally|followed by|after that|afterwards|next)\b"
    r",?\s*"
    r"|(?:^|\s)\d+[.)]\s+"  # a numbered list
)
_CLAUSE_END = re.compile(r"(?<=[^\d\s])\.(?=\s|$)|[;\n!?]")


def _operand(text: str) -> frozenset[str]:
    tokens = _analyse(text, False).unique()
    words = {t.text for t in tokens if t.text not in _ACTIONS and t.text != "first"}
    # Every word of a command counts, "make" included (a stop word in prose).
    for span in _code_spans(_normalise(text)):
        words.update(w for w in (_clean(w) for w in span.split()) if w)
    return frozenset(words)


def _steps(text: str) -> list[str] | None:
    """A fix that is only commands, one per line or joined by ``&&``: its commands in order."""
    body = _FENCE.sub(lambda m: m.group(1), text.translate(_TRANSLATE))
    body = re.sub(r"^\s*(?:\d+[.)]|[-*])\s+", "", body, flags=re.M)  # list markers
    parts = [p.strip(" `$") for line in body.splitlines() for p in re.split(r"&&|;", line)]
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return None
    heads = [_clean(p.split()[0].lower()) for p in parts]
    if all(h in _COMMAND_START or h.startswith("./") for h in heads):
        return parts
    return None


def _relations(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """What a text says must happen first: (earlier, later) pairs of token sets."""
    steps = _steps(text)
    if steps:
        sets = [_operand(f"`{s}`") for s in steps]
        return [(a, b) for a, b in pairwise(sets) if a and b]
    body = _drop_old_values(_normalise(text))
    out = []
    for clause in _CLAUSE_END.split(body):
        match = _ORDER_KEY.search(clause)
        if match:
            left, right = clause[: match.start()], clause[match.end() :]
            if not left.strip(" ,"):
                # "Before X, do Y" / "After X, do Y": the comma ends X.
                x, _, y = right.partition(",")
                first, second = (y, x) if match.group(1) in ("before", "prior to") else (x, y)
            elif match.group(1) in ("before", "prior to"):
                first, second = left, right
            else:
                first, second = right, left
            a, b = _operand(first), _operand(second)
            if a and b:
                out.append((a, b))
            continue
        parts = [p for p in _THEN.split(clause) if p.strip(" ,")]
        sets = [_operand(p) for p in parts]
        out += [(a, b) for a, b in pairwise(sets) if a and b]
    return out


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    # Dice, not containment: "make" must not count as "make install".
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _order_conflict(golden_text: str, predicted_text: str) -> tuple[str | None, bool]:
    """(reason, agrees): an order the prediction reverses; whether it states the golden order."""
    golden = _relations(golden_text)
    predicted = _relations(predicted_text)
    if not golden or not predicted:
        return None, False
    agrees = True
    for p_first, p_second in predicted:
        best_same = best_flipped = 0.0
        for g_first, g_second in golden:
            same = _overlap(g_first, p_first) + _overlap(g_second, p_second)
            flipped = _overlap(g_first, p_second) + _overlap(g_second, p_first)
            if flipped >= 1.2 and flipped >= same + 0.5:
                first, second = sorted(g_first & p_second), sorted(g_second & p_first)
                return (
                    f"reverses the golden order: {_quote(first, 3)} must come before "
                    f"{_quote(second, 3)}",
                    False,
                )
            best_same, best_flipped = max(best_same, same), max(best_flipped, flipped)
        agrees = agrees and best_same >= 1.5 and best_same > best_flipped
    return None, agrees


def _plain(text: str) -> str:
    # A sentence's final period goes; the "." of "pip install -e ." stays.
    return re.sub(r"(?<=[\w)\]'\"])\.$", "", _normalise(text).replace("`", "").strip())


def _judge_fix(golden_text: str, predicted_text: str) -> Verdict:
    if _plain(golden_text) == _plain(predicted_text):
        return Verdict(similar=True, confidence=1.0, reason="same fix after normalising the text")
    golden = _analyse(golden_text, True)
    predicted = _analyse(predicted_text, True)
    coverage, key_coverage, missing = _coverage(golden, predicted)
    missing_keys = [t.text for t in missing if t.key]
    score = 0.5 * key_coverage + 0.5 * coverage
    if golden.versions and predicted.versions and not (golden.versions & predicted.versions):
        return Verdict(
            similar=False,
            confidence=0.9,
            reason=(
                f"different version: golden {_quote(sorted(golden.versions))} vs predicted "
                f"{_quote(sorted(predicted.versions))}"
            ),
        )
    # A flag, version or path is the whole point of a fix when the golden one names it.
    precise = [t for t in missing_keys if _kind(t) in ("flag", "version", "path")]
    similar = key_coverage >= FIX_KEY_COVERAGE and coverage >= FIX_COVERAGE and not precise
    reversed_order, same_order = _order_conflict(golden_text, predicted_text)
    if reversed_order:
        return Verdict(similar=False, confidence=0.8, reason=reversed_order)
    if not similar and same_order and not precise and not _steps(golden_text) and coverage >= 0.4:
        # "B should come after A" for "Move A before B": the order is the fix, and it agrees.
        return Verdict(
            similar=True,
            confidence=0.7,
            reason=f"states the golden order ({coverage:.0%} of the fix's weight)",
        )
    if not similar and same_order and _steps(golden_text):
        # "Run `b` after `a`" for the golden sequence "a; b; c": one move that restores the
        # golden order names only the commands it moves.
        spans = _code_spans(predicted.normal)
        words = [w for span in spans for w in (_clean(x) for x in span.split()) if w]
        added = [w for w in words or predicted.sequence() if not _found(w, golden)]
        if not added:
            return Verdict(
                similar=True,
                confidence=0.7,
                reason="states the golden order of the commands it names",
            )
    if similar and golden.command_like:
        mismatch = _command_mismatch(golden, predicted_text)
        if mismatch:
            return Verdict(similar=False, confidence=0.8, reason=mismatch)
    if similar:
        flags = _flag_mismatch(golden_text, predicted_text)
        if flags:
            return Verdict(similar=False, confidence=0.8, reason=flags)
    if similar:
        keys = [t.text for t in golden.unique() if t.key]
        shown = _quote(keys) if keys else "its words"
        reason = f"proposes the golden fix: covers {shown} ({coverage:.0%} of the fix's weight)"
        if missing_keys:
            reason += f"; missing {_quote(missing_keys)}"
        return Verdict(similar=True, confidence=round(min(1.0, score), 3), reason=reason)
    subs = _substitutions(golden, predicted)
    if subs:
        kind, old, new = subs[0]
        reason = f"different {kind}: golden {_quote([old])} vs predicted {_quote([new])}"
    elif precise:
        reason = f"missing {_kind(precise[0])} {_quote(precise)}"
    elif missing_keys:
        reason = f"does not propose {_quote(missing_keys)}"
    else:
        words = [t.text for t in missing]
        reason = f"covers {coverage:.0%} of the golden fix; missing {_quote(words)}"
    return Verdict(similar=False, confidence=round(min(1.0, 1.5 - score), 3), reason=reason)


def _judge_description(golden_text: str, predicted_text: str) -> Verdict:
    if _normalise(golden_text) == _normalise(predicted_text):
        return Verdict(similar=True, confidence=1.0, reason="same description")
    golden = _analyse(golden_text, False)
    predicted = _analyse(predicted_text, False)
    g_unique = golden.unique()
    keys = [t for t in g_unique if t.key]
    key_total = sum(t.weight for t in keys)
    found_keys = [t for t in keys if _found(t.text, predicted)]
    key_coverage = sum(t.weight for t in found_keys) / key_total if key_total else 0.0

    g_words = {t.text: t.weight for t in g_unique if not t.key}
    p_words = {t.text: t.weight for t in predicted.unique() if not t.key}
    common = sum(w for word, w in g_words.items() if word in p_words)
    norm = (sum(g_words.values()) * sum(p_words.values())) ** 0.5
    word_sim = common / norm if norm else 0.0
    # A description says *where* (key tokens) and *what* (words). Naming the same command only
    # helps when the words agree too: other errors of the same README name the same package.
    score = max(word_sim, min(key_coverage, word_sim + KEY_BONUS_LIMIT)) if keys else word_sim
    similar = score >= DESCRIPTION_THRESHOLD
    shared_words = sum(1 for word in g_words if word in p_words)
    parts = []
    if keys:
        if found_keys:
            parts.append(f"mentions {_quote([t.text for t in found_keys])}")
        missing = [t.text for t in keys if t not in found_keys]
        if missing:
            parts.append(f"not {_quote(missing)}")
    parts.append(f"{shared_words}/{len(g_words)} golden words in common (overlap {word_sim:.2f})")
    reason = "; ".join(parts) + f"; score {score:.2f}, threshold {DESCRIPTION_THRESHOLD}"
    confidence = min(1.0, 0.5 + abs(score - DESCRIPTION_THRESHOLD))
    return Verdict(similar=similar, confidence=round(confidence, 3), reason=reason)


class OfflineJudge:
    """Token-based judge; pure function of its inputs, so it needs no cache."""

    name = "offline"

    def __init__(self) -> None:
        self._calls = 0

    def judge(self, request: JudgeRequest) -> Verdict:
        self._calls += 1
        if not request.predicted.strip():
            return Verdict(similar=False, confidence=1.0, reason=f"no {request.aspect} predicted")
        if request.aspect == "fix":
            return _judge_fix(request.golden, request.predicted)
        return _judge_description(request.golden, request.predicted)

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        return [self.judge(request) for request in requests]

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name, calls=self._calls)
