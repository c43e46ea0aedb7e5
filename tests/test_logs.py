"""log_to: a chatty library's info lines (mem0 logs every insert) reach the rule's log file, not the console."""

from __future__ import annotations

import logging

from membench.logs import log_to


def test_file_only_loggers_keep_info_off_the_console(tmp_path, capsys):
    path = tmp_path / "rank.log"
    with log_to(path, file_only=("mem0",)):
        logging.getLogger("mem0.vector_stores.qdrant").info("Inserting 1 vectors")
        logging.getLogger("mem0").warning("fastembed not installed")
        logging.getLogger("mem0x").info("another library")
        logging.getLogger("membench.memory.stage").info("mem0: 3 rows")
    console = capsys.readouterr().err
    assert "Inserting 1 vectors" not in console
    assert all(line in console for line in ("fastembed not installed", "another library", "mem0: 3 rows"))
    logged = path.read_text(encoding="utf-8")
    assert all(line in logged for line in ("Inserting 1 vectors", "fastembed not installed", "mem0: 3 rows"))
