// A link to a graph shown on its frame page lands inside a closed fold (<details>): open
// every fold around the link's target, on load and on each in-page jump, so the reader
// sees what the link promised.  Browsers that open folds themselves lose nothing.
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS" && !node.open) {
        node.open = true;
      }
    }
    if (target) {
      target.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTarget);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", openTarget);
  } else {
    openTarget();
  }
})();

// On a narrow screen (a phone, up to 50em), a table wider than the column it sits in is
// cut at the edge and read by scrolling sideways.  Such a table is stacked instead: each row a block,
// each cell a line led by its column's heading (data-label, copied from the table's own
// header row), so every value is in view.  Measured on load, on resize and when a fold
// opens or a tab is shown (a table in a closed fold or a hidden tab has no width).  Without scripts, tables scroll inside
// themselves, as before.
(function () {
  "use strict";
  var STACKED = "torchtrace-stacked";
  // wider screens keep tables whole, a wide one scrolling inside its box: easier to scan
  var NARROW = window.matchMedia ? window.matchMedia("(max-width: 50em)") : null;
  function label(table) {
    if (table.dataset.torchtraceLabelled || !table.tHead || !table.tHead.rows.length) {
      return;
    }
    var heads = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
      return th.textContent.trim();
    });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, i) {
          if (heads[i]) {
            cell.setAttribute("data-label", heads[i]);
          }
        });
      });
    });
    table.dataset.torchtraceLabelled = "1";
  }
  function room(table) {
    // the width of the column: the nearest box that neither scrolls nor is the table's own
    for (var box = table.parentElement; box; box = box.parentElement) {
      var style = getComputedStyle(box);
      if (style.overflowX === "visible" && style.display !== "inline" && box.clientWidth) {
        return box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      }
    }
    return window.innerWidth;
  }
  function narrow() {
    return !!(NARROW && NARROW.matches);
  }
  function fit(table) {
    table.classList.remove(STACKED);
    if (!narrow()) {
      return;
    }
    label(table);
    if (!table.offsetWidth) {
      return; // hidden (a closed fold): measured when it opens
    }
    if (table.scrollWidth > room(table) + 1) {
      table.classList.add(STACKED);
    }
  }
  function fitAll(root) {
    if (!narrow() && !document.querySelector("table." + STACKED)) {
      return; // a wide screen: nothing to measure or label, so a page loads at once
    }
    Array.prototype.forEach.call(
      (root || document).querySelectorAll("table.torchtrace-table"),
      fit
    );
  }
  var pending = 0;
  window.addEventListener("resize", function () {
    window.clearTimeout(pending);
    pending = window.setTimeout(function () { fitAll(); }, 100);
  });
  // a tab of sphinx-design shown (a radio button): its tables had no width until now
  document.addEventListener("change", function (event) {
    if (event.target.type === "radio") {
      fitAll();
    }
  });
  document.addEventListener("toggle", function (event) {
    if (event.target.open) {
      fitAll(event.target);
    }
  }, true);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { fitAll(); });
  } else {
    fitAll();
  }
})();

/* sphinx-torchtrace provenance blocks: a line of one pane highlights the lines it is linked
 * to in the other two (pre-grad -> post-grad -> code, code -> post-grad -> pre-grad,
 * post-grad -> both).  Plain script, no network, no build step; every .torchtrace-provenance block
 * on a page keeps its own state.  DOM contract: see sphinx_torchtrace/render/provenance_html.py. */
(function () {
  "use strict";

  var PANES = ["pre", "post", "code"];
  var NAMES = { pre: "pre-grad graph", post: "post-grad graph", code: "generated code" };

  function listOf(map, key) {
    var value = map && Object.prototype.hasOwnProperty.call(map, key) ? map[key] : null;
    return Array.isArray(value) ? value : [];
  }

  /* Union of map[k] for every k, sorted, without duplicates. */
  function gather(map, keys) {
    var seen = {};
    var out = [];
    keys.forEach(function (k) {
      listOf(map, String(k)).forEach(function (n) {
        if (!seen[n]) {
          seen[n] = true;
          out.push(n);
        }
      });
    });
    return out.sort(function (a, b) { return a - b; });
  }

  function reducedMotion() {
    return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  /* Scroll a pane (never the page) so that a line sits in its middle. */
  function centre(body, line, smooth) {
    if (!body || !line) return;
    var top = line.offsetTop - body.clientHeight / 2 + line.offsetHeight / 2;
    top = Math.max(0, top);
    if (typeof body.scrollTo === "function") {
      body.scrollTo({ top: top, behavior: smooth && !reducedMotion() ? "smooth" : "auto" });
    } else {
      body.scrollTop = top;
    }
  }

  function init(block) {
    if (block.getAttribute("data-torchtrace-ready")) return;
    block.setAttribute("data-torchtrace-ready", "1");
    var data;
    try {
      data = JSON.parse(block.querySelector("script.torchtrace-provenance-maps").textContent);
    } catch (err) {
      return;
    }
    var cpp = block.getAttribute("data-language") === "cpp";
    var maps = {
      preToPost: data.preToPost || {},
      postToPre: data.postToPre || {},
      codeToPost: (cpp ? data.cppCodeToPost : data.pyCodeToPost) || {},
      postToCode: (cpp ? data.postToCppCode : data.postToPyCode) || {}
    };
    var panes = {};
    var bodies = {};
    var lines = {}; // pane -> {line number: element}
    var mapped = {}; // pane -> [elements of linked lines, in order]
    PANES.forEach(function (p) {
      var pane = block.querySelector('.torchtrace-pane[data-pane="' + p + '"]');
      panes[p] = pane;
      bodies[p] = pane ? pane.querySelector(".torchtrace-pane-body") : null;
      lines[p] = {};
      mapped[p] = [];
      if (!bodies[p]) return;
      var all = bodies[p].querySelectorAll(".torchtrace-line");
      for (var i = 0; i < all.length; i++) {
        lines[p][all[i].getAttribute("data-line")] = all[i];
        if (all[i].classList.contains("torchtrace-mapped")) mapped[p].push(all[i]);
      }
    });
    var live = block.querySelector(".torchtrace-live");
    var shown = [];
    var pinned = null; // {pane, line: element}
    var hovered = null;

    function related(pane, n) {
      var key = String(n);
      var out = { pre: [], post: [], code: [] };
      if (pane === "pre") {
        out.post = listOf(maps.preToPost, key);
        out.code = gather(maps.postToCode, out.post);
      } else if (pane === "post") {
        out.pre = listOf(maps.postToPre, key);
        out.code = listOf(maps.postToCode, key);
      } else {
        out.post = listOf(maps.codeToPost, key);
        out.pre = gather(maps.postToPre, out.post);
      }
      return out;
    }

    function clear() {
      shown.forEach(function (el) {
        el.classList.remove("torchtrace-hl", "torchtrace-selected");
        el.removeAttribute("aria-current");
      });
      shown = [];
    }

    /* Highlight a line and its relatives; returns how many related lines were found. */
    function show(pane, line, how) {
      clear();
      line.classList.add("torchtrace-selected");
      if (how.pinned) line.setAttribute("aria-current", "true");
      shown.push(line);
      var rel = related(pane, line.getAttribute("data-line"));
      var count = 0;
      PANES.forEach(function (p) {
        if (p === pane) return;
        var found = [];
        rel[p].forEach(function (n) {
          var el = lines[p][String(n)];
          if (el) {
            el.classList.add("torchtrace-hl");
            shown.push(el);
            found.push(el);
          }
        });
        count += found.length;
        if (how.scroll && found.length) {
          centre(bodies[p], found[Math.floor((found.length - 1) / 2)], true);
        }
      });
      if (how.scrollSource) centre(bodies[pane], line, true);
      return count;
    }

    function announce(text) {
      if (live) live.textContent = text;
    }

    function pin(pane, line, scrollSource) {
      pinned = { pane: pane, line: line };
      var count = show(pane, line, { pinned: true, scroll: true, scrollSource: scrollSource });
      announce(
        count + (count === 1 ? " line related" : " lines related") +
        ". Line " + line.getAttribute("data-line") + " of the " + NAMES[pane] + " selected."
      );
    }

    function unpin() {
      pinned = null;
      hovered = null;
      clear();
      announce("");
    }

    function restore() {
      hovered = null;
      if (pinned) show(pinned.pane, pinned.line, { pinned: true, scroll: false });
      else clear();
    }

    function paneOf(el) {
      var pane = el.closest(".torchtrace-pane");
      return pane ? pane.getAttribute("data-pane") : null;
    }

    function mappedLineAt(target) {
      var line = target && target.closest ? target.closest(".torchtrace-line.torchtrace-mapped") : null;
      return line && block.contains(line) ? line : null;
    }

    block.addEventListener("mouseover", function (event) {
      var line = mappedLineAt(event.target);
      if (line === hovered) return;
      if (!line) {
        if (hovered) restore();
        return;
      }
      hovered = line;
      show(paneOf(line), line, { pinned: pinned && pinned.line === line, scroll: true });
    });
    block.addEventListener("mouseleave", function () {
      if (hovered) restore();
    });
    block.addEventListener("click", function (event) {
      if (event.target.closest && event.target.closest("a")) return; // links navigate
      var selection = window.getSelection ? String(window.getSelection()) : "";
      if (selection) return; // the reader is selecting text to copy
      var line = mappedLineAt(event.target);
      if (line && !(pinned && pinned.line === line)) pin(paneOf(line), line, false);
      else unpin();
    });
    document.addEventListener("click", function (event) {
      if (pinned && !block.contains(event.target)) unpin();
    });

    PANES.forEach(function (p) {
      var pane = panes[p];
      if (!pane) return;
      pane.addEventListener("keydown", function (event) {
        if (event.altKey || event.ctrlKey || event.metaKey) return;
        var key = event.key;
        if (key === "Escape" || key === "Esc") {
          if (pinned) {
            unpin();
            event.preventDefault();
          }
          return;
        }
        var step = 0;
        if (key === "ArrowDown" || key === "Down" || key === "j") step = 1;
        else if (key === "ArrowUp" || key === "Up" || key === "k") step = -1;
        else if (key === "Home") step = -Infinity;
        else if (key === "End") step = Infinity;
        if (!step || !mapped[p].length) return;
        var list = mapped[p];
        var at = pinned && pinned.pane === p ? list.indexOf(pinned.line) : -1;
        var next;
        if (step === -Infinity) next = 0;
        else if (step === Infinity) next = list.length - 1;
        else if (at < 0) next = step > 0 ? 0 : list.length - 1;
        else next = Math.min(list.length - 1, Math.max(0, at + step));
        event.preventDefault();
        hovered = null;
        pin(p, list[next], true);
      });
    });

    /* Expand: the block over the whole window, three panes side by side (CSS), so that
     * whole lines show in a theme's narrow column; the button or Escape brings it back. */
    var expand = block.querySelector("button.torchtrace-provenance-expand");
    function setExpanded(on) {
      block.classList.toggle("torchtrace-provenance-expanded", on);
      expand.setAttribute("aria-pressed", on ? "true" : "false");
      expand.textContent = on ? "Back to the page" : "Expand to the whole window";
      if (document.documentElement) {
        document.documentElement.classList.toggle("torchtrace-provenance-open", on);
      }
      if (pinned) centre(bodies[pinned.pane], pinned.line, false);
    }
    if (expand) {
      expand.hidden = false;
      expand.addEventListener("click", function () {
        setExpanded(!block.classList.contains("torchtrace-provenance-expanded"));
      });
      block.addEventListener("keydown", function (event) {
        var key = event.key;
        if ((key === "Escape" || key === "Esc") && !event.defaultPrevented &&
            block.classList.contains("torchtrace-provenance-expanded")) {
          setExpanded(false);
          expand.focus();
        }
      });
    }

    /* Open the code pane where the work happens (C++: run_impl, Python: call). */
    var start = bodies.code ? bodies.code.getAttribute("data-initial-line") : null;
    var first = start ? lines.code[start] : null;
    if (first) bodies.code.scrollTop = Math.max(0, first.offsetTop - 8);
  }

  function initAll() {
    var blocks = document.querySelectorAll(".torchtrace-provenance");
    for (var i = 0; i < blocks.length; i++) init(blocks[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initAll);
  } else {
    initAll();
  }
})();

// Long code blocks are written highlighted for their first lines only; each later chunk is
// plain text with its tokens in data-runs ("start,end,class,...", offsets in the chunk's
// text) so the page loads like a short one (sphinx_torchtrace/render/lazy_code.py).  A chunk
// gets its spans when it comes near the screen, and every chunk before printing.
(function () {
  "use strict";
  function highlight(chunk) {
    var runs = chunk.getAttribute("data-runs");
    if (runs === null) {
      return;
    }
    chunk.removeAttribute("data-runs");
    var text = chunk.textContent;
    var parts = runs ? runs.split(",") : [];
    var out = document.createDocumentFragment();
    var at = 0;
    for (var i = 0; i + 2 < parts.length; i += 3) {
      var start = +parts[i];
      var end = +parts[i + 1];
      if (!(start >= at && end > start && end <= text.length)) {
        continue;
      }
      if (start > at) {
        out.appendChild(document.createTextNode(text.slice(at, start)));
      }
      var span = document.createElement("span");
      span.className = parts[i + 2];
      span.textContent = text.slice(start, end);
      out.appendChild(span);
      at = end;
    }
    if (at < text.length) {
      out.appendChild(document.createTextNode(text.slice(at)));
    }
    chunk.textContent = "";
    chunk.appendChild(out);
  }
  function all() {
    document.querySelectorAll(".torchtrace-lazy[data-runs]").forEach(highlight);
  }
  function start() {
    var chunks = document.querySelectorAll(".torchtrace-lazy[data-runs]");
    if (!chunks.length) {
      return;
    }
    if (!("IntersectionObserver" in window)) {
      all();
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          observer.unobserve(entry.target);
          highlight(entry.target);
        }
      });
    }, { rootMargin: "1500px 0px" });
    chunks.forEach(function (chunk) { observer.observe(chunk); });
    window.addEventListener("beforeprint", all);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
