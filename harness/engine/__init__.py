"""Grid expansion, task execution, the result store and aggregation."""
