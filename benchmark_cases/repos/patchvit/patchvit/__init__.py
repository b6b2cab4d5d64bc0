"""A tiny vision transformer whose patch layer is chosen in the config."""
