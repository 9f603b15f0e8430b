"""saved"""
