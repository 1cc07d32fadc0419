"""Bowen & Liu (2020) Simulation 1 (§4.1): the study, claims, tables, figures and loop oracle."""
