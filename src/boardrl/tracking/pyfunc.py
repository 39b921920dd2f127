"""A trained agent as an MLflow model (``mlflow.pyfunc``), so the UI lists it under the run's logged models.

Why a pyfunc: a tabular Q agent is no torch or sklearn model, but it is a function from positions to moves.
``AgentModel.predict`` takes int64 state rows (a DataFrame or array with the game's state fields as columns) and
returns the agent's moves.  The model is logged *from code* (``agent_model_code.py``, MLflow's models-from-code),
not as a CloudPickle of an object, so loading it runs no pickled code; the model directory that ``agent.save``
wrote travels as the model's artifact and ``boardrl.learn.load_agent`` reads it back.  The train stage logs it
through ``mlflow_runs.log_agent_model`` (done by ``ops.log_agent_model`` in the tracking service).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import mlflow.pyfunc
import numpy as np

CODE = Path(__file__).with_name("agent_model_code.py")
# MLflow nags about type hints on predict; its hint-based validation wants list[...] inputs, not state arrays.
warnings.filterwarnings("ignore", message=".*type hints to the `predict` method.*", category=UserWarning)


class AgentModel(mlflow.pyfunc.PythonModel):
    """``predict(state rows) -> moves`` of the agent saved in the ``model_dir`` artifact."""

    def load_context(self, context):
        from boardrl.games import make_game
        from boardrl.learn import load_agent

        self.agent = load_agent(make_game(context.model_config["game"]), None, context.artifacts["model_dir"])

    def predict(self, context, model_input, params=None):
        rows = np.ascontiguousarray(np.asarray(model_input, dtype=np.int64))
        seed = int((params or {}).get("seed", 0))
        return self.agent.act_batch(rows, np.random.default_rng(seed))

