"""jobwatch collector agent for Celery."""
__version__ = "0.2.0"
