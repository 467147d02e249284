"""The collections as lists of calls, and the calls' results as the tables the analyses read.

Judge-LS (pairwise): every item is translated into each target condition (instruction and both
outputs, one call per field), and every judge judges every item in the reference and each target
condition in both answer orders, plus tie probes: the gold output in the reference language
against its translation, both orders. Pointwise (M-RewardBench style): every item x language x
judge, chosen and rejected scored separately on a rubric.

Item tables (standard column names; a ``columns`` mapping renames a user's own):

* pairwise: subset, item_index, input, output_1, output_2, label (1 or 2) - LLMBar's layout;
* pointwise: subset, item_index, language, input, chosen, rejected.

Pure: building calls, sharding and tabulating need no server (the runner makes the calls).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from polyjudge.data.errors import InputError, file_rows
from polyjudge.data.io import IDENTIFIERS, read_table, rename_columns

from .cache import call_key
from .endpoints import Endpoint
from .plan import estimate_tokens
from .prompts import Prompt
from .records import CallResult
from .runner import Call

FIELDS = ("input", "output_1", "output_2")
PAIRWISE_ITEM_COLUMNS = ["subset", "item_index", "input", "output_1", "output_2", "label"]
POINTWISE_ITEM_COLUMNS = ["subset", "item_index", "language", "input", "chosen", "rejected"]
NO_INPUT = "no_input"  # a judgment not made because its translated text is missing
TRANSLATE, PAIRWISE, POINTWISE = "translate", "judge_pairwise", "judge_pointwise"
# placeholders each prompt kind must use
PROMPT_FIELDS = {"pairwise": ("instruction", "output_a", "output_b"),
                 "full": ("text", "language"), "code_switched": ("text", "language"),
                 "pointwise": ("instruction", "response")}
RESULT_COLUMNS = ["status", "value", "raw", "truncated", "finish_reason", "input_tokens",
                  "output_tokens", "cost", "latency", "attempts", "cached", "batch", "error",
                  "key", "endpoint", "model", "served_model", "prompt"]


# --- items -------------------------------------------------------------------------------------
# how to get the item tables the shipped configs name but the repository does not hold (their
# texts are the benchmarks' own), and the stand-in that plans without them, for the message when
# one is absent
ITEM_SOURCES = {
    "mrewardbench/items.parquet": (
        "the M-RewardBench texts are not shipped: take them from M-RewardBench on Hugging Face "
        "(subsets alpacaeval-easy and alpacaeval-hard, in the panel's seven languages; "
        "item_index 0-804 easy and 805-1499 hard, as in the published panel), or point "
        "`collect.items` at an item table of your own in the same layout\n    to plan and "
        "forecast without them (a fresh clone), add the clone's stand-in config last: "
        "snakemake plan --cores 2 --configfile config/collections/mrewardbench_paper.yaml "
        "config/collections/mrewardbench_stop.yaml config/collections/mrewardbench_standin.yaml "
        "(LLMBar texts of the same shape; its max_cost 0 lets nothing be collected)"),
}


def missing_items_problem(panel: str, kind: str, items: str, path) -> str | None:
    """The start-up message of a collection whose item table is absent (None: it is there):
    the file to provide, its format and columns, and how to get it."""
    path = Path(path)
    if path.is_file():
        return None
    pointwise = kind == "preference_margins"
    wanted = POINTWISE_ITEM_COLUMNS if pointwise else PAIRWISE_ITEM_COLUMNS
    rows = "one row per item and language" if pointwise else \
        "one row per item, label 1 or 2 naming the better output"
    how = ITEM_SOURCES.get(Path(items).as_posix(),
                           "make it from your items (docs/judges.md, the item table)")
    return (f"  panel '{panel}': the item table `collect.items: {items}` is not there (looked "
            f"for {path.resolve()})\n    provide a CSV or Parquet file with columns {wanted}, "
            f"{rows} (other column names: rename them with `collect.columns`)\n    {how}")


def read_items(path, kind: str, columns: dict | None = None, n_items: int | None = None
               ) -> pd.DataFrame:
    """A pairwise or pointwise item table, checked, keys as strings, first ``n_items`` kept
    (pairwise: first n rows; pointwise: first n items of each language, in file order)."""
    wanted = PAIRWISE_ITEM_COLUMNS if kind == "pairwise" else POINTWISE_ITEM_COLUMNS
    # a CSV's texts as written: an answer "5" or "22.5" is not the number 5 or 22.5 (the prompt
    # would show "5.0"; a column of such answers would be read as floats)
    as_text = tuple((columns or {}).get(c, c) for c in wanted)
    csv = Path(path).suffix.lower() != ".parquet"
    frame = rename_columns(read_table(path, text=IDENTIFIERS + as_text if csv else IDENTIFIERS),
                           columns)
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError(path, f"missing column(s) {missing}; it has {list(frame.columns)}",
                         f"an item table with columns {wanted} (rename yours with the "
                         "collection's `columns` mapping)")
    frame = frame[wanted].reset_index(drop=True)
    keys = ["subset", "item_index"] + (["language"] if kind == "pointwise" else [])
    for key in keys:
        frame[key] = frame[key].astype(str).str.strip()
    texts = [c for c in wanted if c not in keys and c != "label"]
    empty = frame[texts].isna().any(axis=1) | (frame[texts].astype(str).apply(
        lambda s: s.str.strip()) == "").any(axis=1)
    if empty.any():
        raise InputError(path, f"{int(empty.sum())} item(s) with an empty text",
                         f"text in every one of {texts}", file_rows(frame, empty))
    if kind == "pairwise":
        label = pd.to_numeric(frame["label"], errors="coerce")
        bad = ~label.isin([1, 2])
        if bad.any():
            raise InputError(path, f"{int(bad.sum())} label(s) not 1 or 2",
                             "label 1 or 2 (the better output)", file_rows(frame, bad))
        frame["label"] = label.astype(int).astype(str)
    repeated = frame.duplicated(keys, keep=False)
    if repeated.any():
        raise InputError(path, f"{int(repeated.sum())} rows repeat an item",
                         f"one row per {tuple(keys)}", file_rows(frame, repeated))
    if n_items is not None:
        if kind == "pairwise":
            frame = frame.head(n_items)
        else:
            frame = frame[frame.groupby("language", sort=False).cumcount() < n_items]
    return frame.reset_index(drop=True)


def shard_items(items: pd.DataFrame, shards: int, shard: int) -> pd.DataFrame:
    """Shard ``shard`` of ``shards`` contiguous blocks of items (all languages of an item in one
    block); deterministic, so a rerun builds the same calls."""
    ids = pd.unique(items["subset"] + "\x1f" + items["item_index"])
    block = set(np.array_split(ids, shards)[shard])
    keys = items["subset"] + "\x1f" + items["item_index"]
    return items[keys.isin(block)].reset_index(drop=True)


def reference_texts(items: pd.DataFrame) -> pd.DataFrame:
    """The untranslated fields as a text table (item, subset, field, text) for the audit."""
    long = items.melt(id_vars=["item_index", "subset"], value_vars=list(FIELDS), var_name="field",
                      value_name="text")
    long = long.rename(columns={"item_index": "item"})[["item", "subset", "field", "text"]]
    order = {f: i for i, f in enumerate(FIELDS)}
    return long.assign(_f=long["field"].map(order), _i=long.index % len(items)).sort_values(
        ["_i", "_f"]).drop(columns=["_f", "_i"]).reset_index(drop=True)


# --- calls ---------------------------------------------------------------------------------------
def _call(endpoint: Endpoint, prompt: Prompt, values: dict, meta: dict, expected: int | None,
          chars_per_token: float) -> Call:
    messages = prompt.render(values)
    response_format = prompt.response_format(endpoint.structured_output)
    out = expected if expected is not None else prompt.expected_output_tokens
    if out is None:
        out = estimate_tokens(values.get("text", ""), chars_per_token)
    return Call(call_key(endpoint.identity(), messages, response_format, 0), messages,
                response_format, {**meta, "endpoint": endpoint.name, "prompt": prompt.digest,
                                  "expected_output_tokens": int(out)})


def translation_calls(items: pd.DataFrame, condition: str, language: str, endpoint: Endpoint,
                      prompt: Prompt, chars_per_token: float = 4.0) -> list[Call]:
    """One call per item x field: translate (or code-switch) the text into ``language``."""
    return [_call(endpoint, prompt, {"text": row[field], "language": language, "field": field},
                  {"stage": TRANSLATE, "item": row["item_index"], "subset": row["subset"],
                   "condition": condition, "field": field}, None, chars_per_token)
            for row in items.to_dict(orient="records") for field in FIELDS]


def pairwise_calls(items: pd.DataFrame, texts: dict[str, pd.DataFrame], reference: str,
                   probes: list[str], endpoint: Endpoint, prompt: Prompt,
                   chars_per_token: float = 4.0) -> list[Call]:
    """Every item in the reference and each condition of ``texts`` (condition -> text table) in
    both orders, and a tie probe (gold output vs its translation in each ``probes`` condition,
    instruction in the reference language) in both orders.

    An item whose translated fields are missing gets calls with ``messages`` None (status
    ``no_input`` in the tables; never sent)."""
    lookup = {c: dict(zip(zip(t["item"].astype(str), t["subset"].astype(str), t["field"]),
                          t["text"])) for c, t in texts.items()}
    calls = []
    for row in items.to_dict(orient="records"):
        item, subset, gold = row["item_index"], row["subset"], row["label"]
        base = {"stage": PAIRWISE, "item": item, "subset": subset}
        versions = {reference: {f: row[f] for f in FIELDS}}
        for condition, table in lookup.items():
            versions[condition] = {f: table.get((item, subset, f)) for f in FIELDS}
        for condition, text in versions.items():
            for order in ("original", "swapped"):
                a, b = (("output_1", "output_2") if order == "original"
                        else ("output_2", "output_1"))
                meta = {**base, "condition": condition, "order": order, "gold": gold}
                calls.append(_pairwise(endpoint, prompt, text["input"], text[a], text[b], meta,
                                       chars_per_token))
        for condition in probes:
            gold_field = f"output_{gold}"
            english, translated = row[gold_field], versions[condition][gold_field]
            for order in ("original", "swapped"):
                first, second = (english, translated) if order == "original" else (translated,
                                                                                 english)
                meta = {**base, "condition": "tie_probe", "order": order, "gold": "Tie",
                        "probe_language_1": reference, "probe_language_2": condition}
                calls.append(_pairwise(endpoint, prompt, row["input"], first, second, meta,
                                       chars_per_token))
    return calls


def _pairwise(endpoint, prompt, instruction, output_a, output_b, meta, chars_per_token) -> Call:
    values = {"instruction": instruction, "output_a": output_a, "output_b": output_b}
    if any(not isinstance(v, str) or not v.strip() for v in values.values()):
        return Call(f"{NO_INPUT}:{meta['item']}:{meta['condition']}:{meta['order']}", None, None,
                    {**meta, "endpoint": endpoint.name, "prompt": prompt.digest,
                     "expected_output_tokens": 0})
    return _call(endpoint, prompt, values, meta, None, chars_per_token)


def pointwise_calls(items: pd.DataFrame, endpoint: Endpoint, prompt: Prompt,
                    chars_per_token: float = 4.0) -> list[Call]:
    """Chosen and rejected response of every item x language, each scored on its own."""
    return [_call(endpoint, prompt, {"instruction": row["input"], "response": row[side],
                                     "language": row["language"]},
                  {"stage": POINTWISE, "item": row["item_index"], "subset": row["subset"],
                   "language": row["language"], "side": side}, None, chars_per_token)
            for row in items.to_dict(orient="records") for side in ("chosen", "rejected")]


def sendable(calls: list[Call]) -> list[Call]:
    """The calls to send: real requests, each key once."""
    return list({c.key: c for c in calls if c.messages is not None}.values())


# --- tables --------------------------------------------------------------------------------------
def calls_table(calls: list[Call], results: dict[str, CallResult]
                ) -> pd.DataFrame:
    """One row per call: its meta and its result (``results``: key -> result; a call without
    messages is ``no_input``). Raw replies are kept, so tables can be re-parsed."""
    rows = []
    for call in calls:
        result = results.get(call.key) if call.messages is not None else None
        meta = {k: v for k, v in call.meta.items() if k != "expected_output_tokens"}
        if result is None:
            result = CallResult(call.key, call.meta["endpoint"], NO_INPUT)
        row = {**meta, **{c: getattr(result, c) for c in RESULT_COLUMNS if c != "prompt"}}
        rows.append(row)
    table = pd.DataFrame(rows, columns=None if rows else ["stage", *RESULT_COLUMNS])
    for column in ("value", "raw", "error", "finish_reason", "model", "served_model", "batch"):
        if column in table:
            table[column] = table[column].astype(object).where(table[column].notna(), None)
            table[column] = table[column].map(lambda v: None if v is None else str(v))
    for column in ("truncated", "cached"):
        table[column] = table[column].fillna(False).astype(bool)
    for column in ("input_tokens", "output_tokens", "attempts"):
        table[column] = pd.to_numeric(table[column]).fillna(0).astype(int)
    for column in ("cost", "latency"):
        table[column] = pd.to_numeric(table[column]).fillna(0.0).astype(float)
    return table


def translated_texts(table: pd.DataFrame, condition: str) -> pd.DataFrame:
    """Text table (item, subset, field, text, status, truncated) of one condition's translation
    calls; the text is empty unless the reply parsed and was not cut off (so the audit flags it
    and no judgment uses it)."""
    rows = table[(table["stage"] == TRANSLATE) & (table["condition"] == condition)]
    usable = (rows["status"] == "ok") & ~rows["truncated"]
    return pd.DataFrame({"item": rows["item"].astype(str), "subset": rows["subset"].astype(str),
                         "field": rows["field"], "text": rows["value"].where(usable, ""),
                         "status": rows["status"], "truncated": rows["truncated"]}
                        ).reset_index(drop=True)


def verdict_table(table: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The ``pairwise_verdicts`` table of one judge's pairwise calls: item, subset, judge,
    condition, order, verdict (A / B / Tie; empty unless parsed), gold, probe languages, plus
    status, truncated, raw, tokens and cost. Failed and unparseable calls stay as rows with an
    empty verdict: the Judge-LS tables count them as invalid, never as a tie or a wrong answer."""
    rows = table[table["stage"] == PAIRWISE].reset_index(drop=True)
    verdict = rows["value"].where(rows["status"] == "ok", "").fillna("")
    out = pd.DataFrame({"item": rows["item"].astype(str), "subset": rows["subset"].astype(str),
                        "judge": judge, "condition": rows["condition"], "order": rows["order"],
                        "verdict": verdict, "gold": rows["gold"].astype(str)})
    for column in ("probe_language_1", "probe_language_2"):
        out[column] = rows[column] if column in rows else None
    extra = ["status", "truncated", "raw", "input_tokens", "output_tokens", "cost", "cached",
             "prompt", "model"]
    return pd.concat([out, rows[extra]], axis=1)


def score_table(table: pd.DataFrame) -> pd.DataFrame:
    """One judge's pointwise calls in the M-RewardBench layout the ``preference_margins`` ingest
    reads: item_numeric_id, subset, language, chosen_score, rejected_score (empty unless the
    score parsed), chosen_status, rejected_status, chosen_truncated, rejected_truncated."""
    rows = table[table["stage"] == POINTWISE]
    score = pd.to_numeric(rows["value"].where(rows["status"] == "ok"), errors="coerce")
    wide = rows.assign(score=score).pivot(index=["item", "subset", "language"], columns="side",
                                          values=["score", "status", "truncated"])
    order = rows[["item", "subset", "language"]].drop_duplicates()
    wide = wide.reindex(pd.MultiIndex.from_frame(order))
    return pd.DataFrame({"item_numeric_id": order["item"].to_numpy(),
                         "subset": order["subset"].to_numpy(),
                         "language": order["language"].to_numpy(),
                         "chosen_score": wide[("score", "chosen")].to_numpy(float),
                         "rejected_score": wide[("score", "rejected")].to_numpy(float),
                         "chosen_status": wide[("status", "chosen")].to_numpy(),
                         "rejected_status": wide[("status", "rejected")].to_numpy(),
                         "chosen_truncated": wide[("truncated", "chosen")].to_numpy(bool),
                         "rejected_truncated": wide[("truncated", "rejected")].to_numpy(bool)})


STATUS_COLUMNS = ["stage", "endpoint", "condition", "n_calls", "n_ok", "n_parse_failure",
                  "n_failed", "n_no_input", "n_truncated", "failed_errors"]
USAGE_COLUMNS = ["endpoint", "model", "stage", "calls", "calls_made_this_run", "input_tokens",
                 "output_tokens", "cost_usd", "design"]


def failed_errors(errors: pd.Series) -> str:
    """Failed calls' errors, each once with its count, most frequent first, a batch's id left
    out so the same error in several batches is one: ``3 x 400 invalid_request bad; 1 x
    RateLimitError 429 (not completed in 6 batches)``."""
    counts = errors.fillna("").astype(str).str.replace(r"^batch \S+: ", "", regex=True
                                                       ).value_counts()
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "; ".join(f"{n} x {error}" for error, n in ranked)


def status_table(table: pd.DataFrame) -> pd.DataFrame:
    """Call outcomes per stage x endpoint x condition (language for pointwise calls), with the
    failed calls' errors (:func:`failed_errors`)."""
    condition = (table["condition"] if "condition" in table
                 else pd.Series(np.nan, table.index, dtype=object))
    if "language" in table:
        condition = condition.fillna(table["language"])
    data = table.assign(condition=condition.fillna(""))
    flags = {f"n_{s}": data["status"] == s for s in ("ok", "parse_failure", "failed", NO_INPUT)}
    data = data.assign(**flags, n_truncated=data["truncated"],
                       failed_error=data["error"].where(flags["n_failed"]))
    out = (data.groupby(["stage", "endpoint", "condition"], sort=False)
           .agg(n_calls=("status", "size"), **{k: (k, "sum") for k in [*flags, "n_truncated"]},
                failed_errors=("failed_error", lambda e: failed_errors(e.dropna())))
           .reset_index())
    return out[STATUS_COLUMNS]


def usage_table(table: pd.DataFrame, design: str = "full design") -> pd.DataFrame:
    """Actual usage and cost per endpoint x stage (each successful request once) and a total;
    ``design`` says whether every item was called or the collection stopped adaptively."""
    done = table[table["status"].isin(["ok", "parse_failure"])].drop_duplicates("key")
    out = (done.assign(new=~done["cached"]).groupby(["endpoint", "stage"], sort=False)
           .agg(model=("model", "first"), calls=("key", "size"),
                calls_made_this_run=("new", "sum"), input_tokens=("input_tokens", "sum"),
                output_tokens=("output_tokens", "sum"), cost_usd=("cost", "sum"))
           .reset_index())
    total = {"endpoint": "total", "model": "", "stage": "all",
             **{c: out[c].sum() for c in USAGE_COLUMNS[3:-1]}}
    usage = pd.concat([out, pd.DataFrame([total])], ignore_index=True)
    return usage.assign(design=design)[USAGE_COLUMNS]
