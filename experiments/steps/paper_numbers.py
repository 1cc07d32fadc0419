"""The printed numbers of Bowen, Liu & Su (seed 003; spec 003 §4.2, §7.3, §7.4), which our
tables print beside ours. Every number is the paper's as printed (typos included, so that a
"paper vs harness" diff can flag them); the spec's corrections are kept apart in
``TABLE_3_RANK_TYPOS`` and ``TABLE_9_CR1_FROM_CROSSTAB``."""

from __future__ import annotations

#: log ε of the CPS study (§4.2; ε = e^{−2..2})
LOG_EPSILONS = (-2, -1, 0, 1, 2)
#: Table 3's methods in its order
METHODS = ("flat Laplace", "PrivBayes", "UH mod-2", "UH mod-3", "STEPS-2", "STEPS-3")
#: Table 3's metric columns in its order, with the direction that ranks them (§5.6)
METRICS = ("KS", "CR1", "CR5", "CR10", "CIall", "Prereg", "Reg", "PxR")
LOWER_IS_BETTER = ("KS",)

#: Table 1 as printed (percentages): the "yes" share of each binary attribute (the printed "no"
#: shares hold the typos of spec §4.2 [T] and are not used), the age and length-of-residence
#: distributions, and the income distribution's min, median and max (all it prints)
TABLE_1_YES = {"voted": 34.7, "prereg": 10.5, "married": 7.5, "female": 50.7, "college": 3.1,
               "white": 69.3, "hispanic": 14.6, "registered": 52.4, "metro": 77.9,
               "bizfarm": 12.6, "inperson": 36.7, "dmv": 12.7}
TABLE_1_AGE = (20.5, 19.7, 20.0, 20.0, 19.8)
TABLE_1_LOR = (2.7, 20.0, 6.9, 15.0, 9.8, 45.6)
TABLE_1_INCOME = {"min": 3.1, "median": 5.9, "max": 26.5}
#: Table 2 (cell sizes of the 15-way table without the structural zero): size -> cells
TABLE_2_CELLS = {0: 1_268_911, 1: 14_061, 2: 3_545, 3: 1_508, 4: 740, 5: 425, ">5": 1_050}
N_CELLS = 1_290_240
#: the original data's 105 pairwise χ² p-values by category (≤.01, (.01,.05], (.05,.1], >.1),
#: the row sums of the appendix tables (spec §4.2)
ORIGINAL_P_CATEGORIES = (89, 1, 4, 11)

#: Table 3: (log ε, method) -> ((value, printed rank) for each of METRICS, printed score)
_T3 = """
-2 flat Laplace | .981 6 | .190 1 | .210 1 | .210 1 | .092 3 | .872 4 | .637 3 | .872 3 | 22
-2 PrivBayes    | .462 1 | .152 6 | .143 6 | .105 6 | .043 6 | .681 6 | .000 6 | .681 6 | 43
-2 UH mod-2     | .973 4 | .162 2 | .152 2 | .114 2 | .099 1 | .865 3 | .602 4 | .865 4 | 22
-2 UH mod-3     | .957 3 | .162 2 | .152 2 | .114 2 | .093 2 | .848 5 | .495 5 | .848 5 | 26
-2 STEPS-2      | .975 5 | .162 2 | .152 2 | .114 2 | .090 4 | .874 1 | .661 1 | .874 1 | 18
-2 STEPS-3      | .956 2 | .162 2 | .152 2 | .114 2 | .090 4 | .873 2 | .659 2 | .873 2 | 18
-1 flat Laplace | .978 6 | .181 1 | .210 1 | .210 1 | .102 1 | .871 3 | .638 3 | .871 3 | 19
-1 PrivBayes    | .422 1 | .152 6 | .143 6 | .105 6 | .050 6 | .681 6 | .000 6 | .681 6 | 43
-1 UH mod-2     | .971 4 | .162 2 | .152 4 | .114 4 | .098 2 | .865 4 | .602 4 | .865 4 | 28
-1 UH mod-3     | .954 2 | .162 2 | .152 4 | .114 4 | .092 3 | .839 5 | .445 5 | .839 5 | 30
-1 STEPS-2      | .971 4 | .162 2 | .171 2 | .133 2 | .090 5 | .874 1 | .667 1 | .874 1 | 18
-1 STEPS-3      | .954 2 | .162 2 | .171 2 | .133 2 | .091 4 | .874 1 | .666 2 | .874 1 | 16
0 flat Laplace  | .968 6 | .190 1 | .210 1 | .210 1 | .108 1 | .871 4 | .641 3 | .871 4 | 21
0 PrivBayes     | .272 1 | .152 6 | .143 6 | .114 4 | .076 6 | .943 1 | .000 6 | .962 1 | 31
0 UH mod-2      | .964 4 | .162 4 | .152 4 | .114 4 | .106 2 | .864 5 | .605 4 | .864 5 | 32
0 UH mod-3      | .945 2 | .162 4 | .152 4 | .114 4 | .090 3 | .838 6 | .446 5 | .838 6 | 34
0 STEPS-2       | .965 5 | .181 2 | .171 2 | .133 2 | .090 3 | .873 2 | .671 1 | .873 2 | 19
0 STEPS-3       | .945 2 | .181 2 | .171 2 | .133 2 | .090 3 | .873 2 | .671 1 | .873 2 | 16
1 flat Laplace  | .930 4 | .276 1 | .371 1 | .448 1 | .092 4 | .867 4 | .651 4 | .867 4 | 23
1 PrivBayes     | .187 1 | .171 4 | .171 6 | .133 6 | .102 2 | .978 1 | .847 1 | .990 1 | 22
1 UH mod-2      | .944 5 | .162 5 | .200 4 | .219 4 | .125 1 | .863 5 | .612 5 | .863 5 | 34
1 UH mod-3      | .919 2 | .162 5 | .181 5 | .219 4 | .096 3 | .837 6 | .453 6 | .837 6 | 37
1 STEPS-2       | .944 5 | .200 2 | .257 2 | .238 2 | .091 5 | .871 2 | .677 2 | .871 2 | 22
1 STEPS-3       | .919 2 | .200 2 | .248 2 | .238 2 | .084 6 | .871 2 | .676 3 | .871 2 | 21
2 flat Laplace  | .833 2 | .467 1 | .552 1 | .629 1 | .104 1 | .862 4 | .684 4 | .862 4 | 18
2 PrivBayes     | .157 1 | .190 6 | .181 6 | .143 7 | .099 3 | .988 1 | .983 1 | .971 1 | 26
2 UH mod-2      | .885 5 | .352 4 | .400 4 | .410 6 | .100 2 | .860 5 | .635 5 | .860 5 | 36
2 UH mod-3      | .843 3 | .305 5 | .390 5 | .457 4 | .076 5 | .849 6 | .553 6 | .849 6 | 40
2 STEPS-2       | .886 6 | .400 2 | .448 2 | .486 2 | .093 4 | .865 2 | .696 2 | .865 2 | 22
2 STEPS-3       | .843 3 | .400 2 | .448 2 | .486 2 | .076 5 | .865 2 | .695 3 | .865 2 | 21
"""


def _fields(text: str) -> list[list[str]]:
    """The "|"-separated fields of each line of a printed table above."""
    return [[part.strip() for part in line.split("|")] for line in text.strip().splitlines()]


def _parse_table_3() -> dict[tuple[int, str], dict]:
    out = {}
    for head, *cells, score in _fields(_T3):
        log_eps, method = head.split(" ", 1)
        values = [cell.split() for cell in cells]
        out[(int(log_eps), method.strip())] = {
            "values": {m: float(v) for m, (v, _) in zip(METRICS, values, strict=True)},
            "ranks": {m: int(r) for m, (_, r) in zip(METRICS, values, strict=True)},
            "score": int(score)}
    return out


#: Table 3 as printed: (log ε, method) -> {"values": {metric: x}, "ranks": {metric: r},
#: "score": s}
TABLE_3 = _parse_table_3()

#: Table 3's rank typos found by recomputing the ranks from the printed values (spec §7.3 [T]):
#: (log ε, method, metric) -> (printed rank, correct rank)
TABLE_3_RANK_TYPOS = {
    (2, "PrivBayes", "CR10"): (7, 6),
    (2, "UH mod-2", "CR10"): (6, 5),
    (1, "STEPS-3", "CR5"): (2, 3),
    (-2, "flat Laplace", "Prereg"): (4, 3),
    (-2, "UH mod-2", "Prereg"): (3, 4),
}
#: Table 3 prints CR1 = .400 for STEPS-3 at log ε = 2; its own Table 9 gives 43/105 = .410
TABLE_9_CR1_FROM_CROSSTAB = 43 / 105

#: Appendix Tables 4–9: (method, log ε) -> 4×4 counts, original p-value category (rows:
#: ≤.01, (.01,.05], (.05,.1], >.1) × synthetic category (columns, same order)
_CROSSTABS = """
flat Laplace  | -2 | 5,5,0,79 | 0,0,0,1 | 0,2,0,2 | 1,0,0,10
flat Laplace  | -1 | 4,6,0,79 | 0,0,0,1 | 0,2,0,2 | 1,0,0,10
flat Laplace  | 0  | 5,5,0,79 | 0,0,0,1 | 0,2,0,2 | 1,0,0,10
flat Laplace  | 1  | 19,12,4,54 | 0,0,0,1 | 3,1,0,0 | 3,0,0,8
flat Laplace  | 2  | 41,11,6,31 | 0,0,0,1 | 4,0,0,0 | 4,1,2,4
PrivBayes     | -2 | 0,0,0,89 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
PrivBayes     | -1 | 0,0,0,89 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
PrivBayes     | 0  | 0,0,1,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
PrivBayes     | 1  | 2,1,0,86 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
PrivBayes     | 2  | 4,0,0,85 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-2      | -2 | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-2      | -1 | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-2      | 0  | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-2      | 1  | 1,7,4,77 | 0,0,0,1 | 0,2,0,2 | 0,0,2,9
UH mod-2      | 2  | 22,8,5,54 | 0,0,0,1 | 0,0,1,3 | 1,2,1,7
UH mod-3      | -2 | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-3      | -1 | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-3      | 0  | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
UH mod-3      | 1  | 1,6,5,77 | 0,0,0,1 | 0,2,0,2 | 0,1,1,9
UH mod-3      | 2  | 20,13,8,48 | 0,0,0,1 | 1,1,0,2 | 3,2,1,5
STEPS-2       | -2 | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
STEPS-2       | -1 | 1,2,0,86 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
STEPS-2       | 0  | 3,0,0,86 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
STEPS-2       | 1  | 5,8,4,72 | 0,0,0,1 | 0,0,0,4 | 0,1,2,8
STEPS-2       | 2  | 30,7,8,44 | 0,0,0,1 | 0,0,0,4 | 4,1,0,6
STEPS-3       | -2 | 1,0,0,88 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
STEPS-3       | -1 | 1,2,0,86 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
STEPS-3       | 0  | 3,0,0,86 | 0,0,0,1 | 0,0,0,4 | 0,0,0,11
STEPS-3       | 1  | 5,8,3,73 | 0,0,0,1 | 0,0,0,4 | 0,2,0,9
STEPS-3       | 2  | 30,7,8,44 | 0,0,0,1 | 0,0,0,4 | 3,2,0,6
"""
#: the appendix table that prints each method's cross-tabs
CROSSTAB_TABLE = {"flat Laplace": 4, "PrivBayes": 5, "UH mod-2": 6, "UH mod-3": 7,
                  "STEPS-2": 8, "STEPS-3": 9}


def _parse_crosstabs() -> dict[tuple[str, int], tuple[tuple[int, ...], ...]]:
    out = {}
    for method, log_eps, *rows in _fields(_CROSSTABS):
        out[(method, int(log_eps))] = tuple(tuple(int(v) for v in row.split(","))
                                            for row in rows)
    return out


#: the appendix cross-tabs (Tables 4–9), one repetition each (spec A8)
CROSSTABS = _parse_crosstabs()
