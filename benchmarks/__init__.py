"""EquiMind benchmarks: each module writes JSON with machine info to benchmarks/results/."""
