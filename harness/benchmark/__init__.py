"""The cross-paper benchmark (issue 24; DESIGN §8 "The benchmark"): one data interface for every
study (``interface``), the ``harness benchmark`` command (``command``) and its leaderboard and
report (``leaderboard``)."""
