"""NodeNUMAResource (Koordinator): CPU topology-aware cpuset allocation."""
