"""Bowen & Liu (2020) Simulation 4 (§4.3.2): the study, its SLOMAG model and MODIPS-Correct
synthesizer, its claims, tables, figures and diagnostics."""
