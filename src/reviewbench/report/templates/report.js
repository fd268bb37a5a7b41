// reviewbench report: tile hover details and the charts. Text is only ever set through
// textContent; chart specs are parsed from a JSON block, never evaluated.
(function () {
  "use strict";
  var detail = document.getElementById("tile-detail");
  function show(event) {
    var cell = event.target.closest ? event.target.closest("td.tile") : null;
    if (cell && detail) { detail.textContent = cell.getAttribute("title") || ""; }
  }
  document.addEventListener("mouseover", show);
  document.addEventListener("focusin", show);

  var specs = JSON.parse(document.getElementById("chart-specs").textContent);
  var ids = Object.keys(specs);
  if (typeof window.vegaEmbed !== "function") {
    console.error("reviewbench: the inlined chart runtime did not load");
    document.body.setAttribute("data-ready", "error");
    return;
  }
  Promise.all(ids.map(function (id) {
    return window.vegaEmbed("#" + id, specs[id], { actions: false, renderer: "svg" });
  })).then(function () {
    document.body.setAttribute("data-ready", "1");
  }, function (error) {
    console.error("reviewbench: a chart failed to render:", error);
    document.body.setAttribute("data-ready", "error");
  });
}());
