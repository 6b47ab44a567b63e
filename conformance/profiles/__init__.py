"""The profiles this project ships (TOML files, read by :func:`conformance.profile.load_profile`)."""
