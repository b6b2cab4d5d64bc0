from labpy.core import slug, words


def test_words():
    assert words("Hello, world!") == ["Hello", "world"]


def test_slug():
    assert slug("Hello, World 2") == "hello-world-2"


def test_slug_empty():
    assert slug("  ") == ""
