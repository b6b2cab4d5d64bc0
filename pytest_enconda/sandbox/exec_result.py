"""What a command run in a box gives back (``ExecResult``), and the bounded tail of its output
that both the containers and the host backend keep while it runs."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ExecResult(BaseModel):
    exit_code: int | None = Field(description="None when the command timed out or never ended")
    output: str = Field(description="stdout and stderr interleaved; the tail when truncated")
    duration: float
    timed_out: bool
    truncated: bool
    output_bytes: int = Field(default=0, description="bytes the command wrote in total")


class _Tail:
    """Keeps the last ``limit`` bytes; early output matters less than where a command failed."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.buffer = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.buffer += chunk
        if len(self.buffer) > self.limit:
            del self.buffer[: len(self.buffer) - self.limit]

    def text(self) -> tuple[str, bool]:
        cut = self.total - len(self.buffer)
        body = bytes(self.buffer).decode("utf-8", errors="replace")
        if cut <= 0:
            return body, False
        return f"[... {cut} bytes of earlier output cut ...]\n{body}", True
