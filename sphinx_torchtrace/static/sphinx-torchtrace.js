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
  function fit(table) {
    label(table);
    table.classList.remove(STACKED);
    if (!table.offsetWidth) {
      return; // hidden (a closed fold): measured when it opens
    }
    if (NARROW && NARROW.matches && table.scrollWidth > room(table) + 1) {
      table.classList.add(STACKED);
    }
  }
  function fitAll(root) {
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
