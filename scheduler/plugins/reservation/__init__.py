"""Reservation: resources reserved on a node for the pods that own them (Koordinator)."""
