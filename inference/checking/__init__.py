"""The check of a fit against a sampler: NUTS runs, the MCSE-scaled comparison, calibration (SBC)."""
