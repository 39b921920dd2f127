"""boardrl.evaluate"""
