"""Where flows and compiled skills run: Dask cluster specs and worker resources."""
