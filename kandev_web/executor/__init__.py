"""Executor hosts: machines where agents run apart from the web processes, reached over SSH.

It imports nothing from Django.

- ``ssh``           the web side: log in, start agentctl there, tunnel its stream back, follow it to its end
- ``checkout_cli``  the ``kandev-checkout`` command the web side runs there for a repository's checkout steps
"""
