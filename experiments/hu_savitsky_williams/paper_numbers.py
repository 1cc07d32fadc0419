"""Numbers printed in Hu, Savitsky & Williams, copied from the paper (seed 002; spec 002 §9.3)."""

# Tables 4 (counts) and 5 (mean salaries), appendix F: R = 100, m = 3, Δ = 1.8 (ε = 10.8).
# cell → (FBS coverage, FBS average CI length, FBP coverage, FBP average CI length).
# Cells are named as the study's estimands: F<field>_<Male|Female|total>.
TABLE_4 = {
    "F1_total": (0.84, 3560, 0.99, 6682), "F1_Male": (0.99, 3705, 1.00, 4854),
    "F1_Female": (0.99, 4298, 1.00, 5242), "F2_total": (0.86, 1416, 0.86, 1853),
    "F2_Male": (0.95, 1287, 0.88, 1492), "F2_Female": (1.00, 1185, 1.00, 1037),
    "F3_total": (0.92, 1709, 1.00, 2814), "F3_Male": (0.97, 1576, 1.00, 2258),
    "F3_Female": (1.00, 1446, 1.00, 1596), "F4_total": (0.90, 3312, 1.00, 5280),
    "F4_Male": (0.98, 3175, 1.00, 4320), "F4_Female": (0.99, 3025, 1.00, 3360),
    "F5_total": (0.85, 2474, 1.00, 4876), "F5_Male": (1.00, 2081, 1.00, 2713),
    "F5_Female": (0.98, 2781, 1.00, 4104), "F6_total": (0.88, 2576, 1.00, 4915),
    "F6_Male": (0.99, 2488, 1.00, 3393), "F6_Female": (0.98, 2892, 1.00, 3702),
    "F7_total": (0.92, 2955, 0.51, 4725), "F7_Male": (0.95, 3021, 0.51, 4108),
    "F7_Female": (1.00, 2691, 0.99, 2516), "F8_total": (0.79, 1934, 1.00, 2936),
    "F8_Male": (1.00, 1557, 1.00, 1760), "F8_Female": (0.99, 1908, 1.00, 2297),
}
TABLE_5 = {
    "F1_total": (0.85, 13657, 0.71, 13422), "F1_Male": (0.87, 18337, 0.77, 17772),
    "F1_Female": (0.90, 17941, 0.78, 16461), "F2_total": (0.95, 58335, 0.94, 64240),
    "F2_Male": (0.95, 66324, 0.96, 71592), "F2_Female": (0.97, 78486, 0.96, 78408),
    "F3_total": (0.91, 41026, 0.92, 41596), "F3_Male": (0.91, 47514, 0.93, 46015),
    "F3_Female": (0.94, 56496, 0.85, 53166), "F4_total": (0.81, 19026, 0.81, 16953),
    "F4_Male": (0.87, 22022, 0.80, 20016), "F4_Female": (0.91, 25821, 0.90, 23786),
    "F5_total": (0.85, 21648, 0.89, 22418), "F5_Male": (0.95, 31905, 0.91, 33535),
    "F5_Female": (0.86, 23600, 0.88, 24292), "F6_total": (0.88, 21325, 0.78, 18347),
    "F6_Male": (0.95, 27187, 0.71, 25241), "F6_Female": (0.92, 25165, 0.89, 21989),
    "F7_total": (0.87, 21163, 0.79, 20262), "F7_Male": (0.84, 22964, 0.79, 22021),
    "F7_Female": (0.97, 34669, 0.82, 34129), "F8_total": (0.90, 40658, 0.93, 39461),
    "F8_Male": (0.93, 57063, 0.93, 54326), "F8_Female": (0.92, 43357, 0.94, 40191),
}
TABLES_REPLICATES = 100

# Captions of Figures 10-17 (appendix F): mean over the 24 cells of avgCI_FBP / avgCI_FBS.
# (m, Δ) → (counts, means). Fig. 10 is m = 3, Δ = 1.8 (main text says 0.95 for means; the
# tables give 0.968).
CAPTION_RATIOS = {
    (3, 1.8): (1.38, 0.97), (1, 1.8): (1.81, 0.93), (5, 1.8): (1.54, 0.95),
    (10, 1.8): (1.65, 0.95), (3, 3.4): (1.39, 0.97), (1, 3.4): (1.71, 0.97),
    (5, 3.4): (1.52, 0.97), (10, 3.4): (1.60, 0.96),
}
CAPTION_FIGURES = {(3, 1.8): 10, (1, 1.8): 11, (5, 1.8): 12, (10, 1.8): 13,
                   (3, 3.4): 14, (1, 3.4): 15, (5, 3.4): 16, (10, 3.4): 17}

# Fig. 3 (§4.2, the one simulated sample, Δ = 1.8, m = 3): the weighted fits' bounds are "about
# 1.8"; the unweighted fits' maximum record bounds.
FIG_3_WEIGHTED = 1.8
FIG_3_UNWEIGHTED = {"FBS": 8.89, "FBP": 9.92}
