"""Small item tables for the collection tests, carrying the markers tests/judge_server.py reads."""
import numpy as np
import pandas as pd


def pairwise_items(n: int, seed: int = 0) -> pd.DataFrame:
    """LLMBar-layout items: gold output marked <<good|i>>, the other <<bad|j>>, numbers kept."""
    rng = np.random.default_rng(seed)
    label = rng.integers(1, 3, size=n)
    subsets = np.where(np.arange(n) % 2 == 0, "Natural", "Adversarial")
    rows = []
    for i in range(n):
        item = f"{subsets[i]}-{i}"
        texts = {}
        for index in (1, 2):
            quality = "good" if label[i] == index else "bad"
            texts[f"output_{index}"] = (f"<<{quality}|{index}>> The answer lists {i + 3} steps, "
                                        f"costs {10 * index + i} dollars and takes {index + 1} "
                                        "days.")
        rows.append({"subset": subsets[i], "item_index": i,
                     "input": f"<<item:{item}>> Plan a trip of {i + 2} days for 4 people.",
                     **texts, "label": int(label[i])})
    return pd.DataFrame(rows)


def pointwise_items(n: int, languages) -> pd.DataFrame:
    """M-RewardBench-layout items in every language: chosen <<good|1>>, rejected <<bad|2>>."""
    rows = [{"subset": "easy" if i < n // 2 else "hard", "item_index": i, "language": language,
             "input": f"<<item:{i}>> <<lang:{language}>> Summarise text {i}.",
             "chosen": f"<<good|1>> A faithful summary of text {i}.",
             "rejected": f"<<bad|2>> An unrelated remark {i}."}
            for language in languages for i in range(n)]
    return pd.DataFrame(rows)
