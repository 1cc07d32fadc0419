"""Bi & Shen S1 (discrete means, known F): the study class of ``conf/study/bi_shen_s1.yaml``."""

from .study import DiscreteMeans as STUDY_CLASS  # noqa: F401
