"""log_to: a chatty library's info lines (mem0 logs every insert) reach the rule's log file, not the console;
an error the project raises prints its one line there and keeps its traceback in the log file."""

from __future__ import annotations

import logging

import pytest

from membench.errors import InputError
from membench.logs import log_to, one_line_errors


def test_file_only_loggers_keep_info_off_the_console(tmp_path, capsys):
    path = tmp_path / "rank.log"
    with log_to(path, file_only=("mem0",)):
        logging.getLogger("mem0.vector_stores.qdrant").info("Inserting 1 vectors")
        logging.getLogger("mem0").warning("fastembed not installed")
        logging.getLogger("mem0x").info("another library")
        logging.getLogger("membench.stages.rank_memory").info("mem0: 3 rows")
    console = capsys.readouterr().err
    assert "Inserting 1 vectors" not in console
    assert all(line in console for line in ("fastembed not installed", "another library", "mem0: 3 rows"))
    logged = path.read_text(encoding="utf-8")
    assert all(line in logged for line in ("Inserting 1 vectors", "fastembed not installed", "mem0: 3 rows"))


def test_own_error_is_one_line_on_the_console_and_a_traceback_in_the_log(tmp_path, capsys):
    path = tmp_path / "parse.log"
    with pytest.raises(SystemExit) as done:
        with log_to(path):
            raise InputError("data/locomo10.json", "expected an integer, got str", "question_id=q3", "category")
    assert done.value.code == 1
    console = capsys.readouterr().err.splitlines()
    line = ("InputError: file data/locomo10.json, record question_id=q3, field 'category': expected an integer, "
            "got str")
    assert len(console) == 1 and console[0].endswith("ERROR membench: " + line)
    logged = path.read_text(encoding="utf-8")
    assert logged.count(line) == 2  # the error line, then the traceback's last line
    assert "Traceback (most recent call last):" in logged and "test_logs.py" in logged


def test_a_bug_keeps_its_traceback_on_the_console_too(tmp_path, capsys):
    path = tmp_path / "score.log"
    with pytest.raises(KeyError):
        with log_to(path):
            {}["missing"]
    assert capsys.readouterr().err.count("\n") == 1  # the error line; Python prints the traceback on exit
    assert "Traceback (most recent call last):" in path.read_text(encoding="utf-8")


def test_snakefile_checks_end_with_the_message_alone():
    with pytest.raises(SystemExit) as done:
        with one_line_errors():
            raise InputError("config", "there is nothing to run", field="datasets")
    assert done.value.code == "membench: file config, field 'datasets': there is nothing to run"
    with pytest.raises(KeyError):
        with one_line_errors():
            {}["a bug"]
