"""Bowen & Liu (2020) Simulation 2 (§4.2): the study, claims, tables, figures and loop oracle."""
