"""Numbers printed in Bowen & Liu (2020) for Simulation 4, copied from the supplement (spec 000
§5.3, checked against the seed text)."""

# Supplementary Table 6: counts in the 12 w-cells over 1000 repeats, cell → (min, mean, median,
# max). Cell 10's mean is printed "212" (= 21.2: the means then sum to 1000.22). The paper's
# cell order is not stated (spec §6 item 19).
SUPP_TABLE_6 = {
    1: (107, 157.7, 158, 200), 2: (151, 202.3, 202, 245), 3: (154, 197, 197, 249),
    4: (50, 77.65, 78, 113), 5: (33, 54.59, 54, 84), 6: (3, 14.72, 15, 29),
    7: (36, 59.18, 59, 89), 8: (65, 94.29, 94, 126), 9: (67, 98.46, 98, 136),
    10: (8, 21.2, 21, 39), 11: (4, 17.83, 18, 35), 12: (0, 5.30, 5, 16),
}

# Supplementary Table 7: 2-D histogram bins per w-cell (NP-DIPS), cell → (min, mean, median, max);
# a different cell order from Table 6 (spec §6 item 18).
SUPP_TABLE_7 = {
    1: (49, 65.23, 64, 81), 2: (56, 64.53, 64, 81), 3: (64, 78.78, 81, 100),
    4: (36, 50.90, 49, 64), 5: (9, 19.81, 16, 30), 6: (64, 79.23, 81, 100),
    7: (36, 47.67, 49, 64), 8: (64, 77.26, 81, 90), 9: (16, 25.74, 25, 36),
    10: (0, 13.89, 16, 25), 11: (36, 47.71, 49, 64), 12: (16, 26.35, 25, 36),
}

SUPP_TABLES_REPLICATES = 1000
