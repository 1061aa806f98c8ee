/* Kenning UI: progressive enhancement only — every page works without this file. No network requests.
   - hover/focus tooltips for chart marks (data-tip)
   - click a month bar to highlight its row and show its details
   - date inputs marked .autosubmit submit their form when changed
   - buttons with data-confirm ask first */
(function () {
  "use strict";
  function ready(fn) { if (document.readyState !== "loading") fn(); else document.addEventListener("DOMContentLoaded", fn); }
  ready(function () {
    var tip = document.createElement("div");
    tip.id = "tip";
    document.body.appendChild(tip);
    document.querySelectorAll("[data-tip]").forEach(function (el) {
      function show(ev) {
        tip.textContent = el.getAttribute("data-tip");   /* textContent: never parsed as HTML */
        tip.style.display = "block";
        var r = el.getBoundingClientRect();
        var x = ev && ev.clientX ? ev.clientX : r.left, y = ev && ev.clientY ? ev.clientY : r.top;
        tip.style.left = (x + 12) + "px"; tip.style.top = (y + 12) + "px";
      }
      el.addEventListener("mousemove", show); el.addEventListener("focus", show);
      el.addEventListener("mouseleave", function () { tip.style.display = "none"; });
      el.addEventListener("blur", function () { tip.style.display = "none"; });
    });
    var detail = document.getElementById("month-detail");
    document.querySelectorAll("svg .month").forEach(function (bar) {
      bar.addEventListener("click", function () {
        var i = bar.getAttribute("data-month");
        document.querySelectorAll("svg .month.on, tr.on").forEach(function (x) { x.classList.remove("on"); });
        bar.classList.add("on");
        var row = document.getElementById("month-" + i);
        if (row) {
          row.classList.add("on");
          if (detail) detail.textContent = Array.prototype.map.call(row.cells, function (c) { return c.textContent.trim(); })
            .filter(Boolean).join(" · ");
          row.scrollIntoView({ block: "nearest" });
        }
      });
    });
    document.querySelectorAll("input.autosubmit").forEach(function (inp) {
      inp.addEventListener("change", function () { if (inp.form) inp.form.submit(); });
    });
    document.querySelectorAll("button[data-confirm]").forEach(function (b) {
      b.addEventListener("click", function (ev) { if (!window.confirm(b.getAttribute("data-confirm"))) ev.preventDefault(); });
    });
    var focus = document.querySelector(".msg.focus");
    if (focus) focus.scrollIntoView({ block: "center" });
  });
})();
