"""Publishing a profile run (report/published.py): what is refused, and the wall times it records.

The whole publication of a real run (files, hashes, models that play, a damaged model refused) is tested on the
tiny profile's run in tests/pipeline/test_integration.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from boardrl.experiments.profiles import RUN_STATE
from boardrl.report.published import PublishedError, check_source, publish_profile, wall_times


def finished_run(where: Path, profile: str = "full") -> Path:
    """The files check_source looks at, as a finished run of ``profile`` leaves them."""
    (where / "reports").mkdir(parents=True)
    (where / "reports" / "report.md").write_text("# boardrl: results\n")
    (where / "docs").mkdir()
    (where / "docs" / "headline.json").write_text("{}")
    (where / "results" / "metrics").mkdir(parents=True)
    (where / "params.yaml").write_text(yaml.safe_dump({"profile": profile}))
    return where


def test_a_finished_run_of_the_named_profile_passes(tmp_path):
    check_source(finished_run(tmp_path / "run"), "full")


def test_an_unfinished_run_is_refused_with_how_to_finish_it(tmp_path):
    run = finished_run(tmp_path / "run")
    run.joinpath(*RUN_STATE).parent.mkdir(parents=True)
    run.joinpath(*RUN_STATE).write_text(json.dumps({"profile": "full", "exp_name": "full-x"}))
    with pytest.raises(PublishedError, match=r"has not finished .*rerun `make repro PROFILE=full` to finish it"):
        check_source(run, "full")


@pytest.mark.parametrize("damage, message", [
    (lambda run: (run / "params.yaml").write_text(yaml.safe_dump({"profile": "tiny"})),
     "its params.yaml is profile 'tiny', not 'full'"),
    (lambda run: (run / "reports" / "report.md").unlink(),
     "reports/report.md is missing; the run's report stage has not run"),
    (lambda run: (run / "docs" / "headline.json").unlink(), "docs/headline.json is missing"),
])
def test_a_folder_that_is_not_a_whole_run_of_the_profile_is_refused(tmp_path, damage, message):
    run = finished_run(tmp_path / "run")
    damage(run)
    with pytest.raises(PublishedError, match=message):
        check_source(run, "full")


def test_no_folder_and_the_default_profile_are_refused_in_one_line(tmp_path):
    with pytest.raises(PublishedError, match="no run folder of profile 'full'; run `make repro PROFILE=full`"):
        publish_profile(tmp_path, "full", tmp_path / "nowhere")
    with pytest.raises(PublishedError, match="the default profile's results are the workspace's own"):
        publish_profile(tmp_path, "default")
    assert not (tmp_path / "published").exists()


def test_wall_times_group_stages_by_experiment_and_add_every_seeds_training(tmp_path):
    for seed, seconds in ((0, 100.25), (1, 50.0)):
        summary = tmp_path / "train" / "connect4_dqn" / f"seed-{seed}" / "summary.json"
        summary.parent.mkdir(parents=True)
        summary.write_text(json.dumps({"seconds": 1.0, "training_seconds": seconds}))
    stages = {"train@connect4_dqn": 160.0, "curve@connect4_dqn": 20.04, "evaluate@connect4_dqn": 30.0,
              "download": 1.5, "report": 28.0}
    times = wall_times(stages, tmp_path)
    assert times["connect4_dqn"] == {"train": 160.0, "curve": 20.0, "evaluate": 30.0, "total": 210.0,
                                     "training": 150.2}
    assert times["(pipeline)"] == {"download": 1.5, "report": 28.0, "total": 29.5}
