"""Stage 4: run checks in fresh containers (Pass@1 replay, research probes) and record them."""
