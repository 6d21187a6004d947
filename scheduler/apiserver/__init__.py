"""The Kubernetes API served for the simulated cluster (`/k8s`): semantics, selectors, patches and
a standalone HTTP front."""
