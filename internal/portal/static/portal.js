// zhizhi portal: counts how a reader interacts with the page — scrolls,
// pointer moves, key presses, clicks, tab switches — by type only, and
// posts the counts to the portal itself every few seconds and when the
// page is left. No identifier, nothing kept in the browser, no text, no
// position, no request to any other site. The counts tell readers from
// scripts; each post carries the token the page was served with, the
// proof that a browser ran this page.
(function () {
  "use strict";
  var types = ["scroll", "pointer", "key", "click", "visibility"];
  var counts = {};
  var pending = false;
  var meta = document.querySelector('meta[name="zhizhi-beacon"]');
  var token = meta ? meta.getAttribute("content") : "";
  function reset() {
    types.forEach(function (t) { counts[t] = 0; });
    pending = false;
  }
  function bump(t) {
    counts[t]++;
    pending = true;
  }
  function send() {
    if (!pending) {
      return;
    }
    var body = JSON.stringify({scroll: counts.scroll, pointer: counts.pointer, key: counts.key,
      click: counts.click, visibility: counts.visibility, token: token});
    reset();
    try {
      fetch("/beacon", {method: "POST", body: body, keepalive: true, credentials: "omit",
        headers: {"Content-Type": "application/json"}}).catch(function () {});
    } catch (e) {
      // A browser without fetch: the counts are lost, the page still works.
    }
  }
  reset();
  window.addEventListener("scroll", function () { bump("scroll"); }, {passive: true});
  document.addEventListener("pointermove", function () { bump("pointer"); }, {passive: true});
  document.addEventListener("keydown", function () { bump("key"); });
  // Capture phase: a click that leaves the page still reports first.
  document.addEventListener("click", function () { bump("click"); send(); }, true);
  document.addEventListener("visibilitychange", function () {
    bump("visibility");
    if (document.visibilityState === "hidden") {
      send();
    }
  });
  window.addEventListener("pagehide", send);
  setInterval(send, 3000);
}());
