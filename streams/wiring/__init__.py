"""Building the application from configuration: stores, models, the cascade, the worker."""
