"""Calling LLM judges: endpoints, prompt files, answer parsing, the call cache, the async runner
and provider batch jobs, the cost plan, and the Judge-LS and pointwise collections built on them.

Arrows run one way: ``protocols`` uses the runner and produces tables in the formats the
analyses read (``polyjudge.analyses.judge_ls``, ``polyjudge.data.io``); nothing in the analyses
knows an endpoint exists. Only :mod:`.runner`, :mod:`.batch` and :mod:`.sending` await anything;
the rest is pure and tested without a server.
"""
from .cache import CallCache, call_key
from .endpoints import Endpoint, endpoints_from_config
from .parse import AnswerFormat, parse_answer
from .plan import plan_table, plan_totals, readable_cost
from .prompts import Prompt, load_prompt
from .records import CallResult
from .runner import Budget, Call, RetryPolicy, Stopped, backoff_delay
from .sending import run_calls

__all__ = ["AnswerFormat", "Budget", "Call", "CallCache", "CallResult", "Endpoint", "Prompt",
           "RetryPolicy", "Stopped", "backoff_delay", "call_key", "endpoints_from_config",
           "load_prompt", "parse_answer", "plan_table", "plan_totals", "readable_cost",
           "run_calls"]
