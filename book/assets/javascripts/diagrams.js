// The book's diagrams. Mermaid draws each one into the page itself (Material would draw it into
// a closed shadow root that no stylesheet reaches), at its natural size: a diagram wider than
// the column scrolls sideways inside its frame instead of shrinking its labels to a few pixels,
// on a phone as on a wide desktop diagram. The theme follows the page's colour scheme, and a
// diagram is drawn again when the reader switches it, so lines and arrowheads stay visible.
(function () {
  "use strict";
  const diagrams = [];

  function theme() {
    return document.body.getAttribute("data-md-color-scheme") === "slate" ? "dark" : "default";
  }

  function collect() {
    document.querySelectorAll("pre.clawbook-diagram").forEach(function (pre) {
      const frame = document.createElement("div");
      frame.className = "clawbook-diagram";
      frame.tabIndex = 0; // a frame that scrolls can be scrolled with the keyboard
      diagrams.push({ frame: frame, source: pre.textContent });
      pre.replaceWith(frame);
    });
  }

  let drawing = Promise.resolve();

  function drawAll() {
    drawing = drawing.then(async function () {
      window.mermaid.initialize({ startOnLoad: false, theme: theme(), securityLevel: "strict" });
      for (let index = 0; index < diagrams.length; index += 1) {
        const diagram = diagrams[index];
        try {
          const result = await window.mermaid.render("clawbook-diagram-" + index, diagram.source);
          diagram.frame.innerHTML = result.svg;
        } catch (error) {
          diagram.frame.textContent = "This diagram could not be drawn: " + error;
          continue;
        }
        fit(diagram.frame);
      }
    });
  }

  // Shrink a diagram to the column only down to SMALLEST of its natural size (labels stay at
  // 12 px or more); past that it keeps its size and the frame scrolls sideways.
  const SMALLEST = 0.75;

  function fit(frame) {
    const svg = frame.querySelector("svg");
    const box = svg && svg.viewBox && svg.viewBox.baseVal;
    if (!box || box.width <= 0) {
      return;
    }
    const room = frame.clientWidth || box.width;
    const scale = Math.min(1, Math.max(SMALLEST, room / box.width));
    svg.setAttribute("width", String(Math.ceil(box.width * scale)));
    svg.setAttribute("height", String(Math.ceil(box.height * scale)));
    svg.style.maxWidth = "none";
    // A frame that scrolls says so: a diagram cut at the column's edge must not look whole.
    frame.classList.toggle("clawbook-scrolls", frame.scrollWidth > frame.clientWidth + 1);
  }

  document.addEventListener("DOMContentLoaded", function () {
    collect();
    if (diagrams.length === 0 || !window.mermaid) {
      return;
    }
    drawAll();
    window.addEventListener("resize", function () {
      diagrams.forEach(function (diagram) {
        fit(diagram.frame);
      });
    });
    new MutationObserver(drawAll).observe(document.body, {
      attributes: true,
      attributeFilter: ["data-md-color-scheme"],
    });
  });
})();
