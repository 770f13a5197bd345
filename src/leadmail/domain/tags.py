"""Tags: the labels a school puts on its leads ("march-cohort", "city: leeds"), and changes
to a lead's set of them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from leadmail.domain.errors import FieldError, ValidationFailed

MAX_TAGS = 50  # per lead, and per list a request sends
MAX_TAG = 64  # characters, once trimmed
# A regular-expression class: ASCII letters and digits, - _ . : and space. ASCII only, so
# lower-casing and sorting mean the same in Python, Postgres ("C") and SQLite.
TAG_CHARACTERS = r"A-Za-z0-9_.: \-"
TAG = re.compile(f"[{TAG_CHARACTERS}]{{1,{MAX_TAG}}}")

Tags = tuple[str, ...]  # lower-case, trimmed, unique, sorted


def normalise_tag(value: str) -> str:
    """A tag as stored: trimmed and lower-cased. Raises ValueError naming the rule."""
    text = value.strip()
    if not text:
        raise ValueError("must not be blank")
    if len(text) > MAX_TAG:
        raise ValueError(f"must be at most {MAX_TAG} characters")
    if not TAG.fullmatch(text):
        raise ValueError("may hold only letters, digits, spaces and - _ . :")
    return text.lower()


def tag_list(values: Sequence[str], field: str) -> Tags:
    """Up to MAX_TAGS tags as sent (``field`` names them: ``tags``, ``add``), each checked
    (a broken one is named ``field[i]``); stored lower-cased, trimmed, unique and sorted."""
    if not values:
        return ()
    errors = _tag_errors(values, field)
    if errors:
        raise ValidationFailed(errors)
    return tags_of(normalise_tag(value) for value in values)


def tags_of(normalised: Iterable[str]) -> Tags:
    return tuple(sorted(set(normalised)))


def _tag_errors(values: Sequence[str], field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if len(values) > MAX_TAGS:
        errors.append(FieldError(field, f"must hold at most {MAX_TAGS} tags"))
    for index, value in enumerate(values):
        try:
            normalise_tag(value)
        except ValueError as e:
            errors.append(FieldError(f"{field}[{index}]", str(e)))
    return errors


@dataclass(frozen=True, slots=True)
class TagChange:
    """Tags to add to a lead and tags to take off it, in one step."""

    add: Tags = ()
    remove: Tags = ()

    @classmethod
    def parse(cls, add: Sequence[str], remove: Sequence[str]) -> TagChange:
        """Each list checked as a lead's tags are (a broken tag named ``add[i]`` or
        ``remove[i]``). A tag in both lists ends up removed."""
        errors = _tag_errors(add, "add") + _tag_errors(remove, "remove")
        if errors:
            raise ValidationFailed(errors)
        return cls(
            tags_of(normalise_tag(value) for value in add),
            tags_of(normalise_tag(value) for value in remove),
        )

    @property
    def empty(self) -> bool:
        return not self.add and not self.remove

    def apply_to(self, tags: Tags) -> Tags:
        """The lead's tags after the change: those added, then those removed taken off.
        Raises TooManyTags past MAX_TAGS."""
        result = tags_of(t for t in (*tags, *self.add) if t not in self.remove)
        if len(result) > MAX_TAGS:
            raise TooManyTags()
        return result


class TooManyTags(ValidationFailed):
    """Adding would give the lead more than MAX_TAGS tags."""

    def __init__(self) -> None:
        super().__init__([FieldError("add", f"would give the lead more than {MAX_TAGS} tags")])
