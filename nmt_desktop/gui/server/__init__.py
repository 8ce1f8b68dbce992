"""Tools > Local server…: `nmt-desktop serve` run as a child of the app, with its request log and counters."""
