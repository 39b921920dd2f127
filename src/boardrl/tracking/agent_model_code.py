"""MLflow models-from-code entry: the file MLflow copies into a logged agent model (see tracking/pyfunc.py)."""

import mlflow

from boardrl.tracking.pyfunc import AgentModel

mlflow.models.set_model(AgentModel())
