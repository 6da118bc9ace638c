// easyjob dashboard: keeps the #live part of the page fresh by polling
// the page itself (the server answers a request marked X-Easyjob-Partial
// with that part only, from a cache shared by every open page). It does
// nothing while the tab is hidden, while a field in #live has focus or
// while an error's details are open there.
(function () {
  "use strict";
  var every = parseInt(document.body.getAttribute("data-refresh"), 10);
  var live = document.getElementById("live");
  var badge = document.getElementById("live-status");
  if (!every || !live) { return; }
  var busy = false;

  function editing() {
    var a = document.activeElement;
    return a && live.contains(a) && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName);
  }
  function show(ok, text) {
    if (!badge) { return; }
    badge.className = ok ? "ok" : "bad";
    badge.textContent = text;
  }
  function refresh() {
    if (busy || document.hidden || editing() || live.querySelector("details[open]")) { return; }
    busy = true;
    fetch(window.location.href, { headers: { "X-Easyjob-Partial": "1" }, credentials: "same-origin", cache: "no-store" })
      .then(function (res) {
        if (!res.ok) { throw new Error("HTTP " + res.status); }
        return res.text();
      })
      .then(function (html) {
        live.innerHTML = html;
        var now = live.querySelector("[data-clock]");
        var clock = document.getElementById("clock");
        if (now && clock) { clock.textContent = now.getAttribute("data-clock"); }
        show(true, "live");
      })
      .catch(function (err) { show(false, "refresh failed (" + err.message + "), retrying"); })
      .then(function () { busy = false; });
  }
  window.setInterval(refresh, every);
  document.addEventListener("visibilitychange", function () { if (!document.hidden) { refresh(); } });
})();
