// Wide tables. Material wraps each table in a box that scrolls sideways; on a phone a table of
// four columns can end at the screen's edge with nothing to say that more columns follow. A box
// whose table is wider than the column gets the class clawbook-scrolls, and the stylesheet
// draws the cue: a shadow at the cut edge and a line under the table, as for a wide diagram.
(function () {
  "use strict";

  function mark() {
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (box) {
      box.classList.toggle("clawbook-scrolls", box.scrollWidth > box.clientWidth + 1);
      box.tabIndex = box.classList.contains("clawbook-scrolls") ? 0 : -1;
    });
  }

  // Material wraps the tables once its own script has run: look after it, and again whenever
  // the width changes (a phone turned sideways may hold the whole table).
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () {
      window.setTimeout(mark, 0);
    });
  }
  window.addEventListener("load", mark);
  window.addEventListener("resize", mark);
})();
