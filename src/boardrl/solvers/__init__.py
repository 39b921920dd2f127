"""boardrl.solvers"""
