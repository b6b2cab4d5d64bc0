"""How the offline judge reads a text: normalised (quotes, fences, links, versions in words,
long flags), cut into weighted tokens (key tokens 3, action verbs 2, other words 1, stop words 0)
and code spans. ``offline`` compares two such readings; the reasons for the weights are there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

KEY_WEIGHT = 3.0
VERB_WEIGHT = 2.0
WORD_WEIGHT = 1.0

TRANSLATE = str.maketrans(
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
FENCE = re.compile(r"```[\w+-]*\n?(.*?)```", re.S)
# Link text stops at the next bracket: from every "[" of a long line the scan ran to its end.
_MD_LINK = re.compile(r"\[([^\[\]\n]*)\]\(([^)\s]*)\)")
_BACKTICK = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"(?<![\w])'([^'\n]{1,200}?)'(?![\w])|\"([^\"\n]{1,200}?)\"")
_UPPER_FLAG = re.compile(r"(?<![\w-])-([A-Z])(?![\w-])")
_TOKEN = re.compile(r"[^\s,;]+")
_CODE_CHARS = re.compile(r"[\d_./=\\\[\]<>:@+~$*#|&-]")
# From the start of a number only: from each digit of a long one the rest was rescanned.
VERSION = re.compile(r"(?<!\d)\d+(?:\.(?:\d+|x|\*))+")
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
    # The value stops at the next "instead of": one phrase after another would otherwise
    # rescan up to 200 characters from each of them.
    re.compile(
        r"\binstead of\s+(`[^`]{1,300}`|(?:(?!instead of)[^`]){1,200}?(?=[,;]|\.\s|\.$|$))",
        re.S,
    ),
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
COMMAND_START = frozenset(
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
INSTALL_VERBS = frozenset({"install", "add", "uninstall", "remove", "upgrade", "-r", "-e"})
VERBS = {
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
class Token:
    text: str
    weight: float
    key: bool


@dataclass(frozen=True)
class Analysis:
    normal: str  # lower-cased, normalised text (what substring checks run on)
    tokens: tuple[Token, ...]
    versions: frozenset[str]
    command_like: bool

    def unique(self) -> list[Token]:
        seen: dict[str, Token] = {}
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


def clean(token: str) -> str:
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


def normalise(text: str) -> str:
    text = text.translate(TRANSLATE)
    text = _long_flags(text)
    # Case matters for one-letter flags only ("curl -L" is not "curl -l").
    text = _UPPER_FLAG.sub(lambda m: "-^" + m.group(1), text)
    text = FENCE.sub(_fence, text)
    text = _MD_LINK.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    text = _PROMPT.sub(r"\1", text)
    text = " ".join(text.split()).lower()
    # "./requirements/dev.txt" is "requirements/dev.txt"; "./configure" stays (a command).
    text = _DOT_SLASH.sub("", text)
    return _versions_in_words(text)


def drop_old_values(body: str) -> str:
    def blank(match: re.Match[str]) -> str:
        start, end = match.span(1)
        offset = match.start()
        whole = match.group(0)
        return whole[: start - offset] + " " + whole[end - offset :]

    for pattern in _OLD_VALUE:
        body = pattern.sub(blank, body)
    return " ".join(body.split())


def code_spans(normal: str) -> list[str]:
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


def _tokens(body: str, span_tokens: frozenset[str]) -> tuple[list[Token], set[str], bool]:
    raw = _merge_operators([c for c in (clean(t) for t in _TOKEN.findall(body)) if c])
    # A command line has no English in it: a sentence that starts with `pip install` is prose.
    command_like = (
        bool(raw)
        and not any(t in _STOP for t in raw)
        and (
            raw[0] in COMMAND_START
            or raw[0].startswith("./")
            # "flask run --reload": a short line with flags.
            or (len(raw) <= 15 and any(t.startswith("-") and len(t) > 1 for t in raw))
        )
        # A sentence ends with "word."; "pip install -e ." does not.
        and not re.search(r"[a-z]\.$", body.rstrip())
    )
    tokens: list[Token] = []
    versions: set[str] = set()
    previous = ""
    for word in raw:
        if _VERSION_TOKEN.match(word):
            word = _canonical_version(word)
        versions.update(VERSION.findall(word))
        if command_like and word not in _SEPARATORS:
            # In a command line every word is load-bearing: "pip3" is not "pip", "add" not
            # "install", and "-e ." needs its dot.
            tokens.append(Token(word, KEY_WEIGHT, True))
        elif word in _STOP or len(word) < 2 or not any(ch.isalnum() for ch in word):
            tokens.append(Token(word, 0.0, False))
        elif word in VERBS:
            tokens.append(Token(VERBS[word], VERB_WEIGHT, False))
        elif word in _COMMON_COMMANDS or word.isdigit():
            tokens.append(Token(word, WORD_WEIGHT, False))
        elif _CODE_CHARS.search(word) or word in span_tokens or previous in INSTALL_VERBS:
            tokens.append(Token(word, KEY_WEIGHT, True))
        elif len(word) > 1:
            tokens.append(Token(_stem(word), WORD_WEIGHT, False))
        else:
            tokens.append(Token(word, 0.0, False))
        previous = word
    return tokens, versions, command_like


@lru_cache(maxsize=131072)
def analyse(text: str, proposal_only: bool) -> Analysis:
    """Tokens of a text; for a fix (``proposal_only``) without the values it replaces."""
    normal = normalise(text)
    body = drop_old_values(normal) if proposal_only else normal
    spans = code_spans(body)
    span_tokens = frozenset(clean(t) for span in spans for t in span.split())
    tokens, versions, command_like = _tokens(body, span_tokens)
    if not command_like and len(spans) == 1 and spans[0].strip(" .") == body.strip(" .`'\""):
        command_like = True
    return Analysis(
        normal=body, tokens=tuple(tokens), versions=frozenset(versions), command_like=command_like
    )


@lru_cache(maxsize=131072)
def code_segments(text: str) -> tuple[Analysis, ...]:
    """The commands a fix proposes: its code spans (after dropping old values)."""
    body = drop_old_values(normalise(text))
    out = []
    for span in code_spans(body):
        tokens, versions, _ = _tokens(span, frozenset(clean(t) for t in span.split()))
        out.append(
            Analysis(
                normal=span, tokens=tuple(tokens), versions=frozenset(versions), command_like=True
            )
        )
    return tuple(out)
