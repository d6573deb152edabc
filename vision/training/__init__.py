"""Training the learned detector: data export, training, adaptation. Never imported at run time."""
