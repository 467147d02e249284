"""Prompt templates: files identified by their content hash, each with its answer format.

A prompt file (YAML) holds ``messages`` (a list of ``{role, content}`` templates with ``{name}``
placeholders), ``answer`` (an :class:`~polyjudge.judges.parse.AnswerFormat` spec) and optionally
``expected_output_tokens`` (for the cost plan; null = as long as the text being translated) and
``description``. Placeholders are ``{name}`` with a plain identifier; any other brace is literal
text, so templates may show JSON examples. The hash is the SHA-256 of the file's bytes: the
outputs record which template produced them.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..data.yamlfile import parse_yaml
from .parse import AnswerFormat

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Prompt:
    """A loaded template: its messages, answer format, expected output length and hash."""
    path: str
    messages: tuple[tuple[str, str], ...]
    answer: AnswerFormat
    expected_output_tokens: int | None
    digest: str

    @property
    def fields(self) -> set[str]:
        return {name for _, text in self.messages for name in _PLACEHOLDER.findall(text)}

    def render(self, values: Mapping[str, str]) -> list[dict]:
        """Chat messages with every placeholder filled from ``values``."""
        missing = sorted(self.fields - set(values))
        if missing:
            raise KeyError(f"{self.path}: no value for placeholder(s) {missing}")
        fill = lambda m: str(values[m.group(1)])
        return [{"role": role, "content": _PLACEHOLDER.sub(fill, text)}
                for role, text in self.messages]

    def response_format(self, structured: bool) -> dict | None:
        """The ``response_format`` request field: a JSON schema when the endpoint supports
        structured output and the answer has one, else None (plain text, parsed by pattern)."""
        if not structured or not self.answer.schema:
            return None
        return {"type": "json_schema",
                "json_schema": {"name": Path(self.path).stem.replace("-", "_"),
                                "schema": dict(self.answer.schema), "strict": True}}


def load_prompt(path, required_fields=()) -> Prompt:
    """Read and check a prompt file; ``required_fields`` must all appear as placeholders."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: prompt file not found")
    data = path.read_bytes()
    spec = parse_yaml(data, path)  # not YAML: the message names the line
    try:
        messages = tuple((m["role"], m["content"]) for m in spec["messages"])
        answer = AnswerFormat.from_spec(spec["answer"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: not a prompt file ({error}); expected `messages` (role, "
                         "content) and an `answer` format") from None
    bad = [role for role, _ in messages if role not in ROLES]
    if bad or not messages:
        raise ValueError(f"{path}: message roles must be in {ROLES}, got {bad or 'no messages'}")
    prompt = Prompt(str(path), messages, answer, spec.get("expected_output_tokens"),
                    hashlib.sha256(data).hexdigest()[:16])
    absent = sorted(set(required_fields) - prompt.fields)
    if absent:
        raise ValueError(f"{path}: the template must use the placeholder(s) "
                         f"{['{' + a + '}' for a in absent]}")
    return prompt
