/* The review desk's behaviour. htmx does the requests; this file selects fields and rules, takes values from
   the page, moves focus and answers the keyboard. Every shortcut is listed in the dialog `?` opens; none fires
   while typing. Every field's proof boxes travel on its link and are drawn, hidden, on the page shown as soon as
   the page or the fields arrive: a click only flips classes and text, and reads no layout (what needs the
   page's geometry, like scrolling a box into view, runs in the next animation frame). */
(function () {
  "use strict";
  var desk, pane, viewer, selection = null, pendingFocus = null, lastFocus = null, noteFrom = null, marked = [];
  var stages = {};  // page number -> the page's stage element, fetched once: another page shows without a request
  var PREFETCH = 12;
  var REMEMBER_MS = 200;  // how long a selection rests before the address records it
  var DOUBLE_CLICK_MS = 300, singleTake = null;  // a word's click waits this long for a double-click (its line)
  var headReserved = 0;  // the proof head's tallest height yet: it never shrinks, so the page below stays put
  var shownStage = null;  // the page stage laid out last: a swap that brings another one is a new page
  var proofs = {};  // path -> its proof boxes on every page, read from the field links when they arrive

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function fieldLinks() { return $all("#fields a.field"); }
  function ruleLinks() { return $all("#violations a.rule"); }
  function byPath(path) {
    return path ? $('#fields a.field[data-path="' + (window.CSS && CSS.escape ? CSS.escape(path) : path) + '"]') : null;
  }
  function isTyping(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  function canPick() {
    return desk && desk.getAttribute("data-can-edit") === "1" && !desk.classList.contains("stale") && !!$("#take-form");
  }

  /* Scroll a list (not the window) so `el` is visible inside it, in the next frame: measuring now would make
     the browser lay out the classes just changed twice. */
  function keepVisible(el, container) {
    if (!el || !container) { return; }
    window.requestAnimationFrame(function () {
      var r = el.getBoundingClientRect(), c = container.getBoundingClientRect();
      if (r.top < c.top) { container.scrollTop -= c.top - r.top + 8; }
      else if (r.bottom > c.bottom) { container.scrollTop += r.bottom - c.bottom + 8; }
    });
  }

  function setCurrent(el) {
    $all("#fields a.field.current").forEach(function (a) { a.classList.remove("current"); });
    if (el) { el.classList.add("current"); }
  }
  function focusField(el) {
    if (!el) { return; }
    setCurrent(el);
    el.focus({ preventScroll: true });
    keepVisible(el, $("#fields"));
  }
  function current() {
    var a = document.activeElement;
    if (a && a.matches && a.matches("#fields a.field")) { return a; }
    return $("#fields a.field.current");
  }
  function move(step) {
    var list = fieldLinks();
    if (!list.length) { return; }
    var cur = current();
    var i = cur ? list.indexOf(cur) + step : 0;
    focusField(list[Math.max(0, Math.min(list.length - 1, i))]);
  }

  /* --- selection: a field, or every field a rule involves --- */

  function selectedLinks(sel) {
    if (!sel) { return []; }
    if (sel.path) { var a = byPath(sel.path); return a ? [a] : []; }
    // the server says which fields the rule involves (extraction/involved.py): the links of those paths
    return fieldLinks().filter(function (a) { return sel.involved.indexOf(a.getAttribute("data-path")) >= 0; });
  }

  /* Give `container` one `tag` child per item, reusing those it has (and hiding the spare ones): the proof
     head changes on every click, and making its elements anew each time is work the click can do without. */
  function fill(container, tag, items, apply) {
    var kids = container.children;
    items.forEach(function (item, i) {
      var el = kids[i];
      if (!el) { el = document.createElement(tag); container.appendChild(el); }
      el.hidden = false;
      apply(el, item);
    });
    for (var k = items.length; k < kids.length; k++) { kids[k].hidden = true; }
  }
  function note(el, n) { el.className = "proof-note " + n[0]; el.textContent = n[1]; }

  function headFor(sel, links) {
    var head = $("#proof-head");
    if (!head) { return; }
    var title = $(".proof-title", head), notes = $(".proof-notes", head), stepper = $(".proof-pages", head);
    var said = [], words = "Select a field to see where it was read.", name = "";
    if (sel && sel.path && links[0]) {
      words = "Proof of ";
      name = links[0].getAttribute("data-label") || sel.path;
      var raw = links[0].getAttribute("data-notes");
      said = raw ? JSON.parse(raw) : [];
      if (canPick()) {
        said.push(["hint", pickMode() === "proof"
          ? "Click a word or line on the page to move this proof there (the value stays)."
          : "Click a word or line on the page (Shift-drag for several) to take it as this value and its proof."]);
      }
    } else if (sel) {
      words = "Proofs of: ";
      name = sel.label || "the rule's fields";
      if (!sel.boxes.length) { said.push(["bad", "None of the fields this rule involves has a proof on the page."]); }
    }
    // the title is a text and a <b>: kept, their text changed
    var lead = title.firstChild, b = title.querySelector("b");
    if (!lead || lead.nodeType !== 3 || !b || title.childNodes.length !== 2) {
      title.textContent = "";
      lead = title.appendChild(document.createTextNode(""));
      b = title.appendChild(document.createElement("b"));
    }
    lead.data = words;
    b.textContent = name;
    b.hidden = !name;
    fill(notes, "p", said, note);
    var pages = sel && sel.pages && sel.pages.length > 1 ? sel.pages : [];
    if (!stepper.firstChild || stepper.firstChild.nodeType !== 3) { stepper.textContent = ""; stepper.appendChild(document.createTextNode("")); }
    stepper.firstChild.data = pages.length ? "on pages " : "";
    var buttons = stepper.querySelector(".page-steps") || stepper.appendChild(document.createElement("span"));
    buttons.className = "page-steps";
    fill(buttons, "button", pages, function (btn, n) {
      btn.type = "button";
      btn.className = "secondary page-step";
      btn.setAttribute("data-goto", String(n));
      btn.textContent = String(n);
      btn.setAttribute("aria-label", "Show page " + n);
    });
  }

  /* The proof head sits above the page: when its notes grow (a take adds "Corrected by a reviewer"), the page
     would drop under the pointer. Its height is reserved (it never shrinks back) and a growth is scrolled
     away, so the page stays where it was on the screen. Watched after the browser's layout, so a click
     measures nothing. */
  function keepPageStill() {
    var head = $("#proof-head"), last = 0;
    if (!head || !window.ResizeObserver) { return; }
    new window.ResizeObserver(function () {
      var height = head.offsetHeight;  // laid out already: reading it costs nothing
      if (height > headReserved) { headReserved = height; head.style.minHeight = height + "px"; }
      if (height > last && last > 0 && viewer && viewer.viewport) { viewer.viewport.scrollTop += height - last; }
      last = Math.max(last, height);
    }).observe(head);
  }

  /* Every field's boxes, read from the links, drawn hidden on the page shown: after the page or a field changed. */
  function buildBoxes() {
    var old = {};
    proofs = {};
    fieldLinks().forEach(function (a) {
      var path = a.getAttribute("data-path");
      proofs[path] = window.ProofViewer.parseBoxes(a.getAttribute("data-boxes"), path);
      if (a.hasAttribute("data-old")) { old[path] = true; }
    });
    if (viewer) { viewer.build(proofs, old); }
  }

  function select(sel) {
    selection = sel;
    var links = selectedLinks(sel), boxes = [];
    links.forEach(function (a) {
      var path = a.getAttribute("data-path");
      boxes = boxes.concat(proofs[path] || window.ProofViewer.parseBoxes(a.getAttribute("data-boxes"), path));
    });
    if (sel) {
      sel.boxes = boxes;
      sel.pages = boxes.map(function (b) { return b.page; }).filter(function (n, i, all) { return all.indexOf(n) === i; })
        .sort(function (x, y) { return x - y; });
    }
    // only the links that change are touched: restyling every field would cost a layout of the whole pane
    marked.forEach(function (el) { el.classList.remove("selected", "involved"); });
    marked = links.slice();
    links.forEach(function (a) { a.classList.add(sel && sel.path ? "selected" : "involved"); });
    if (sel && sel.violation) {
      var rule = $('#violations a.rule[data-violation="' + sel.violation + '"]');
      if (rule) { rule.classList.add("selected"); marked.push(rule); }
    }
    $all(".thumb").forEach(function (t) {
      t.classList.toggle("has-proof", !!sel && sel.pages.indexOf(parseInt(t.getAttribute("data-page"), 10)) >= 0);
    });
    if (pane) {
      pane.setAttribute("data-field", sel && sel.path ? sel.path : "");
      pane.setAttribute("data-violation", sel && sel.violation ? sel.violation : "");
      pane.setAttribute("data-fields", sel && sel.fields ? sel.fields.join("|") : "");
    }
    desk.classList.toggle("picking", !!(sel && sel.path) && canPick());
    headFor(sel, links);
    if (!viewer) { return; }
    viewer.boxes = boxes;
    if (sel && sel.pages.length && sel.pages.indexOf(viewer.pageNumber()) < 0) {
      goToPage(sel.pages[0]);
    } else {
      viewer.show(boxes);
    }
  }

  function selectField(a, push) {
    setCurrent(a);
    select({ path: a.getAttribute("data-path") });
    if (push !== false) { remember("field", a.getAttribute("data-path")); }
  }
  function selectRule(r) {
    function list(name) { return (r.getAttribute(name) || "").split("|").filter(Boolean); }
    var label = r.querySelector(".rule-field");
    select({ violation: r.getAttribute("data-violation"), fields: list("data-fields"), involved: list("data-involved"),
             label: (r.closest(".rule-group") && $(".rule-title", r.closest(".rule-group")).textContent) || (label && label.textContent) });
    var first = byPath(r.getAttribute("data-first") || "");
    if (first) { setCurrent(first); keepVisible(first, $("#fields")); }
    remember("violation", r.getAttribute("data-violation"));
  }
  /* The address says what is selected (a reload shows it again). Writing it costs the browser more than the
     highlight does: it is written once the selection has rested a moment, after the highlight is painted. */
  var rememberLater = null;
  function remember(key, value) {
    clearTimeout(rememberLater);
    rememberLater = setTimeout(function () {
      var url = new URL(window.location.href);
      ["field", "violation", "edit", "page"].forEach(function (k) { url.searchParams.delete(k); });
      url.searchParams.set(key, value);
      window.history.replaceState(null, "", url.toString());
    }, REMEMBER_MS);
  }

  function stageUrl(n) { return desk.getAttribute("data-proof-url") + "?page=" + encodeURIComponent(n); }
  function goToPage(n) {
    var stage = $("#page-stage");
    if (!stage || !n || String(n) === stage.getAttribute("data-page")) { return; }
    if (stages[n]) {  // fetched already: its element goes in at once (no parsing), this one waits for its turn
      stages[stage.getAttribute("data-page")] = stage;
      stage.replaceWith(stages[n]);
      stageSwapped();
      return;
    }
    window.htmx.ajax("GET", stageUrl(n), { target: "#page-stage", swap: "outerHTML settle:0ms" });
  }
  /* Fetch the other pages (their image too) once the desk is idle, so stepping between pages is instant. */
  function prefetch() {
    var stage = $("#page-stage");
    if (!stage || !window.fetch) { return; }
    var total = Math.min(parseInt(stage.getAttribute("data-pages") || "1", 10), PREFETCH);
    var here = stage.getAttribute("data-page");
    for (var n = 1; n <= total; n++) {
      if (String(n) === here) { stages[n] = stage; continue; }
      (function (page) {
        window.fetch(stageUrl(page), { headers: { "HX-Request": "true" }, credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (!html || stages[page]) { return; }
            var holder = document.createElement("div");
            holder.innerHTML = html.trim();
            stages[page] = holder.firstElementChild;
            var img = holder.querySelector("img.page-image");
            if (img && img.decode) { img.decode().catch(function () { return null; }); }
          }).catch(function () { return null; });
      })(n);
    }
  }
  function stageSwapped() {
    var stage = $("#page-stage");
    shownStage = stage;
    if (!stage || !viewer) { return; }
    viewer.pageChanged();
    buildBoxes();
    viewer.show(viewer.boxes);
    $all(".thumb").forEach(function (t) {
      var here = t.getAttribute("data-page") === stage.getAttribute("data-page");
      t.classList.toggle("current", here);
      if (here) { t.setAttribute("aria-current", "page"); } else { t.removeAttribute("aria-current"); }
    });
  }
  function stepPage(step) {
    var stage = $("#page-stage");
    if (!stage) { return; }
    var n = parseInt(stage.getAttribute("data-page"), 10) + step, total = parseInt(stage.getAttribute("data-pages"), 10);
    if (n >= 1 && n <= total) { goToPage(n); }
  }

  /* --- taking a value (or moving a proof) from the page --- */

  function pickMode() {
    var checked = $("input[name=pick-mode]:checked");
    return checked ? checked.value : "value";
  }
  function take(ids, path) {
    var form = $("#take-form");
    path = path || (selection && selection.path);
    if (!form || !path || !ids.length) { return; }
    form.querySelector("[name=field]").value = path;
    form.querySelector("[name=blocks]").value = ids.join(",");
    form.querySelector("[name=mode]").value = pickMode();
    pendingFocus = path;
    form.requestSubmit();
  }

  function bindPicking() {
    var vp = $("#viewport"), drag = null;
    if (!vp) { return; }
    vp.addEventListener("click", function (ev) {
      if (!desk.classList.contains("picking") || (viewer && viewer.suppressClick) || ev.shiftKey) { return; }
      var r = ev.target.closest && ev.target.closest("svg.overlay .ocr rect");
      if (!r) { return; }
      ev.preventDefault();
      if (ev.detail > 1) { return; }  // the second click of a double-click: the dblclick takes the line
      var id = r.getAttribute("data-b"), path = selection && selection.path;
      if (r.classList.contains("w") && r.getAttribute("data-l")) {
        // a word whose line a double-click would take: wait to know which one the reviewer meant (one take)
        clearTimeout(singleTake);
        singleTake = setTimeout(function () { singleTake = null; take([id], path); }, DOUBLE_CLICK_MS);
      } else {
        take([id], path);
      }
    });
    vp.addEventListener("dblclick", function (ev) {
      var r = ev.target.closest && ev.target.closest("svg.overlay .ocr rect.w");
      if (!r || !desk.classList.contains("picking") || !r.getAttribute("data-l")) { return; }
      clearTimeout(singleTake);
      singleTake = null;
      take([r.getAttribute("data-l")]);
    });
    vp.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0 || !ev.shiftKey || !desk.classList.contains("picking")) { return; }
      var svg = $("#page-stage svg.overlay");
      if (!svg) { return; }
      ev.preventDefault();
      drag = { svg: svg, x: ev.clientX, y: ev.clientY, box: svg.querySelector(".pick-box") };
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) { return; }
      var m = drag.svg.getScreenCTM().inverse(), p0 = drag.svg.createSVGPoint(), p1 = drag.svg.createSVGPoint();
      p0.x = drag.x; p0.y = drag.y; p1.x = ev.clientX; p1.y = ev.clientY;
      var a = p0.matrixTransform(m), b = p1.matrixTransform(m);
      drag.rect = { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), w: Math.abs(a.x - b.x), h: Math.abs(a.y - b.y) };
      drag.box.setAttribute("x", drag.rect.x); drag.box.setAttribute("y", drag.rect.y);
      drag.box.setAttribute("width", drag.rect.w); drag.box.setAttribute("height", drag.rect.h);
      drag.box.classList.add("on");
      $all("rect.w", drag.svg).forEach(function (w) { w.classList.toggle("picked", inside(w, drag.rect)); });
    });
    window.addEventListener("mouseup", function () {
      if (!drag) { return; }
      var ids = drag.rect ? $all("rect.w", drag.svg).filter(function (w) { return inside(w, drag.rect); })
        .map(function (w) { return w.getAttribute("data-b"); }) : [];
      drag.box.classList.remove("on");
      $all("rect.picked", drag.svg).forEach(function (w) { w.classList.remove("picked"); });
      drag = null;
      take(ids);
    });
  }
  function inside(rect, box) {  // the word's centre lies in the box
    var x = parseFloat(rect.getAttribute("x")) + parseFloat(rect.getAttribute("width")) / 2;
    var y = parseFloat(rect.getAttribute("y")) + parseFloat(rect.getAttribute("height")) / 2;
    return x >= box.x && x <= box.x + box.w && y >= box.y && y <= box.y + box.h;
  }

  /* --- actions --- */

  function edit() {
    var cur = current();
    var link = cur && cur.parentElement.querySelector(".edit-link");
    if (link && !(desk && desk.classList.contains("stale"))) { pendingFocus = null; link.click(); }
  }
  /* The edit box opens with its old value selected: typing replaces it (an arrow key keeps it to amend). Done
     as the box first takes focus (htmx focuses [autofocus] while it swaps, before it settles): a key typed at
     once must replace the value too. */
  function selectEditValue() {
    var box = $("#fields .edit-form input.edit-value");
    if (!box) { return; }
    if (document.activeElement !== box) { box.focus(); }
    if (!box.hasAttribute("data-selected")) { box.setAttribute("data-selected", "1"); box.select(); }
  }
  function onFocusIn(ev) {
    var box = ev.target;
    if (box && box.matches && box.matches(".edit-form input.edit-value") && !box.hasAttribute("data-selected")) {
      box.setAttribute("data-selected", "1");
      box.select();
    }
  }
  function verify() {
    var form = $("#verify-form");
    if (!form) { return; }
    var note = form.querySelector("textarea[name=note]");
    if (note && !note.value.trim()) {
      form.querySelector("[data-note]").classList.remove("hidden-until-needed");
      noteFrom = current();  // Escape in the note comes back here
      note.focus();
      return;
    }
    form.requestSubmit();
  }
  function submit(id) { var form = $(id); if (form) { form.requestSubmit(); } }
  function help() {
    var dialog = $("#shortcuts");
    if (!dialog || dialog.open) { return; }
    lastFocus = document.activeElement;
    dialog.showModal();
  }
  function nextRule(step) {
    var list = ruleLinks();
    if (!list.length) { return; }
    var i = list.indexOf(document.activeElement);
    var r = list[(i < 0 ? (step > 0 ? 0 : list.length - 1) : (i + step + list.length) % list.length)];
    var group = r.closest("details");
    if (group) { group.open = true; }
    r.focus({ preventScroll: true });
    keepVisible(r, $("#violations"));
    selectRule(r);
  }
  function toggleMode() {
    var other = $all("input[name=pick-mode]").filter(function (i) { return !i.checked; })[0];
    if (other) { other.checked = true; select(selection); }
  }

  var KEYS = {
    j: function () { move(1); }, k: function () { move(-1); }, e: edit, v: verify,
    n: function () { submit("#next-form"); }, r: function () { nextRule(1); }, R: function () { nextRule(-1); },
    m: toggleMode, "?": help,
    "+": function () { viewer && viewer.zoomBy(1.25); }, "=": function () { viewer && viewer.zoomBy(1.25); },
    "-": function () { viewer && viewer.zoomBy(0.8); }, w: function () { viewer && viewer.setFit("width"); },
    "0": function () { viewer && viewer.setFit("page"); }, o: function () { viewer && viewer.rotate(); },
    "[": function () { stepPage(-1); }, "]": function () { stepPage(1); },
  };

  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var t = ev.target, dialog = $("#shortcuts");
    if (dialog && dialog.open) { return; }  // the dialog has its own keys (Escape closes it)
    if (isTyping(t)) {
      var editing = t.closest && t.closest(".edit-form");
      if (ev.key === "Escape" && editing) {
        var cancel = editing.querySelector(".cancel");
        if (cancel) { ev.preventDefault(); pendingFocus = editing.getAttribute("data-path"); cancel.click(); }
      } else if (ev.key === "Escape" && t.closest && t.closest("#verify-form [data-note]")) {
        // leaving the verify note: focus goes back to the field the reviewer was on (the note keeps its text)
        ev.preventDefault();
        t.blur();
        focusField((noteFrom && document.body.contains(noteFrom) && noteFrom) || current() || fieldLinks()[0]);
      } else if (ev.key === "Enter" && t.tagName === "TEXTAREA" && !ev.shiftKey && t.form) {
        ev.preventDefault();
        t.form.requestSubmit();
      }
      return;
    }
    var action = KEYS[ev.key];
    if (!action) { return; }
    ev.preventDefault();
    action();
  }

  function onClick(ev) {
    var goto = ev.target.closest && ev.target.closest("[data-goto]");
    if (goto) { goToPage(parseInt(goto.getAttribute("data-goto"), 10)); return; }
    var thumb = ev.target.closest && ev.target.closest("a.thumb");
    if (thumb && !ev.ctrlKey && !ev.metaKey) { ev.preventDefault(); goToPage(thumb.getAttribute("data-page")); return; }
    var a = ev.target.closest && ev.target.closest("#fields a.field");
    if (a && !ev.ctrlKey && !ev.metaKey) { ev.preventDefault(); selectField(a); return; }
    var r = ev.target.closest && ev.target.closest("#violations a.rule");
    if (r && !ev.ctrlKey && !ev.metaKey) { ev.preventDefault(); selectRule(r); return; }
    var h = ev.target.closest && ev.target.closest("#help-button");
    if (h) { help(); }
  }

  function afterSettle(ev) {
    var target = ev.detail && ev.detail.target;
    var presence = $("#presence");
    if (presence) {
      var stale = presence.getAttribute("data-stale") === "1";
      desk.classList.toggle("stale", stale);
      if (stale) { desk.classList.remove("picking"); }
    }
    var stage = $("#page-stage");
    // a new page came in (not any swap whose target left the document, like an edited cell: laying the page
    // out again would scroll it back to its top under the reviewer's pointer)
    if (stage && stage !== shownStage) {
      stages[stage.getAttribute("data-page")] = stage;
      stageSwapped();
    }
    var fields = $("#fields");
    if (fields && target && (target === fields || target.id === "fields" || fields.contains(target) || !document.body.contains(target))) {
      buildBoxes();  // a field's value or proof may have changed: its boxes are drawn again, before any click
      var path = pendingFocus || fields.getAttribute("data-focus");
      pendingFocus = null;
      if ($("#fields .edit-form")) { selectEditValue(); return; }  // autofocus is on the edit box
      if (path && byPath(path)) {
        focusField(byPath(path));
        if (selection && selection.path === path) { select(selection); }
        else if (selection) { select(selection); }
      } else if (selection) { select(selection); }
    }
  }

  function init() {
    document.addEventListener("keydown", onKey);  // the queue page has `n` too
    desk = $("#desk");
    if (!desk) { return; }
    pane = $("#page-pane");
    shownStage = $("#page-stage");
    if (pane && window.ProofViewer && $("#viewport")) {
      viewer = new window.ProofViewer(pane);
      viewer.layout();
      buildBoxes();
    }
    keepPageStill();
    document.addEventListener("click", onClick);
    document.addEventListener("htmx:afterSettle", afterSettle);
    document.addEventListener("focusin", onFocusIn);
    // a saved edit comes back as the field's cell (and the cells it changed): focus returns to that field
    document.addEventListener("htmx:beforeRequest", function (ev) {
      var form = ev.detail && ev.detail.elt;
      if (form && form.matches && form.matches(".edit-form")) { pendingFocus = form.getAttribute("data-path"); }
    });
    var dialog = $("#shortcuts");
    if (dialog) { dialog.addEventListener("close", function () { if (lastFocus) { lastFocus.focus(); } }); }
    $all("input[name=pick-mode]").forEach(function (i) { i.addEventListener("change", function () { select(selection); }); });
    bindPicking();
    setTimeout(prefetch, 300);
    // the selection the page was opened with (?field= or ?violation=)
    var path = pane && pane.getAttribute("data-field"), violation = pane && pane.getAttribute("data-violation");
    if (path && byPath(path)) { selectField(byPath(path), false); }
    else if (violation) {
      var r = ruleLinks().filter(function (x) { return x.getAttribute("data-violation") === violation; })[0];
      if (r) { selectRule(r); }
    }
    if ($("#fields .edit-form")) { selectEditValue(); return; }  // autofocus is on the edit box
    // focus, without scrolling anything (the broken rules stay in view above), the field asked for, else where
    // the first broken rule says to look (a sum's total), else the first flagged field
    var wanted = $("#fields").getAttribute("data-focus") || $("#fields").getAttribute("data-lead");
    var first = (wanted && byPath(wanted)) || $("#fields .cell.flagged a.field") || fieldLinks()[0];
    if (first) { setCurrent(first); first.focus({ preventScroll: true }); keepVisible(first, $("#fields")); }
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
