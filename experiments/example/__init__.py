"""The worked example of the README: a small survey study written against the study contract
only (not a paper)."""
