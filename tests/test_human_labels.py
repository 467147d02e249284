"""The human-label reader: the standard table, several annotators kept apart, and the errors
that name the file, the row and the column."""
import pandas as pd
import pytest

from polyjudge.data.errors import InputError
from polyjudge.data.human_labels import average_annotators, read_human_labels

ITEMS = ["a", "b", "c"]


def write(tmp_path, text, name="labels.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_reads_the_standard_table_with_annotators_apart(tmp_path):
    path = write(tmp_path, "id,lang,y,who,p\na,en,1,x,0.5\na,en,0,y,0.5\nb,de,1,x,1\n")
    labels = read_human_labels(path, items=ITEMS, score_range=[0, 1], columns={
        "item": "id", "language": "lang", "label": "y", "annotator": "who",
        "probability": "p"})
    assert list(labels.columns) == ["item", "language", "label", "annotator", "probability"]
    assert labels["label"].tolist() == [1.0, 0.0, 1.0]
    assert labels["annotator"].tolist() == ["x", "y", "x"]
    mean = average_annotators(labels, "mean")
    assert mean.set_index("item")["label"].to_dict() == {"a": 0.5, "b": 1.0}
    assert mean.set_index("item")["n_annotators"].to_dict() == {"a": 2, "b": 1}
    assert average_annotators(labels, "first").set_index("item")["label"]["a"] == 1.0
    assert average_annotators(labels, "majority").set_index("item")["label"]["a"] == 0.5


def test_majority_takes_the_most_frequent_label(tmp_path):
    labels = pd.DataFrame({"item": ["a"] * 3, "language": ["en"] * 3, "label": [1.0, 0.0, 1.0],
                           "annotator": ["x", "y", "z"]})
    assert average_annotators(labels, "majority")["label"].tolist() == [1.0]


def test_item_from_several_columns_filtered_and_in_every_language(tmp_path):
    path = write(tmp_path, "fw,task,req,rater,sat\nM,t1,0,human,1\nM,t1,0,agent,0\n"
                 "M,t1,1,human,0\n")
    panel = pd.DataFrame({"item": ["M|t1|0", "M|t1|0", "M|t1|1"],
                          "language": ["en", "de", "en"]})
    labels = read_human_labels(path, items=panel, columns={
        "item": ["fw", "task", "req"], "label": "sat"}, where={"rater": "human"}, language="*")
    got = sorted(map(tuple, labels[["item", "language", "label"]].to_numpy().tolist()))
    assert got == [("M|t1|0", "de", 1.0), ("M|t1|0", "en", 1.0), ("M|t1|1", "en", 0.0)]


@pytest.mark.parametrize("text, words", [
    ("item,language,label\na,en,1\nz,en,0\n", ["items the panel lacks", "3"]),
    ("item,language,label\na,en,1\na,en,0\n", ["second label", "2", "3"]),
    ("item,language,label\na,en,1\nb,en,7\n", ["outside the score range [0, 1]", "3"]),
    ("item,language,label\na,en,1\nb,en,yes\n", ["not finite numbers", "3"]),
    ("item,language,label,probability\na,en,1,0.2\nb,en,0,0\n", ["outside (0, 1]", "3"]),
    ("item,language,label,probability\na,en,1,1.5\n", ["outside (0, 1]", "2"]),
    ("item,language,label\na,,1\n", ["empty language", "2"]),
    ("item,label\na,1\n", ["no column(s) ['language']"]),
])
def test_bad_labels_name_the_file_and_row(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as error:
        read_human_labels(path, items=ITEMS, score_range=[0, 1])
    message = str(error.value)
    assert str(path) in message
    for word in words:
        assert word in message, message


def test_many_files_name_file_and_line(tmp_path):
    (tmp_path / "labels").mkdir()
    write(tmp_path, "item,language,label\na,en,1\n", "labels/en.csv")
    write(tmp_path, "item,language,label\nb,de,1\nq,de,0\n", "labels/de.csv")
    with pytest.raises(InputError, match=r"de\.csv:3"):
        read_human_labels(tmp_path / "labels", items=ITEMS)


def test_a_renamed_column_is_named_as_the_user_wrote_it(tmp_path):
    path = write(tmp_path, "item,language,grade\na,en,1\nb,en,9\n")
    with pytest.raises(InputError, match="column 'grade'"):
        read_human_labels(path, columns={"label": "grade"}, score_range=[0, 1])
