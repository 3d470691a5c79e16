"""The executor service: starts agentctl processes on an executor host.

For deployments where agents run on other machines than the web processes.
It imports nothing from Django.

- ``cli``      the ``kandev-executor`` command: options, token, ready line, signals
- ``service``  its actions: launch, stop and list agentctls; report their ends
- ``client``   the web side: launch there, follow each agentctl until it ends
"""
