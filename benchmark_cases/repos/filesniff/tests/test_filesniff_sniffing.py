import gzip
import shutil
from pathlib import Path

from filesniff import sniff, sniff_file

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_sniff_recognises_binary_formats_from_bytes() -> None:
    assert sniff((SAMPLES / "logo.png").read_bytes()) == "image/png"
    assert sniff(gzip.compress(b"hello world\n" * 10)) == "application/gzip"


def test_text_file_with_matching_extension(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("plain words, nothing more\n")
    finding = sniff_file(path)
    assert finding.detected == "text/plain"
    assert not finding.mismatch


def test_png_disguised_as_text_is_a_mismatch(tmp_path: Path) -> None:
    disguised = tmp_path / "holiday.txt"
    shutil.copy(SAMPLES / "logo.png", disguised)
    finding = sniff_file(disguised)
    assert finding.detected == "image/png"
    assert finding.expected == {"text/plain"}
    assert finding.mismatch


def test_unknown_extension_is_never_a_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "blob.unknownext"
    path.write_bytes((SAMPLES / "manual.pdf").read_bytes())
    finding = sniff_file(path)
    assert finding.detected == "application/pdf"
    assert not finding.mismatch
