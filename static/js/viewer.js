/* The page viewer of the desk and of the audit: fit width, fit page, zoom (buttons, keys, Ctrl + wheel
   around the pointer), drag to pan, rotate, pages, and proof boxes drawn from normalised boxes.
   Only the viewport scrolls: a highlight never scrolls the window.
   The page (#page-stage) carries data-width/-height in image pixels and an SVG overlay in those units.

   Every field's proof boxes on the page shown are drawn, hidden, when the page or the fields arrive (`build`):
   the overlay's viewBox is the page's, so zoom and rotation move them without a rebuild. Highlighting (`show`)
   only flips the class `on`, and reads no layout: whether the boxes are in view is worked out from numbers
   kept when the page was laid out and scrolled, and any scrolling waits for the next animation frame. */
(function () {
  "use strict";
  var STEP = 1.25, MIN = 0.1, MAX = 8, PAD = 10, MARGIN = 24;
  var SVG = "http://www.w3.org/2000/svg";

  function Viewer(pane) {
    this.pane = pane;
    this.viewport = pane.querySelector(".viewport");
    this.fit = "width";
    this.scale = 1;
    this.rotation = 0;
    this.boxes = [];  // [{page, left, top, width, height, path}]: the highlighted ones, on every page
    this.rects = {};  // path -> the rects drawn (hidden) for its boxes on the page shown
    this.shown = [];  // the rects now highlighted
    this.geo = null;  // where the page sits in the viewport's scrolled area, measured after a layout
    this.scroll = { left: 0, top: 0 };  // the viewport's scroll position, kept by its scroll events
    this.size = null;  // the viewport's inner size, kept by a ResizeObserver: laying out a page reads no layout
    this.revealing = 0;
    this.pan = null;
    this.suppressClick = false;
    this.bind();
  }

  Viewer.prototype.stage = function () { return this.pane.querySelector(".page-stage"); };
  Viewer.prototype.pageNumber = function () {
    var s = this.stage();
    return s ? parseInt(s.getAttribute("data-page") || "0", 10) : 0;
  };

  Viewer.prototype.layout = function () {
    var stage = this.stage();
    this.geo = null;
    if (!stage || !stage.getAttribute("data-width")) { return; }
    var w = parseFloat(stage.getAttribute("data-width")), h = parseFloat(stage.getAttribute("data-height"));
    var turned = this.rotation % 180 !== 0;
    var rw = turned ? h : w, rh = turned ? w : h;
    var size = this.size || { w: this.viewport.clientWidth, h: this.viewport.clientHeight };
    var availW = Math.max(50, size.w - 2 * PAD - 4);
    var availH = Math.max(50, size.h - 2 * PAD - 24);
    if (this.fit === "width") { this.scale = availW / rw; }
    else if (this.fit === "page") { this.scale = Math.min(availW / rw, availH / rh); }
    this.scale = Math.max(MIN, Math.min(MAX, this.scale));
    var fw = w * this.scale, fh = h * this.scale;
    var rotor = stage.querySelector(".page-rotor"), frame = stage.querySelector(".page-frame");
    if (!rotor || !frame) { return; }
    rotor.style.width = (turned ? fh : fw) + "px";
    rotor.style.height = (turned ? fw : fh) + "px";
    frame.style.position = "absolute";
    frame.style.left = "0";
    frame.style.top = "0";
    frame.style.width = fw + "px";
    frame.style.height = fh + "px";
    var moves = { 0: "", 90: "translate(" + fh + "px,0) rotate(90deg)", 180: "translate(" + fw + "px," + fh + "px) rotate(180deg)",
                  270: "translate(0," + fw + "px) rotate(270deg)" };
    frame.style.transform = moves[this.rotation];
    var label = this.pane.querySelector("#zoom-level");
    if (label) { label.textContent = Math.round(this.scale * 100) + "%"; }
    this.measureLater();
  };

  /* The page's place in the viewport, read in the frame after a layout (when the browser lays out anyway). */
  Viewer.prototype.measureLater = function () {
    var self = this;
    window.requestAnimationFrame(function () { self.measure(); });
  };
  Viewer.prototype.measure = function () {
    var stage = this.stage(), rotor = stage && stage.querySelector(".page-rotor");
    if (!rotor) { this.geo = null; return; }
    var turned = this.rotation % 180 !== 0;
    var w = parseFloat(stage.getAttribute("data-width")) * this.scale, h = parseFloat(stage.getAttribute("data-height")) * this.scale;
    // the rotor is positioned and the viewport is its offset parent: offsets are in the scrolled area
    this.geo = { x: rotor.offsetLeft, y: rotor.offsetTop, fw: w, fh: h, turned: turned, rotation: this.rotation,
                 vw: this.viewport.clientWidth, vh: this.viewport.clientHeight };
    this.scroll = { left: this.viewport.scrollLeft, top: this.viewport.scrollTop };
  };

  Viewer.prototype.zoomBy = function (factor, clientX, clientY) {
    var vp = this.viewport, rect = vp.getBoundingClientRect();
    var x = clientX === undefined ? rect.width / 2 : clientX - rect.left;
    var y = clientY === undefined ? rect.height / 2 : clientY - rect.top;
    var before = this.scale, fx = (vp.scrollLeft + x) / before, fy = (vp.scrollTop + y) / before;
    this.fit = null;
    this.scale = Math.max(MIN, Math.min(MAX, this.scale * factor));
    this.layout();
    vp.scrollLeft = fx * this.scale - x;
    vp.scrollTop = fy * this.scale - y;
  };

  Viewer.prototype.setFit = function (mode) { this.fit = mode; this.layout(); this.reveal(true); };
  Viewer.prototype.rotate = function () { this.rotation = (this.rotation + 90) % 360; this.layout(); this.reveal(true); };

  /* Draw, hidden, every box of `byPath` (path -> boxes) that is on the page shown; `old`: paths whose boxes are
     the proof of a value since typed over. Done when a page or the fields arrive, never on a click. */
  Viewer.prototype.build = function (byPath, old) {
    var stage = this.stage();
    var group = stage && stage.querySelector("svg.overlay .proofs");
    this.rects = {};
    this.shown = [];
    if (!group) { return; }
    var w = parseFloat(stage.getAttribute("data-width")), h = parseFloat(stage.getAttribute("data-height"));
    var page = this.pageNumber(), rects = this.rects, made = document.createDocumentFragment();
    Object.keys(byPath).forEach(function (path) {
      byPath[path].forEach(function (b) {
        if (b.page !== page) { return; }
        var r = document.createElementNS(SVG, "rect");
        r.setAttribute("class", old && old[path] ? "proof-box old" : "proof-box");
        r.setAttribute("data-path", path);
        r.setAttribute("x", (b.left * w).toFixed(1));
        r.setAttribute("y", (b.top * h).toFixed(1));
        r.setAttribute("width", (b.width * w).toFixed(1));
        r.setAttribute("height", (b.height * h).toFixed(1));
        r.setAttribute("vector-effect", "non-scaling-stroke");
        (rects[path] = rects[path] || []).push(r);
        made.appendChild(r);
      });
    });
    while (group.firstChild) { group.removeChild(group.firstChild); }
    group.appendChild(made);
    this.highlight();
  };

  /* Highlight `boxes` (their paths' rects on the page shown): class flips only. */
  Viewer.prototype.show = function (boxes) {
    this.boxes = boxes || [];
    this.highlight();
    this.revealSoon(false);
  };
  Viewer.prototype.highlight = function () {
    var rects = this.rects, seen = {}, next = [];
    this.boxes.forEach(function (b) {
      if (seen[b.path]) { return; }
      seen[b.path] = true;
      (rects[b.path] || []).forEach(function (r) { next.push(r); });
    });
    this.shown.forEach(function (r) { if (next.indexOf(r) < 0) { r.classList.remove("on"); } });
    next.forEach(function (r) { r.classList.add("on"); });
    this.shown = next;
  };

  /* The highlighted boxes' extent in the viewport's scrolled area, from the numbers kept: none read now. */
  Viewer.prototype.extent = function () {
    var g = this.geo, page = this.pageNumber(), box = null;
    if (!g || g.rotation !== this.rotation) { return null; }
    this.boxes.forEach(function (b) {
      if (b.page !== page) { return; }
      var x0 = b.left * g.fw, y0 = b.top * g.fh, x1 = (b.left + b.width) * g.fw, y1 = (b.top + b.height) * g.fh;
      var r = { 0: [x0, y0, x1, y1], 90: [g.fh - y1, x0, g.fh - y0, x1], 180: [g.fw - x1, g.fh - y1, g.fw - x0, g.fh - y0],
                270: [y0, g.fw - x1, y1, g.fw - x0] }[g.rotation];
      var e = { left: g.x + r[0], top: g.y + r[1], right: g.x + r[2], bottom: g.y + r[3] };
      box = box ? { left: Math.min(box.left, e.left), top: Math.min(box.top, e.top),
                    right: Math.max(box.right, e.right), bottom: Math.max(box.bottom, e.bottom) } : e;
    });
    return box;
  };

  /* Scroll the viewport (never the window) so the highlighted boxes are in view: from the numbers kept when
     they are fresh, else measured, in the next animation frame (the browser lays the page out then anyway). */
  Viewer.prototype.revealSoon = function (always) {
    var self = this, box = this.extent(), s = this.scroll, g = this.geo;
    if (box && !always && box.left >= s.left + MARGIN && box.right <= s.left + g.vw - MARGIN &&
        box.top >= s.top + MARGIN && box.bottom <= s.top + g.vh - MARGIN) { return; }  // in view: nothing to do
    var ticket = ++this.revealing;
    window.requestAnimationFrame(function () { if (ticket === self.revealing) { self.reveal(always); } });
  };
  Viewer.prototype.reveal = function (always) {
    if (!this.geo || this.geo.rotation !== this.rotation || this.geo.vw !== this.viewport.clientWidth) { this.measure(); }
    var box = this.extent(), g = this.geo;
    if (!box) { return; }
    var vp = this.viewport, left = vp.scrollLeft, top = vp.scrollTop;
    var inside = box.left >= left + MARGIN && box.right <= left + g.vw - MARGIN && box.top >= top + MARGIN && box.bottom <= top + g.vh - MARGIN;
    if (inside && !always) { return; }
    var x = box.right - box.left > g.vw - 2 * MARGIN ? box.left - MARGIN : (box.left + box.right) / 2 - g.vw / 2;
    var y = box.bottom - box.top > g.vh - 2 * MARGIN ? box.top - MARGIN : (box.top + box.bottom) / 2 - g.vh / 2;
    vp.scrollLeft = x;
    vp.scrollTop = y;
    this.scroll = { left: vp.scrollLeft, top: vp.scrollTop };
  };

  Viewer.prototype.bind = function () {
    var self = this, vp = this.viewport;
    this.pane.addEventListener("click", function (ev) {
      var b = ev.target.closest && ev.target.closest("[data-zoom],[data-view]");
      if (!b || !self.pane.contains(b)) { return; }
      if (b.hasAttribute("data-zoom")) {
        self.zoomBy(parseInt(b.getAttribute("data-zoom"), 10) > 0 ? STEP : 1 / STEP);
        self.reveal(false);
      } else if (b.getAttribute("data-view") === "fit-width") { self.setFit("width"); }
      else if (b.getAttribute("data-view") === "fit-page") { self.setFit("page"); }
      else if (b.getAttribute("data-view") === "rotate") { self.rotate(); }
    });
    vp.addEventListener("scroll", function () { self.scroll = { left: vp.scrollLeft, top: vp.scrollTop }; }, { passive: true });
    vp.addEventListener("wheel", function (ev) {
      if (!ev.ctrlKey && !ev.metaKey) { return; }  // a plain wheel scrolls the page pane
      ev.preventDefault();
      self.zoomBy(Math.exp(-ev.deltaY * 0.002), ev.clientX, ev.clientY);
    }, { passive: false });
    vp.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0 || ev.shiftKey) { return; }
      self.pan = { x: ev.clientX, y: ev.clientY, left: vp.scrollLeft, top: vp.scrollTop, moved: false };
    });
    window.addEventListener("mousemove", function (ev) {
      var p = self.pan;
      if (!p) { return; }
      var dx = ev.clientX - p.x, dy = ev.clientY - p.y;
      if (!p.moved && Math.abs(dx) + Math.abs(dy) < 4) { return; }
      p.moved = true;
      vp.classList.add("panning");
      vp.scrollLeft = p.left - dx;
      vp.scrollTop = p.top - dy;
      ev.preventDefault();
    });
    window.addEventListener("mouseup", function () {
      if (self.pan && self.pan.moved) { self.suppressClick = true; setTimeout(function () { self.suppressClick = false; }, 0); }
      self.pan = null;
      vp.classList.remove("panning");
    });
    if (window.ResizeObserver) {
      // after the browser's layout: a new width (the window, a scrollbar) fits the page again
      new window.ResizeObserver(function () {
        var before = self.size, now = { w: vp.clientWidth, h: vp.clientHeight };
        self.size = now;
        if (before && before.w === now.w && before.h === now.h) { return; }
        if (self.fit === "width" ? !before || before.w !== now.w : self.fit === "page") { self.layout(); }
        else { self.measureLater(); }
      }).observe(vp);
    } else {
      window.addEventListener("resize", function () { if (self.fit) { self.layout(); } });
    }
    var img = this.pane.querySelector(".page-image");
    if (img && !img.complete) { img.addEventListener("load", function () { self.layout(); }); }
  };

  /* After a new page was swapped in: lay it out (its boxes are built by the caller, which knows the fields) and
     show its top, in the next animation frame: a scroll written now would make the browser lay out now. */
  Viewer.prototype.pageChanged = function () {
    var self = this;
    this.layout();
    this.scroll = { left: this.scroll.left, top: 0 };
    window.requestAnimationFrame(function () { self.vpTop(); });
  };
  Viewer.prototype.vpTop = function () { this.viewport.scrollTop = 0; this.scroll = { left: this.viewport.scrollLeft, top: 0 }; };

  /* Boxes from a 'page:left,top,width,height;...' attribute. */
  Viewer.parseBoxes = function (text, path) {
    var out = [];
    (text || "").split(";").forEach(function (part) {
      if (!part) { return; }
      var i = part.indexOf(":");
      var n = part.slice(i + 1).split(",").map(parseFloat);
      out.push({ page: parseInt(part.slice(0, i), 10), left: n[0], top: n[1], width: n[2], height: n[3], path: path });
    });
    return out;
  };

  window.ProofViewer = Viewer;
})();
