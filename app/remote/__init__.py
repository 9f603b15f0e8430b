"""remote"""
