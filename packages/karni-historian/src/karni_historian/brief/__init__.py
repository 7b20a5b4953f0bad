"""Briefs: decay tiers, the rendered history block, the briefs and the provider.

The last stage of the pipeline reads compartments and facts from the store and
turns them into what an agent sees.
"""
