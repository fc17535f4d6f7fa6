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
