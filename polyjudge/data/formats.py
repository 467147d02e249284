"""File formats that are not tables: spreadsheet workbooks are named, with how to export them.

A workbook has sheets, merged cells and formatted numbers; a run table has one header and rows.
polyjudge reads CSV, Parquet, JSON Lines and JSON only, and says so plainly when given a workbook
(by its suffix or, saved under another name, by its signature) instead of "not UTF-8 text".
"""
from __future__ import annotations

from pathlib import Path

from .errors import InputError

SPREADSHEET_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".xlsb", ".ods", ".numbers")


def spreadsheet_error(path) -> InputError:
    """Excel and other workbooks are not read (a workbook has sheets, merged cells and
    formatted numbers; a table has one header and rows): say how to export one sheet."""
    suffix = Path(path).suffix.lower()
    kind = (f"({suffix})" if suffix in SPREADSHEET_SUFFIXES
            else "(an Excel file, whatever its name)")
    return InputError(path, f"is a spreadsheet workbook {kind}, which polyjudge does not read",
                      "a CSV, Parquet or JSON Lines table: export the sheet as CSV (Excel: File "
                      "> Save As > 'CSV UTF-8 (Comma delimited) (*.csv)'; LibreOffice: Save As "
                      "> 'Text CSV', character set UTF-8; or in Python with openpyxl installed: "
                      "pandas.read_excel(path, sheet_name=0).to_csv('runs.csv', index=False)), "
                      "then point the source at the .csv file")


def is_spreadsheet(path) -> bool:
    """A workbook by its suffix, or an .xlsx / .xls saved under another name (its signature)."""
    path = Path(path)
    if path.suffix.lower() in SPREADSHEET_SUFFIXES:
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError:
        return False
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):  # OLE2: .xls
        return True
    if head.startswith(b"PK\x03\x04"):  # a zip: an .xlsx has its workbook under xl/
        import zipfile
        try:
            with zipfile.ZipFile(path) as archive:
                return any(name.startswith("xl/") for name in archive.namelist())
        except zipfile.BadZipFile:
            return False
    return False
