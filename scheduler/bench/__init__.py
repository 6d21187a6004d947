"""scheduler_perf-shaped benchmarks: workloads, the Koordinator ones, and the remote-backend run."""
