"""boardrl.learn"""
