"""On PostgreSQL, requests borrow pooled connections instead of opening one each."""

import pytest
from django.db import connection
from django.test import Client

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def _backend() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_a_closed_connection_goes_back_to_the_pool_and_the_next_one_is_a_pooled_backend():
    assert connection.pool is not None
    backends = set()
    for _ in range(10):
        backends.add(_backend())
        connection.close()  # what Django does at the end of every request

    # Without the pool, every one of the ten was a new backend process.
    assert len(backends) <= connection.pool.max_size
    assert len(backends) < 10


def test_requests_are_served_on_pooled_connections(operator):
    client = Client()
    client.force_login(operator)
    opened = connection.pool.get_stats()["connections_num"]

    for _ in range(10):
        assert client.get("/").status_code == 200

    assert connection.pool.get_stats()["connections_num"] - opened < 10
