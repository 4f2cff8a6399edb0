// Ledger console: a little progressive enhancement, nothing required. Shows each time's age
// ("3m ago") as its tooltip, and focuses the first input of a form.
(function () {
  "use strict";
  function ago(ms) {
    var s = Math.round(Math.abs(ms) / 1000), future = ms < 0, out;
    if (s < 60) out = s + "s";
    else if (s < 3600) out = Math.floor(s / 60) + "m";
    else if (s < 86400) out = Math.floor(s / 3600) + "h";
    else out = Math.floor(s / 86400) + "d";
    return future ? "in " + out : out + " ago";
  }
  document.addEventListener("DOMContentLoaded", function () {
    var now = Date.now();
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (!isNaN(at)) t.title = ago(now - at);
    });
    var first = document.querySelector("form.confirm input:not([type=hidden]), form.login input[type=password]");
    if (first) first.focus();
  });
})();
