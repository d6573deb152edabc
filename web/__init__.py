"""The referee page (FastAPI). Empty until the web issue lands."""
