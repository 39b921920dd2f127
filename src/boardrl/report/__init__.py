"""boardrl.report"""
