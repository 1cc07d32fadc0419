"""Paper packages: data-generating processes with the papers' constants, studies, claims,
figure and table specs. Depends on ``harness``; never the reverse."""
