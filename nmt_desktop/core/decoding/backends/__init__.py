"""Where decoding runs: the `StepBackend` interface (step_backend.py) and its three implementations,
reference (the model's own layers, with interventions), python (the fused step in torch) and compiled
(the same step in C++, native/), with `choice.py` picking one."""
