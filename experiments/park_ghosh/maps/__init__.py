"""Park & Ghosh §4.3–4.4: the risk–utility maps (Figs. 5–9)."""
