"""schedconsole's scheduling engine: kube-scheduler's framework in Python and NumPy."""
