/* The Types page: a rule shows only the parameters of the kind picked, with what that kind checks. Without
   script the page shows them once the draft comes back from "Check and preview". Delegated, so rows htmx swaps
   in work too. */
(function () {
  "use strict";
  function show(select) {
    var row = select.closest(".rule-row");
    if (!row) { return; }
    var kind = select.value;
    row.setAttribute("data-kind", kind);
    row.querySelectorAll("label.param").forEach(function (label) {
      var kinds = (label.getAttribute("data-kinds") || "").split(" ");
      label.hidden = kinds.indexOf(kind) < 0;
    });
    var explains = row.querySelector(".kind-explains");
    var option = select.options[select.selectedIndex];
    if (explains) { explains.textContent = (option && option.getAttribute("data-explains")) || ""; }
  }
  // a field picked beside an expression is written into it where the cursor is, so its key is never typed
  function insert(select) {
    var box = document.getElementById(select.getAttribute("data-into"));
    if (!box || !select.value) { return; }
    var at = box.selectionStart === null ? box.value.length : box.selectionStart;
    var before = box.value.slice(0, at), after = box.value.slice(at);
    // spaced from what is around it, and followed by one, so what is typed next (an operator) stands apart
    var text = (before && !/\s$/.test(before) ? " " : "") + select.value + (/^\s/.test(after) ? "" : " ");
    box.value = before + text + after;
    select.value = "";
    box.focus();
    box.setSelectionRange(before.length + text.length, before.length + text.length);
  }
  document.addEventListener("change", function (event) {
    if (!event.target.matches) { return; }
    if (event.target.matches("select.rule-kind")) { show(event.target); }
    if (event.target.matches("select.insert-field")) { insert(event.target); }
  });
}());
