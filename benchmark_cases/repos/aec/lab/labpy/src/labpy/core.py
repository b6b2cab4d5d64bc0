import re


def words(text):
    return [w for w in re.split(r"[^A-Za-z0-9]+", text) if w]


def slug(text):
    return "-".join(w.lower() for w in words(text))
