"""Bi & Shen S2 (KS distortion, known F): the study class of ``conf/study/bi_shen_s2.yaml``."""

from .study import KSDistortion as STUDY_CLASS  # noqa: F401
