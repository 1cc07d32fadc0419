"""Bowen & Liu (2020) case study (§5, UCI Fertility): the study, its data, analysis, claims and
tables."""
