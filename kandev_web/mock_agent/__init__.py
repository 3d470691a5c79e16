"""The mock ACP agent: scenarios as data (``scenarios/*.json``) played by ``engine``."""
