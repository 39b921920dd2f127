"""boardrl.sweeps"""
