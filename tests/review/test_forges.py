"""The forge's "new pull request" page, read off a remote's URL (https, ssh, scp-like); none for unknown hosts."""

import string
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.forges import pull_request_url, web_repository

BRANCH = "kandev/task-7-fix-the-cart"


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/acme/shop.git",
        "https://github.com/acme/shop",
        "https://token:x-oauth@github.com/acme/shop.git",
        "git@github.com:acme/shop.git",
        "ssh://git@github.com/acme/shop.git",
        "ssh://git@github.com:22/acme/shop",
    ],
)
def test_a_github_remote_in_any_form_links_to_the_compare_page_of_the_branch_against_its_base(remote):
    assert pull_request_url(remote, BRANCH, "main") == (
        "https://github.com/acme/shop/compare/main...kandev/task-7-fix-the-cart?expand=1"
    )


def test_gitlab_bitbucket_and_gitea_each_get_their_own_new_pull_request_page():
    gitlab = pull_request_url("git@gitlab.com:acme/web/shop.git", BRANCH, "main")
    assert gitlab is not None
    parts = urlsplit(gitlab)
    assert (parts.netloc, parts.path) == ("gitlab.com", "/acme/web/shop/-/merge_requests/new")
    assert parse_qs(parts.query) == {
        "merge_request[source_branch]": [BRANCH],
        "merge_request[target_branch]": ["main"],
    }
    assert pull_request_url("https://gitlab.example.com:8443/acme/shop.git", BRANCH, "dev").startswith(
        "https://gitlab.example.com:8443/acme/shop/-/merge_requests/new?"
    )
    bitbucket = pull_request_url("git@bitbucket.org:acme/shop.git", BRANCH, "main")
    assert (
        bitbucket == f"https://bitbucket.org/acme/shop/pull-requests/new?source={BRANCH.replace('/', '%2F')}&dest=main"
    )
    assert pull_request_url("https://codeberg.org/acme/shop.git", BRANCH, "main") == (
        f"https://codeberg.org/acme/shop/compare/main...{BRANCH}"
    )
    assert pull_request_url("git@gitea.example.org:acme/shop.git", BRANCH, "main") == (
        f"https://gitea.example.org/acme/shop/compare/main...{BRANCH}"
    )


@pytest.mark.parametrize(
    "remote",
    [
        "https://git.example.com/acme/shop.git",  # a host that says no forge
        "/srv/git/shop.git",  # a path
        "file:///srv/git/shop.git",
        "origin",
        "https://github.com/acme",  # no repository
        "https://github.com/acme/../shop",
        "javascript:alert(1)//github.com/a/b",
        "https://github.com/acme/shop?x=<script>",
        "ext::sh -c touch% /tmp/pwned",
        "",
    ],
)
def test_an_unknown_or_malformed_remote_gets_no_link(remote):
    assert pull_request_url(remote, BRANCH, "main") is None


def test_a_branch_name_is_escaped_in_the_link_and_credentials_never_reach_it():
    url = pull_request_url("https://user:s3cret@github.com/acme/shop.git", "fix/a b#c?d", "main")
    assert url == "https://github.com/acme/shop/compare/main...fix/a%20b%23c%3Fd?expand=1"
    assert "s3cret" not in url


names = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=20).filter(
    lambda name: name not in (".", "..") and not name.endswith(".git")
)
branches = st.text(min_size=1, max_size=40).filter(lambda name: name.strip())
hosts = st.sampled_from(["github.com", "gitlab.com", "bitbucket.org", "codeberg.org"])
forms = st.sampled_from(
    ["https://{host}/{owner}/{repo}.git", "git@{host}:{owner}/{repo}.git", "ssh://git@{host}/{owner}/{repo}"]
)


@given(host=hosts, owner=names, repo=names, form=forms, branch=branches, base=branches)
def test_every_form_of_a_known_forges_remote_links_to_that_repository_on_https_with_both_branches(
    host, owner, repo, form, branch, base
):
    url = pull_request_url(form.format(host=host, owner=owner, repo=repo), branch, base)
    assert url is not None
    parts = urlsplit(url)
    assert parts.scheme == "https"
    assert parts.netloc == host
    assert parts.path.startswith(f"/{owner}/{repo}/")
    # Nothing a browser would read as markup or a second URL: spaces, quotes and angle brackets are escaped.
    assert not set(url) & set(" \"'<>\\\n")


@given(st.text(max_size=80))
def test_any_text_as_a_remote_gives_a_link_to_a_known_forge_over_https_or_none(text):
    url = pull_request_url(text, BRANCH, "main")
    found = web_repository(text)
    assert url is None or (found is not None and urlsplit(url).scheme in ("https", "http"))
    if url is not None:
        assert urlsplit(url).hostname in ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org") or any(
            label in urlsplit(url).hostname.split(".") for label in ("gitlab", "gitea", "forgejo")
        )
