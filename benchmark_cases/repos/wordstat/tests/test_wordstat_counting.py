from wordstat import count_text, tokenize


def test_tokenize_lowercases_and_keeps_apostrophes() -> None:
    assert tokenize("Don't PANIC, it's fine.") == ["don't", "panic", "it's", "fine"]


def test_count_text_counts_lines_words_chars() -> None:
    stats = count_text("one two\nthree\n")
    assert (stats.lines, stats.words, stats.chars) == (2, 3, 14)


def test_top_words_skip_stopwords_and_break_ties_alphabetically() -> None:
    stats = count_text("the cat and the dog and the bird, cat dog", top=2)
    assert stats.top == [("cat", 2), ("dog", 2)]


def test_top_words_with_stopwords_kept() -> None:
    stats = count_text("the cat and the dog", top=1, stopwords=())
    assert stats.top == [("the", 2)]
