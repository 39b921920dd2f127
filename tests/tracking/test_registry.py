"""tracking/registry.py without a store: which specs name a registered model.  Registering, fetching, checking and
playing against a real MLflow store: tests/pipeline/test_integration.py."""

from __future__ import annotations

import pytest

from boardrl.tracking.registry import RegistryError, resolve_spec, split_alias


def test_an_alias_target_is_name_at_alias_and_anything_else_is_left_alone(tmp_path):
    assert split_alias("connect4@champion") == ("connect4", "champion")
    assert split_alias("connect4_alphazero") is None
    odd = tmp_path / "models@v1"  # a model directory whose name holds an @ is still a directory
    odd.mkdir()
    assert split_alias(str(odd)) is None
    for bad in ("@champion", "connect4@"):
        with pytest.raises(RegistryError, match="write <registered model>@<alias>"):
            split_alias(bad)


def test_specs_without_an_alias_pass_through_without_touching_mlflow(tmp_path):
    for spec in ("random", "mcts:simulations=200", "model:connect4_alphazero,seed=1,simulations=400"):
        assert resolve_spec(spec, tmp_path) == spec
    assert not (tmp_path / "mlflow.db").exists()


def test_a_seed_option_with_an_alias_is_refused_before_mlflow_is_asked(tmp_path):
    with pytest.raises(RegistryError, match="seed= names a seed of an experiment"):
        resolve_spec("model:connect4@champion,seed=1", tmp_path)


def test_the_browser_page_may_load_a_registered_alias_but_not_a_path_with_an_at_sign(tmp_path):
    from boardrl.web.players import ModelOutsideError, check_model_place

    check_model_place("model:connect4@champion,simulations=400", [tmp_path])  # the project's own store
    with pytest.raises(ModelOutsideError, match="the server loads models only from"):
        check_model_place("model:/elsewhere/connect4@champion", [tmp_path])
