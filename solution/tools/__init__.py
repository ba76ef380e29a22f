"""The tools claw can call."""
