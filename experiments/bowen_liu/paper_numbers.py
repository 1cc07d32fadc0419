"""Numbers printed in Bowen & Liu (2020), copied from the paper (spec 000 §5.3)."""

# Supplementary Table 1: proportion of usable repeats (of 5000), Laplace sanitizer, Sim 1.
# Keys (n, π) → {ln ε: proportion}; ln ε > 0 gave 1.0000 everywhere.
SUPP_TABLE_1 = {
    (40, 0.15): {-4: 0.9532, -2: 0.9852, 0: 0.9998},
    (100, 0.15): {-4: 0.9684, -2: 0.9954, 0: 1.0000},
    (1000, 0.15): {-4: 0.9972, -2: 1.0000, 0: 1.0000},
    (40, 0.25): {-4: 0.9566, -2: 0.9900, 0: 1.0000},
    (100, 0.25): {-4: 0.9708, -2: 0.9984, 0: 1.0000},
    (1000, 0.25): {-4: 0.9992, -2: 1.0000, 0: 1.0000},
    (40, 0.50): {-4: 0.9574, -2: 0.9952, 0: 1.0000},
    (100, 0.50): {-4: 0.9754, -2: 0.9998, 0: 1.0000},
    (1000, 0.50): {-4: 1.0000, -2: 1.0000, 0: 1.0000},
}
SUPP_TABLE_1_REPLICATES = 5000

# Supplementary Table 2: number of histogram bins across 5000 repeats of Simulation 2, pooled over
# σ² = 1, 4, 9: n → (min, mean, median, max).
SUPP_TABLE_2 = {
    40: (5, 7.46, 7, 12),
    100: (8, 9.85, 10, 13),
    1000: (19, 20.54, 21, 22),
}

# λ of Eq. 7 (with equality) for the median bin counts of Supp. Table 2, ln ε = −4..4, as derived
# in spec 000 §2.3: (n, K) → λ values.
SMOOTH_LAMBDA = {
    (40, 7): (0.9974, 0.9929, 0.9810, 0.9499, 0.8736, 0.7134, 0.4631, 0.2115, 0.0566),
    (100, 10): (0.9982, 0.9950, 0.9866, 0.9645, 0.9087, 0.7840, 0.5660, 0.3101, 0.1210),
    (1000, 21): (0.9991, 0.9976, 0.9936, 0.9828, 0.9545, 0.8853, 0.7390, 0.5086, 0.2723),
}
SMOOTH_LAMBDA_LOG_EPSILON = (-4, -3, -2, -1, 0, 1, 2, 3, 4)

# Case study (§5), ε = e, 100 repeats, 20 test cases (3 altered "+", 17 normal "−").
# Table 4: averaged confusion matrices (observed row, predicted column) and consistency rates.
TABLE_4 = {  # method: (TP, FN, FP, TN, CR)
    "Ori": (0.0, 3.0, 0.0, 17.0, 0.85),
    "PrivateSVM": (0.84, 2.16, 4.87, 12.13, 0.649),
    "LAP": (1.04, 1.96, 5.11, 11.89, 0.647),
    "MODIPS": (1.50, 1.50, 8.51, 8.49, 0.500),
}
TABLE_4_REPLICATES = 100
# Table 5: mean (SD) of age and hours on the [0, 1] scale, and the averaged TVD (no ½ factor)
# over the 1-, 2-, 3- and 8-way tables of the 8 categorical variables.
TABLE_5 = {
    "Ori": {"age_mean": 0.67, "age_sd": 0.12, "hours_mean": 0.41, "hours_sd": 0.19},
    "LAP": {"age_mean": 0.66, "age_sd": 0.14, "hours_mean": 0.44, "hours_sd": 0.21,
            "tvd_1": 0.228, "tvd_2": 0.353, "tvd_3": 0.311, "tvd_8": 0.451},
    "MODIPS": {"age_mean": 0.66, "age_sd": 0.14, "hours_mean": 0.50, "hours_sd": 0.29,
               "tvd_1": 0.250, "tvd_2": 0.379, "tvd_3": 0.330, "tvd_8": 0.483},
}
