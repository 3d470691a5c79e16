"""A workspace's settings pages: its agent profiles and its repositories."""
