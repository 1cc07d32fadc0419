"""Bi & Shen ParaEst: the study class of ``conf/study/bi_shen_paraest.yaml``, S1's (known F,
|mean(Z̃) − E_F Z|) swept over n instead of ε."""

from ..known_f.study import DiscreteMeans as STUDY_CLASS  # noqa: F401
