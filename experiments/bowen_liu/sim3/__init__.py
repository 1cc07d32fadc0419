"""Bowen & Liu (2020) Simulation 3 (§4.3.1): the study, its claims, tables, figures and loop
oracle."""
