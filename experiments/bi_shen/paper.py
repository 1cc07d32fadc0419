"""Bi & Shen, distribution-invariant differential privacy: the paper's studies and, for each,
its claims and tables, declared explicitly."""

from __future__ import annotations

from harness.paper import Computation, Paper, StudyParts, Variant

from . import illustrations
from .audit import tables as audit_tables
from .known_f import claims as known_claims
from .known_f import tables as known_tables
from .paraest import claims as paraest_claims
from .paraest import figures as paraest_figures
from .paraest import tables as paraest_tables
from .r1 import claims as r1_claims
from .r1 import tables as r1_tables
from .r2 import claims as r2_claims
from .r2 import tables as r2_tables
from .r3 import claims as r3_claims
from .r3 import tables as r3_tables
from .s3 import claims as s3_claims
from .s3 import tables as s3_tables
from .s4 import claims as s4_claims
from .s4 import decay_probe as s4_decay_probe
from .s4 import probe as s4_probe
from .s4 import solver_bench as s4_solver_bench
from .s4 import tables as s4_tables
from .s5 import claims as s5_claims
from .s5 import tables as s5_tables

#: R3 with the data user's MF settings cross-validated on each release's training ratings, as the
#: paper tunes recosystem (App. S2): the penalty from three values by 3-fold CV [ours: the grid].
#: CV multiplies the fits per release by 10, so the variant runs Table 3's ε = 1 only, on 5
#: partitions, and reads Table 3's claim only
R3_CV = ("+study.mf.cv={folds: 3, l2: [0.01, 0.05, 0.1]}", "study.epsilon=[1]",
         "study.replicates.paper=5")
R3_CV_CLAIMS = [c for c in r3_claims.CLAIMS if c.id == "dip-lowest-eps1"]

PAPER = Paper(
    name="bi_shen",
    title=("Bi, X. and Shen, X. Distribution-invariant differential privacy. Journal of "
           "Econometrics."),
    studies={
        "bi_shen_s5": StudyParts(s5_claims.CLAIMS, s5_tables.TABLES),
        "bi_shen_s3": StudyParts(s3_claims.CLAIMS, s3_tables.TABLES),
        # S4's profile=paper is the paper's 1000 replicates, days of a core here: the report
        # reads profile=extended, Table 1 at 200 replicates, run across sessions
        # (conf/study/bi_shen_s4.yaml), and says so
        "bi_shen_s4": StudyParts(s4_claims.CLAIMS, s4_tables.TABLES, report_profile="extended"),
        "bi_shen_s2": StudyParts(known_claims.S2_CLAIMS, known_tables.S2_TABLES),
        # S1 also carries the ε-audit of DIP and its competitors (it reads no sweep)
        "bi_shen_s1": StudyParts(known_claims.S1_CLAIMS,
                                 {**known_tables.S1_TABLES, **audit_tables.TABLES}),
        # the appendix's Figure ParaEst: S1 at ε = 1 over n (conf/study/bi_shen_paraest.yaml)
        "bi_shen_paraest": StudyParts(paraest_claims.CLAIMS, paraest_tables.TABLES,
                                      paraest_figures.FIGURES),
        "bi_shen_r1": StudyParts(r1_claims.CLAIMS, r1_tables.TABLES),
        "bi_shen_r2": StudyParts(r2_claims.CLAIMS, r2_tables.TABLES),
        "bi_shen_r3": StudyParts(r3_claims.CLAIMS, r3_tables.TABLES),
    },
    variants={
        "bi_shen_r3_cv": Variant(base="bi_shen_r3", overrides=R3_CV, claims=R3_CV_CLAIMS,
                                 tables={"table_3": r3_tables.TABLES["table_3"]}),
    },
    computations={
        # why the record-level CV fails on a DIP release: one replicate of S4's chain network
        # (report, S4)
        s4_probe.NAME: Computation(
            s4_probe.make_tables, s4_probe.SETTINGS,
            "near-copy clusters of DIP releases, entropy loss per penalty and each CV "
            "reading's choice on one replicate of S4's chain network (p = 250, ε = 1)"),
        # is the exponential-decay gap of Table 1 the network's rate? (report, S4)
        s4_decay_probe.NAME: Computation(
            s4_decay_probe.make_tables, s4_decay_probe.SETTINGS,
            "S4's DIP entropy loss at ε = 1 on exponential-decay networks of several rates "
            "beside Table 1's (p = 250, a few replicates)"),
        # S4's glasso before and after issue 25's speed-up, benched in one run on the same
        # sweep (report, appendix)
        s4_solver_bench.NAME: Computation(
            s4_solver_bench.make_tables, s4_solver_bench.SETTINGS,
            "S4 at profile=reduced swept by harness bench with the former glasso solver (no "
            "screening, μ balanced at ratio 10) and the current one: wall and CPU seconds, and "
            "how far the fits moved"),
        # the paper's Figures 1 and 2 (the DIP flowchart, continualization) and its 2-D cube
        # illustration, drawn from samples run through the harness's DIP (report, appendix)
        illustrations.NAME: Computation(
            illustrations.make_tables, illustrations.SETTINGS,
            "Figures 1 and 2 of the paper: the stages of known-F DIP on an Exp(1) sample and the "
            "continualization of a Bernoulli sample; the 2-D hold-out cube illustration: a "
            "hold-out DIP release of records from the cubes of the paper's five points; ε = 1",
            figures=illustrations.FIGURES),
    },
)
