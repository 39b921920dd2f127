"""Experiments: the code the DVC stages, a sweep objective and a library user share.

``paths``     where an experiment's models and results live (models/<id>/seed-<k>/, results/...)
``curve``     the learning-curve evaluator a learner calls at each evaluation point
``train``     train every seed of one experiment, with checkpoints, MLflow runs and the curve files
``evaluate``  judge every seed's model: ladder, optimal-move rate, UCI protocols, spread across seeds
``inputs``    per-experiment fingerprints of the code and data each stage uses (DVC's narrow dependencies)
``profiles``  the params overlays of profiles/ (tiny, full) and how `make repro PROFILE=...` runs them
"""
