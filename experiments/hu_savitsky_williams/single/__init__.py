"""The single-sample simulation runs of Hu, Savitsky & Williams (§4.2–§4.4, Figures 3–9)."""
