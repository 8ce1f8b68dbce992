"""The Train tab (`panel.TrainPanel`): the form over TrainConfig, the live plots, and a run controller without
widgets that owns the `nmt-desktop train` child process."""
