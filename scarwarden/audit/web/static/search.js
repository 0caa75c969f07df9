// Client-side search for the static export (`scarwarden audit --html`): no server.
// The data is search-data.js (window.SCARWARDEN_SEARCH, written by the export); results
// are built with textContent only, so text from episodes can never become markup.
// Loaded as a file, never inline, so the pages keep a CSP with no 'unsafe-inline'.
(function () {
  "use strict";
  function words(text) {
    return text.toLowerCase().split(/[^\p{L}\p{N}-]+/u).filter(Boolean);
  }
  function matches(entry, terms) {
    var hay = entry.text.toLowerCase();
    return terms.every(function (t) { return hay.indexOf(t) !== -1; });
  }
  function show(list, input, items) {
    var root = input.getAttribute("data-root") || "";
    var terms = words(input.value);
    while (list.firstChild) { list.removeChild(list.firstChild); }
    if (!terms.length) { return; }
    var found = items.filter(function (e) { return matches(e, terms); }).slice(0, 50);
    var note = document.getElementById("search-count");
    if (note) { note.textContent = found.length ? found.length + (found.length === 50 ? "+" : "") + " found" : "nothing found"; }
    found.forEach(function (e) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = root + e.href;
      a.textContent = e.id;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" " + e.title));
      list.appendChild(li);
    });
  }
  function start() {
    var input = document.getElementById("static-search");
    var list = document.getElementById("search-results");
    var items = window.SCARWARDEN_SEARCH || [];
    if (!input || !list) { return; }
    input.hidden = false;
    input.addEventListener("input", function () { show(list, input, items); });
    if (input.value) { show(list, input, items); }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
