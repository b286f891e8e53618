/* The review desk's keyboard and highlight behaviour. htmx does the requests; this file only moves focus,
   marks the fields a rule involves, scrolls the proof into view and zooms the page.
   Keys: j/k next/previous field, Enter shows the proof, e edits, v verifies, n opens the next document. */
(function () {
  "use strict";
  var ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];
  var zoomIndex = 2;

  function fieldLinks() { return Array.prototype.slice.call(document.querySelectorAll("#fields a.field")); }
  function isTyping(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  function byPath(path) {
    return fieldLinks().filter(function (a) { return a.getAttribute("data-path") === path; })[0] || null;
  }
  function setCurrent(el) {
    document.querySelectorAll("#fields a.field.current").forEach(function (a) { a.classList.remove("current"); });
    if (el) { el.classList.add("current"); }
  }
  function focusField(el) {
    if (!el) { return; }
    setCurrent(el);
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
  }
  function current() {
    var a = document.activeElement;
    if (a && a.matches && a.matches("#fields a.field")) { return a; }
    return document.querySelector("#fields a.field.current");
  }
  function move(step) {
    var list = fieldLinks();
    if (!list.length) { return; }
    var cur = current();
    var i = cur ? list.indexOf(cur) + step : 0;
    focusField(list[Math.max(0, Math.min(list.length - 1, i))]);
  }
  function edit() {
    var cur = current();
    var link = cur && cur.parentElement.querySelector(".edit-link");
    if (link) { link.click(); }
  }
  function verify() {
    var form = document.getElementById("verify-form");
    if (!form) { return; }
    var note = form.querySelector("textarea[name=note]");
    if (note && !note.value.trim()) {
      form.querySelector("[data-note]").classList.remove("hidden-until-needed");
      note.focus();
      return;
    }
    form.requestSubmit();
  }
  function next() {
    var form = document.getElementById("next-form");
    if (form) { form.requestSubmit(); }
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var t = ev.target;
    if (isTyping(t)) {
      var editing = t.closest && t.closest(".edit-form");
      if (ev.key === "Escape" && editing) {
        var cancel = editing.querySelector(".cancel");
        if (cancel) { ev.preventDefault(); cancel.click(); }
      } else if (ev.key === "Enter" && t.tagName === "TEXTAREA" && !ev.shiftKey && t.form) {
        ev.preventDefault();
        t.form.requestSubmit();
      }
      return;
    }
    if (ev.key === "j") { move(1); }
    else if (ev.key === "k") { move(-1); }
    else if (ev.key === "e") { edit(); }
    else if (ev.key === "v") { verify(); }
    else if (ev.key === "n") { next(); }
    else { return; }
    ev.preventDefault();
  });

  document.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("#fields a.field");
    if (a) { setCurrent(a); }
  });

  function involves(list, path) {
    return list.some(function (p) { return p === path || path.indexOf(p + "[") === 0 || path.indexOf(p + ".") === 0; });
  }

  function markFields(pane) {
    var path = pane.getAttribute("data-field") || "";
    var list = (pane.getAttribute("data-fields") || "").split("|").filter(Boolean);
    fieldLinks().forEach(function (a) {
      var p = a.getAttribute("data-path");
      a.classList.toggle("selected", !!path && p === path);
      a.classList.toggle("involved", list.length > 0 && involves(list, p));
    });
    var firstInvolved = document.querySelector("#fields a.field.involved");
    if (firstInvolved) { firstInvolved.scrollIntoView({ block: "nearest" }); }
    document.querySelectorAll("#violations a.rule").forEach(function (r) {
      r.classList.toggle("selected", r.getAttribute("data-violation") === pane.getAttribute("data-violation"));
    });
  }

  function applyZoom() {
    var frame = document.querySelector("#page-pane .page-frame");
    if (frame) { frame.style.width = (ZOOMS[zoomIndex] * 100) + "%"; }
    var label = document.getElementById("zoom-level");
    if (label) { label.textContent = Math.round(ZOOMS[zoomIndex] * 100) + "%"; }
  }

  // Proof boxes carry their place as data (fractions of the page); the Content-Security-Policy allows no
  // style attributes, so they are placed here, through the CSSOM.
  function placeBoxes(root) {
    root.querySelectorAll(".proof-box").forEach(function (box) {
      ["left", "top", "width", "height"].forEach(function (side) {
        box.style[side] = (parseFloat(box.getAttribute("data-" + side)) * 100) + "%";
      });
    });
  }

  function showProof(pane) {
    placeBoxes(pane);
    applyZoom();
    markFields(pane);
    var box = pane.querySelector(".proof-box");
    if (box) { box.scrollIntoView({ block: "center", inline: "center" }); }
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("[data-zoom]");
    if (!b) { return; }
    zoomIndex = Math.max(0, Math.min(ZOOMS.length - 1, zoomIndex + parseInt(b.getAttribute("data-zoom"), 10)));
    applyZoom();
    var box = document.querySelector("#page-pane .proof-box");
    if (box) { box.scrollIntoView({ block: "center", inline: "center" }); }
  });

  document.addEventListener("htmx:afterSwap", function (ev) {
    var el = ev.detail.elt;
    var pane = document.getElementById("page-pane");
    if (pane && (el === pane || (el.id === "page-pane"))) { showProof(pane); }
    var fields = document.getElementById("fields");
    if (fields && (el === fields || el.id === "fields")) {
      var path = fields.getAttribute("data-focus");
      if (path) { focusField(byPath(path)); }
      if (pane) { markFields(pane); }
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var fields = document.getElementById("fields");
    if (!fields) { return; }
    var pane = document.getElementById("page-pane");
    if (pane) { showProof(pane); }
    if (document.querySelector("#fields .edit-form")) { return; }  // autofocus is on the edit box
    var wanted = fields.getAttribute("data-focus");
    var first = (wanted && byPath(wanted)) || document.querySelector("#fields .cell.flagged a.field") || fieldLinks()[0];
    focusField(first);
  });
})();
