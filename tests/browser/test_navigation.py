"""Reading the site as a user does: following a compile-id badge, searching for a kernel."""

from __future__ import annotations

from collections import Counter

from .conftest import LOGS, PROSE_FRAMES, PageMaker, frame_named, planned


def badge_status(name: str) -> str:
    """The status a badge of this frame shows: over all its attempts, as tlparse colours it."""
    plan = planned(name.split("/", 1)[0])
    return plan.badge_status(frame_named(name))


def test_prose_badges_show_each_status_and_lead_to_the_frame(open_page: PageMaker) -> None:
    page = open_page("prose")
    for name in PROSE_FRAMES:
        frame = frame_named(name)
        # the prose page is at the root: links to frames start with the frame's docname
        link = page.locator(f'article a[href^="{frame.docname}.html"]').first
        status = badge_status(name)
        badge = link.locator(f".torchtrace-status-{status}")
        assert badge.count() == 1, f"{name}: no badge of status {status!r}"
        # the page links frames of two traces: each badge names its trace (``train/[0/0]``)
        assert badge.inner_text() == name


def test_clicking_a_break_badge_opens_its_frame_page(open_page: PageMaker) -> None:
    frame = frame_named("err/[3/0]")
    assert badge_status("err/[3/0]") == "break"
    page = open_page("prose")
    page.locator(".torchtrace-status-break", has_text="[3/0]").first.click()
    page.wait_for_url(f"**/{frame.docname}.html*")
    assert "[3/0]" in page.title()
    assert page.locator("h1").first.inner_text().startswith("err · [3/0]")


def unique_kernel() -> tuple[str, str]:
    """(name, docname) of a generated kernel no other trace of the site names the same."""
    kernels = [k for label in LOGS for f in planned(label).frames for k in f.kernels]
    counts = Counter(k.kernel.name for k in kernels)
    for kernel in kernels:
        if kernel.kernel.name.startswith("cpp_fused") and counts[kernel.kernel.name] == 1:
            return kernel.kernel.name, kernel.docname
    raise AssertionError("no kernel with a unique name in the site's traces")


def test_search_finds_the_kernel_page(open_page: PageMaker) -> None:
    name, docname = unique_kernel()
    page = open_page("search", query=f"?q={name}")
    page.wait_for_function(
        "() => { const h = document.querySelector('#search-results h2');"
        " return !!h && h.textContent.includes('Search Results'); }"
    )
    hrefs = page.locator("#search-results ul.search li > a").evaluate_all(
        "links => links.map(a => a.getAttribute('href'))"
    )
    assert any(f"{docname}.html" in href for href in hrefs), hrefs
    page.locator(f'#search-results a[href*="{docname}.html"]').first.click()
    page.wait_for_url(f"**/{docname}.html*")
    if "/kernel-" in docname:  # a page of its own
        assert name in page.locator("h1").first.inner_text()
        return
    # folded on its frame page: the link lands in the fold, which opens
    target = page.evaluate("() => decodeURIComponent(location.hash.slice(1))")
    fold = page.locator("details", has=page.locator(f'[id="{target}"]')).last
    assert fold.evaluate("d => d.open")
    assert name in fold.locator("summary").first.inner_text()
    assert page.locator(f'[id="{target}"]').is_visible()
