"""KubeSchedulerConfiguration v1: strict decoding, upstream defaults, validation and feature gates."""
