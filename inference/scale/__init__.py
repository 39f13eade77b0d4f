"""The scale of a fit: batches streamed with checkpoints, the same statistics on a Dask cluster."""
