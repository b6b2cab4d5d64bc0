"""``textio.read_url``: the one bounded HTTP read behind PyPI's project JSON and Debian's
Contents indexes, against a real server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from localhttp import QuietHandler, serving, unused_port

from pytest_enconda import textio

BODY = b"x" * 1000


class _Files(QuietHandler):
    def do_GET(self) -> None:
        if self.path == "/missing":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


@pytest.fixture
def server() -> Iterator[str]:
    with serving(_Files) as url:
        yield url


def test_an_answer_within_the_limit_is_read_whole(server: str) -> None:
    assert textio.read_url(f"{server}/file", 1000, timeout=10) == BODY


def test_a_larger_answer_is_refused_not_read_whole(server: str) -> None:
    with pytest.raises(ValueError, match="larger than 999 bytes"):
        textio.read_url(f"{server}/file", 999, timeout=10)


def test_http_errors_and_refused_connections_are_os_errors(server: str) -> None:
    with pytest.raises(OSError, match="404"):
        textio.read_url(f"{server}/missing", 1000, timeout=10)
    with pytest.raises(OSError):
        textio.read_url(f"http://127.0.0.1:{unused_port()}/", 1000, timeout=10)


def test_both_callers_name_the_url_in_their_own_error(server: str) -> None:
    from pytest_enconda.sandbox.debian_programs import ContentsError, _download
    from pytest_enconda.verify.wheel_pythons import PyPIError

    with pytest.raises(ContentsError, match=f"{server}/missing: HTTP Error 404"):
        _download(f"{server}/missing")
    import pytest_enconda.verify.wheel_pythons as wheel_pythons

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wheel_pythons, "PYPI_JSON", server + "/{name}")
        patch.setattr(wheel_pythons, "MAX_JSON_BYTES", 10)
        with pytest.raises(PyPIError, match="larger than 10 bytes"):
            wheel_pythons.fetch_release_files("file")
