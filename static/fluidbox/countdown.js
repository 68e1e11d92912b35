// Expiry countdowns for approvals: any element with data-expires-at (ISO 8601).
(function () {
  "use strict";
  function render(el) {
    var left = Math.round((Date.parse(el.dataset.expiresAt) - Date.now()) / 1000);
    if (left <= 0) {
      el.textContent = "expired";
      el.classList.add("fb-expired");
      return;
    }
    var m = Math.floor(left / 60), s = left % 60;
    el.textContent = "expires in " + (m ? m + "m " : "") + s + "s";
  }
  function tick() {
    document.querySelectorAll("[data-expires-at]").forEach(render);
  }
  tick();
  setInterval(tick, 1000);
})();
