"""EquiMind."""
