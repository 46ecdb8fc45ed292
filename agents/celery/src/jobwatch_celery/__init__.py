"""jobwatch collector agent for Celery."""
__version__ = "0.1.0"
