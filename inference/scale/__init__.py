"""The scale of a fit: batches streamed with checkpoints, and the same statistics on a Dask cluster."""
