"""Tracking what the pipeline produced and where it came from.

``io``: atomic file and directory writes (``atomic_write_text/bytes/json/tsv``, ``atomic_directory``).
``provenance``: git commit, params hash, DVC experiment name.
``mlflow_runs``: the project's MLflow store (sqlite + mlartifacts/), one tagged run per stage execution.
``curve``: learning-curve rows, the resume-safe progress file, the curve TSV.
``figures``: the figures logged with each MLflow run.
"""
