"""Endpoints: an OpenAI-compatible server, a model, its generation settings, limits and prices.

Settings of one endpoint (config ``endpoints.<name>``): ``base_url``, ``model``, ``api_key_env``
(the NAME of an environment variable holding the key, never the key), ``temperature``,
``max_tokens`` (sent as ``max_tokens_field``: ``max_completion_tokens`` for OpenAI's reasoning
models), ``seed`` (null where unsupported), ``structured_output`` (send the answer's JSON
schema as ``response_format``), ``max_concurrency``, ``requests_per_minute`` (null: no limit),
``timeout`` (seconds) and the prices ``price_input_per_million`` / ``price_output_per_million``
(USD per million tokens).

Batch jobs (:mod:`polyjudge.judges.batch`): ``batch: true`` sends the calls as provider batch jobs
in the OpenAI Batch protocol. They cost ``batch_price_factor`` of the list price (0.5 at OpenAI),
or ``batch_price_input_per_million`` / ``batch_price_output_per_million`` where given (these
prices are also the plan's and the forecast's batch costs). ``batch_completion_window`` is sent
with each batch; its status is polled every ``batch_poll_interval`` seconds, growing by half each
poll up to ``batch_poll_max``; a batch holds at most ``batch_max_requests`` requests; requests a
batch did not complete (expired, cancelled, or a transient error such as 429 or 500) go into the
next batch, or with ``batch_leftovers: sync`` are sent one by one.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields

NO_KEY = "no-key"  # sent when api_key_env is null (local vLLM / Ollama servers accept anything)


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = 0.0
    max_tokens: int = 1024
    max_tokens_field: str = "max_tokens"
    seed: int | None = None
    structured_output: bool = False
    max_concurrency: int = 8
    requests_per_minute: float | None = None
    timeout: float = 120.0
    price_input_per_million: float = 0.0
    price_output_per_million: float = 0.0
    batch_price_factor: float = 0.5
    batch: bool = False
    batch_price_input_per_million: float | None = None
    batch_price_output_per_million: float | None = None
    batch_completion_window: str = "24h"
    batch_poll_interval: float = 30.0
    batch_poll_max: float = 600.0
    batch_max_requests: int = 50000
    batch_leftovers: str = "batch"

    @classmethod
    def from_config(cls, name: str, settings: dict) -> "Endpoint":
        known = {f.name for f in fields(cls)} - {"name"}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"endpoint {name!r}: unknown setting(s) {unknown}")
        if settings.get("max_tokens_field", "max_tokens") not in ("max_tokens",
                                                                   "max_completion_tokens"):
            raise ValueError(f"endpoint {name!r}: max_tokens_field must be max_tokens or "
                             "max_completion_tokens")
        if settings.get("batch_leftovers", "batch") not in ("batch", "sync"):
            raise ValueError(f"endpoint {name!r}: batch_leftovers must be batch or sync")
        return cls(name=name, **settings)

    def generation(self) -> dict:
        """Generation settings sent with every request (and hashed into the cache key)."""
        settings = {self.max_tokens_field: self.max_tokens}
        if self.temperature is not None:
            settings["temperature"] = self.temperature
        if self.seed is not None:
            settings["seed"] = self.seed
        return settings

    def identity(self) -> dict:
        """What decides a reply besides the messages: server, model, generation settings.
        Limits, prices and the key's variable name are left out (they do not change replies)."""
        return {"base_url": self.base_url.rstrip("/"), "model": self.model, **self.generation()}

    def cost(self, input_tokens, output_tokens, batch: bool = False):
        """USD for the given token counts (scalars or arrays), at batch prices with ``batch``:
        the batch prices where given, else ``batch_price_factor`` of the list price."""
        p_in, p_out = self.price_input_per_million, self.price_output_per_million
        if batch:
            p_in = (self.batch_price_input_per_million
                    if self.batch_price_input_per_million is not None
                    else p_in * self.batch_price_factor)
            p_out = (self.batch_price_output_per_million
                     if self.batch_price_output_per_million is not None
                     else p_out * self.batch_price_factor)
        return (input_tokens * p_in + output_tokens * p_out) / 1e6

    def api_key(self) -> str:
        """The key from the environment; the error names the variable, never a value."""
        if self.api_key_env is None:
            return NO_KEY
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ValueError(f"endpoint {self.name!r}: environment variable {self.api_key_env} "
                             "is not set (export it before running; keys never go in the config)")
        return key


def endpoints_from_config(config: dict, names) -> dict[str, Endpoint]:
    """The named endpoints of ``config['endpoints']``; an unknown name is a clear error."""
    available = config.get("endpoints") or {}
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ValueError(f"endpoint(s) {unknown} are not defined under `endpoints` "
                         f"(defined: {sorted(available)})")
    return {n: Endpoint.from_config(n, available[n]) for n in names}
