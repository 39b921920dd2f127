"""boardrl.data"""
