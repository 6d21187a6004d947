"""LoadAwareScheduling (Koordinator): NodeMetric-based filtering and scoring."""
