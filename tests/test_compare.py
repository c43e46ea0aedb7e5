"""`membench compare A B` on summary.json files and results folders: exit 0 when every figure agrees, 1 naming each
figure that does not (by how much, inside the CIs or not), the differences in data, code, config and environment
listed beside, and a clear error for a file that is not a summary."""

from __future__ import annotations

import copy
import json
import shutil

import pandas as pd
import pytest

from membench import cli
from membench.benchmarks.registry import benchmark
from membench.errors import InputError
from membench.report.artifacts import summary_json

PROVENANCE = {"code": {"membench": "0.1.0", "commit": "abc123"}, "data": {"locomo": {"locomo10.json": "79fa87e9"}},
              "config": {"embedding": {"shards": 2, "batch_size": 64}}}
ENVIRONMENT = {"machine": {"cpu": "AMD EPYC", "vendor": "AuthenticAMD", "vector_extensions": ["avx2", "avx512f"]},
               "threads": {"OMP_NUM_THREADS": None}}


def summary_frame() -> pd.DataFrame:
    rows = []
    for adapter, (a, b) in {"bm25": (0.5, 0.6), "dense": (0.4, 0.45)}.items():
        for metric, mean in (("evidence_recall@1", a), ("evidence_recall@10", b)):
            for split in ("all", "tune"):
                rows.append({"dataset": "locomo", "adapter": adapter, "split": split, "group_by": "all",
                             "group": "all", "metric": metric, "mean": mean, "ci_lo": mean - 0.05,
                             "ci_hi": mean + 0.05, "n": 100, "n_skipped": 0, "unit": "conversation"})
    rows.append({**rows[0], "group_by": "question_type", "group": "2 temporal", "mean": 0.3, "ci_lo": 0.2,
                 "ci_hi": 0.4, "n": 20})
    return pd.DataFrame(rows)


def write_folder(folder, frame, provenance=PROVENANCE, environment=ENVIRONMENT):
    folder.mkdir(parents=True)
    frame.to_parquet(folder / "summary.parquet", index=False)
    (folder / "summary.json").write_text(summary_json(frame, {"locomo": benchmark("locomo")}, None, None, None, provenance,
                                                      environment), encoding="utf-8")
    return folder


def compare(capsys, *args: str) -> tuple[int, str]:
    status = cli.main(["compare", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_identical_runs_exit_0(tmp_path, capsys):
    a = write_folder(tmp_path / "a", summary_frame())
    b = write_folder(tmp_path / "b", summary_frame())
    status, out = compare(capsys, a, b)
    assert status == 0
    assert out.splitlines()[2:] == ["figures: 0 of 9 differ", "data: the same", "code: the same", "config: the same",
                                    "environment: the same",
                                    "run and score files: 0 byte-identical, 0 differ, 0 missing in B"]
    status, out = compare(capsys, a / "summary.json", b / "summary.json")  # headline figures: split x metric
    assert status == 0 and "figures: 0 of 8 differ" in out


def test_a_changed_figure_is_named_with_its_change_and_the_cis(tmp_path, capsys):
    a = write_folder(tmp_path / "a", summary_frame())
    changed = summary_frame()
    changed.loc[2, "mean"] = 0.52  # bm25 all evidence_recall@10: 0.6 -> 0.52, outside its CI [0.55, 0.65]
    changed.loc[8, ["mean", "n"]] = [0.31, 21]  # the group row: inside both CIs, but n differs
    b = write_folder(tmp_path / "b", changed)
    status, out = compare(capsys, a, b)
    assert status == 1
    lines = out.splitlines()
    assert lines[2] == "figures: 2 of 9 differ"
    assert lines[3] == ("  locomo | bm25 | all | evidence_recall@10: mean 0.600000 -> 0.520000 (-0.080000), "
                        "CI [0.550000, 0.650000] -> [0.550000, 0.650000]; outside a CI")
    assert lines[4] == ("  locomo | bm25 | all | question_type=2 temporal | evidence_recall@1: mean 0.300000 -> "
                        "0.310000 (+0.010000), CI [0.200000, 0.400000] -> [0.200000, 0.400000], n 20 -> 21; "
                        "inside both CIs")
    status, out = compare(capsys, "--tolerance", "0.1", a, b)
    assert status == 1 and "figures: 1 of 9 differ beyond 0.1" in out  # n must still be equal
    status, out = compare(capsys, a / "summary.json", b / "summary.json")
    assert status == 1 and "figures: 1 of 8 differ" in out  # summary.json holds only the headline figure


def test_a_figure_on_one_side_only_differs(tmp_path, capsys):
    a = write_folder(tmp_path / "a", summary_frame())
    b = write_folder(tmp_path / "b", summary_frame().iloc[1:])
    status, out = compare(capsys, a, b)
    assert status == 1 and "  locomo | bm25 | all | evidence_recall@1: only in A" in out


def test_data_code_config_and_environment_differences_are_listed_not_failed(tmp_path, capsys):
    a = write_folder(tmp_path / "a", summary_frame())
    provenance, environment = copy.deepcopy(PROVENANCE), copy.deepcopy(ENVIRONMENT)
    provenance["data"]["locomo"]["locomo10.json"] = "0000"
    provenance["code"]["commit"] = "def456"
    provenance["config"]["embedding"]["shards"] = 3
    environment["machine"].update(cpu="Intel(R) Xeon(R)", vector_extensions=["avx2"])
    environment["threads"]["OMP_NUM_THREADS"] = "2"
    b = write_folder(tmp_path / "b", summary_frame(), provenance, environment)
    status, out = compare(capsys, a, b)
    assert status == 0  # the figures agree: the rest is what a reader needs to know, not a failure
    for line in ('data: 1 differ', '  data.locomo.locomo10.json: "79fa87e9" vs "0000"',
                 '  code.commit: "abc123" vs "def456"', '  config.embedding.shards: 2 vs 3',
                 'environment: 3 differ', '  environment.machine.cpu: "AMD EPYC" vs "Intel(R) Xeon(R)"',
                 '  environment.machine.vector_extensions: ["avx2", "avx512f"] vs ["avx2"]',
                 '  environment.threads.OMP_NUM_THREADS: null vs "2"'):
        assert line in out.splitlines(), line
    write_folder(tmp_path / "old", summary_frame(), None, None)  # written before provenance was recorded
    status, out = compare(capsys, a, tmp_path / "old")
    assert status == 0 and "environment: not recorded in B" in out


def test_run_files_of_two_folders_are_compared_byte_for_byte(tmp_path, capsys):
    a = write_folder(tmp_path / "a", summary_frame())
    run = pd.DataFrame({"question_id": ["q1", "q1"], "rank": [1, 2], "item_id": ["d1", "d2"], "score": [0.9, 0.8],
                        "granularity": ["turn", "turn"]})
    (a / "locomo" / "runs").mkdir(parents=True)
    run.to_parquet(a / "locomo" / "runs" / "dense.parquet", index=False)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    run.assign(score=[0.9, 0.85]).to_parquet(b / "locomo" / "runs" / "dense.parquet", index=False)
    status, out = compare(capsys, a, b)
    assert status == 0 and "run and score files: 0 byte-identical, 1 differ, 0 missing in B" in out
    assert "  differs  locomo/runs/dense.parquet  ranking identical, max |score change| 5.00e-02" in out


def test_bad_input_names_the_file(tmp_path, capsys):
    a = write_folder(tmp_path / "a", summary_frame())
    broken = tmp_path / "broken.json"
    broken.write_text('{"datasets": {"locomo": {"adapters": {"bm25": {"all": {"hit@1": {"mean": 1}}}}}}}')
    status, out = compare(capsys, a / "summary.json", broken)
    assert status == 2 and f"file {broken}, field 'datasets': not a membench summary.json: no figure at 'ci_lo'" in out
    status, out = compare(capsys, a, tmp_path / "nowhere")
    assert status == 2 and f"file {tmp_path / 'nowhere'}: no such file: give a results folder or a summary.json" in out
    (tmp_path / "text.json").write_text("not json")
    with pytest.raises(InputError, match="text.json: not JSON"):
        from membench.analysis.compare import load_side

        load_side(tmp_path / "text.json")
    assert json.loads((a / "summary.json").read_text())["environment"] == ENVIRONMENT
