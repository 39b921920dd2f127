"""boardrl.agents"""
