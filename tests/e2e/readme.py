"""The shell examples of a Markdown file, read as a shell would read them: every fenced
``sh``, ``bash``, ``shell`` or ``console`` block that mentions ``curl``, cut into commands
(a command goes on while a quote is open or a line ends in ``\\``), each with what the
README shows of its answer (the comment line right under it: ``# 201 {...}``, ``#
{"success":true,"message":"Lead added",...}``)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

SHELLS = frozenset({"sh", "bash", "shell", "console"})
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<info>[^`\s]*)")
_STATUS = re.compile(r"^#\s*(?P<status>[1-5]\d\d)\b")
_ENVELOPE = re.compile(
    r'\{"success":\s*(?P<success>true|false),\s*"message":\s*"(?P<message>[^"]*)"'
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Shown:
    """What the README says a command answers: a status, and the envelope's words."""

    status: int | None = None
    success: bool | None = None
    message: str | None = None


@dataclass(frozen=True)
class Example:
    line: int  # of the README, where the command starts (1-based)
    text: str  # as written, continuation lines included
    shown: Shown

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text, comments=True)

    @property
    def is_curl(self) -> bool:
        return bool(self.words) and self.words[0] == "curl"

    @property
    def assignments(self) -> dict[str, str] | None:
        """``KEY=lm_...``: the variables it sets, when that is all the command does."""
        words = self.words
        if not words or not all(_ASSIGNMENT.match(word) for word in words):
            return None
        return dict(word.split("=", 1) for word in words)


def shell_blocks(markdown: str) -> Iterator[tuple[int, str, list[str]]]:
    """(first line number, language, lines) of each fenced shell block."""
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        fence, language = opened["fence"], opened["info"].lower()
        start = index + 1
        index = start
        while index < len(lines) and not lines[index].startswith(fence):
            index += 1
        if language in SHELLS:
            yield start + 1, language, lines[start:index]
        index += 1


def examples(markdown: str) -> Iterator[Example]:
    """Every command of every shell block that mentions ``curl``, in the README's order."""
    for first, language, lines in shell_blocks(markdown):
        if not any("curl" in line for line in lines):
            continue
        yield from _commands(first, lines, prompted=language == "console")


def _commands(first: int, lines: list[str], *, prompted: bool) -> Iterator[Example]:
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if prompted:
            if not stripped.startswith("$ "):
                index += 1
                continue
            line = stripped[2:]
        elif not stripped or stripped.startswith("#"):
            index += 1
            continue
        start, text = index, line
        while not _complete(text):
            index += 1
            if index == len(lines):
                raise ValueError(f"README line {first + start}: the command never ends:\n{text}")
            text += "\n" + lines[index]
        index += 1
        under = lines[index].strip() if index < len(lines) else ""
        yield Example(first + start, text, _shown(under))


def _complete(text: str) -> bool:
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:  # a quote still open
        return False
    return True


def _shown(comment: str) -> Shown:
    if not comment.startswith("#"):
        return Shown()
    status = _STATUS.match(comment)
    envelope = _ENVELOPE.search(comment)
    return Shown(
        int(status["status"]) if status else None,
        envelope["success"] == "true" if envelope else None,
        envelope["message"] if envelope else None,
    )
