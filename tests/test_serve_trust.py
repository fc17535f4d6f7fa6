"""``serve`` answers only its own host names, and only with files inside its folder.

A page on another site can point a name of its own at 127.0.0.1 (DNS rebinding) and read
a preview running on a developer's machine: the request then carries that name in its
``Host``, and is refused.  A link in the served folder that leads out of it (to a key, a
config) is "not found", as every reader of a folder the user named decides
(:mod:`sphinx_torchtrace.trace.folders`).  Checked with a real server on a free port and
real sockets, a forged ``Host`` header and real links to a canary outside.
"""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CANARY = "canary-7f3a-outside-the-served-folder"
PAGE = "<p>Compile report</p>"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A served folder with links inside and out, and a FIFO; a canary outside it."""
    base = tmp_path_factory.mktemp("serve")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.html").write_text(CANARY, encoding="utf-8")
    folder = base / "site"
    (folder / "sub").mkdir(parents=True)
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    (folder / "sub" / "page.html").write_text(PAGE, encoding="utf-8")
    (folder / "leak.html").symlink_to(outside / "secret.html")
    (folder / "out").symlink_to(outside, target_is_directory=True)
    (folder / "alias.html").symlink_to(folder / "index.html")  # inside: still served
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe.html")  # reading it would block the server's thread
    return folder


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[tuple[int, str]]:
    """``sphinx-torchtrace serve`` on a free port: (port, the line it printed)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sphinx_torchtrace", "serve", str(site), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, line
        yield int(found.group(1)), line
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def get(port: int, path: str, hosts: list[str] | None) -> tuple[int, str]:
    """GET ``path`` over a real socket with these ``Host`` headers (None: the right one)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.putrequest("GET", path, skip_host=hosts is not None)
        for host in hosts or []:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def test_the_ready_line_says_which_names_it_answers(server: tuple[int, str]) -> None:
    _, line = server
    assert "answers only requests for 127.0.0.1, localhost or [::1]" in line


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:{port}", "localhost:{port}", "LocalHost:{port}", "[::1]:{port}", "localhost"],
)
def test_its_own_names_get_the_report(server: tuple[int, str], host: str) -> None:
    port, _ = server
    assert get(port, "/index.html", [host.format(port=port)]) == (200, PAGE)


@pytest.mark.parametrize(
    "hosts",
    [
        ["attacker.example:{port}"],  # a rebound name, as a browser sends it
        ["attacker.example"],
        ["localhost.attacker.example:{port}"],
        ["127.0.0.1.nip.io:{port}"],
        ["127.0.0.1:{other}"],  # another port: another server's name
        [],  # no Host at all
        ["127.0.0.1:{port}", "attacker.example"],  # two: which one would a proxy read?
    ],
)
def test_any_other_host_name_is_refused(server: tuple[int, str], hosts: list[str]) -> None:
    port, _ = server
    status, body = get(port, "/index.html", [h.format(port=port, other=port + 1) for h in hosts])
    assert status == 403
    assert "Compile report" not in body
    assert "answers only requests for 127.0.0.1, localhost or [::1]" in body


@pytest.mark.parametrize("path", ["/leak.html", "/out/secret.html", "/out/", "/out"])
def test_a_link_out_of_the_folder_is_not_found(server: tuple[int, str], path: str) -> None:
    port, _ = server
    status, body = get(port, path, None)
    assert status == 404 and CANARY not in body and "secret.html" not in body


def test_a_link_inside_the_folder_and_a_subfolder_are_served(server: tuple[int, str]) -> None:
    port, _ = server
    assert get(port, "/alias.html", None) == (200, PAGE)
    assert get(port, "/sub/page.html", None) == (200, PAGE)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_not_found_rather_than_read_for_ever(server: tuple[int, str]) -> None:
    port, _ = server
    assert get(port, "/pipe.html", None)[0] == 404
    assert get(port, "/index.html", None) == (200, PAGE)  # still serving
