"""The forge page where a pushed branch becomes a pull request, read off the remote's URL.

Only for forges whose "new pull request" address is known and stable:
github.com, gitlab.com (and a self-hosted GitLab whose host name says
``gitlab``), bitbucket.org, codeberg.org (and a Gitea or Forgejo whose host
name says so). Any other host gets no link: a guessed address would be a
link to a 404, or to somebody else's site. The remote's URL may be https
(``https://host/owner/repo.git``), ssh (``ssh://git@host:22/owner/repo``) or
scp-like (``git@host:owner/repo.git``); credentials in it never reach the
link. No Django: the caller escapes the result like any other attribute.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlencode, urlsplit

#: ``[user@]host:path``, git's scp-like syntax: no scheme, and no slash before the colon.
_SCP_LIKE = re.compile(r"(?:[^@/:]+@)?(?P<host>[^@/:\[\]]+):(?P<path>(?!/).+)")
#: A host name a link may carry: letters, digits, dots and dashes (an IDN in its ASCII form).
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
#: An owner/repository path: segments of the characters forges allow in names.
_PATH = re.compile(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)+")


def web_repository(remote_url: str) -> tuple[str, str, str] | None:
    """``(scheme, host[:port], owner/repo)`` of the repository's web page, or None when the URL says none.

    An https remote keeps its port (a self-hosted forge's web server is
    there); an ssh one's port is SSH's, so the page is on https's default.
    """
    text = remote_url.strip()
    parts = urlsplit(text) if "://" in text else None
    if parts is not None:
        if parts.scheme not in ("https", "http", "ssh", "git+ssh", "ssh+git", "git") or parts.query or parts.fragment:
            return None
        try:
            host, port = (parts.hostname or "").lower(), parts.port
        except ValueError:
            return None
        path = parts.path
        scheme = parts.scheme if parts.scheme in ("https", "http") else "https"
        netloc = f"{host}:{port}" if port and scheme == parts.scheme else host
    else:
        match = _SCP_LIKE.fullmatch(text)
        if match is None:
            return None
        host, path, scheme = match["host"].lower(), match["path"], "https"
        netloc = host
    path = path.strip("/").removesuffix(".git").strip("/")
    if not _HOST.fullmatch(host) or not _PATH.fullmatch(path) or any(part in (".", "..") for part in path.split("/")):
        return None
    return scheme, netloc, path


def forge_of(host: str) -> str | None:
    """Which kind of forge ``host`` is: ``github``, ``gitlab``, ``bitbucket``, ``gitea``, or None when unknown."""
    host = host.split(":", 1)[0]
    if host in ("github.com", "www.github.com"):
        return "github"
    if host == "bitbucket.org":
        return "bitbucket"
    if host == "codeberg.org":
        return "gitea"
    labels = host.split(".")
    if "gitlab" in labels or host == "gitlab.com":
        return "gitlab"
    if "gitea" in labels or "forgejo" in labels:
        return "gitea"
    return None


def _ref(name: str) -> str:
    # A branch's slashes stay slashes in a path; anything else a URL would read is escaped.
    return quote(name, safe="/")


def pull_request_url(remote_url: str, branch: str, base: str) -> str | None:
    """The forge's page for a new pull request of ``branch`` into ``base``; None for an unknown forge."""
    found = web_repository(remote_url)
    if found is None or not branch or not base:
        return None
    scheme, netloc, path = found
    forge = forge_of(netloc)
    root = f"{scheme}://{netloc}/{path}"
    if forge == "github":
        if path.count("/") != 1:
            return None
        return f"{root}/compare/{_ref(base)}...{_ref(branch)}?expand=1"
    if forge == "gitea":
        if path.count("/") != 1:
            return None
        return f"{root}/compare/{_ref(base)}...{_ref(branch)}"
    if forge == "gitlab":
        query = urlencode({"merge_request[source_branch]": branch, "merge_request[target_branch]": base})
        return f"{root}/-/merge_requests/new?{query}"
    if forge == "bitbucket":
        if path.count("/") != 1:
            return None
        return f"{root}/pull-requests/new?{urlencode({'source': branch, 'dest': base})}"
    return None
