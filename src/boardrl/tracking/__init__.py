"""boardrl.tracking"""
