"""The check of a fit against a sampler: NUTS, the MCSE-scaled comparison, calibration (SBC)."""
