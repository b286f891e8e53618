/* The page viewer of the desk and of the audit: fit width, fit page, zoom (buttons, keys, Ctrl + wheel
   around the pointer), drag to pan, rotate, pages, and proof boxes drawn from normalised boxes.
   Only the viewport scrolls: a highlight never scrolls the window.
   The page (#page-stage) carries data-width/-height in image pixels and an SVG overlay in those units. */
(function () {
  "use strict";
  var STEP = 1.25, MIN = 0.1, MAX = 8, PAD = 10;
  var SVG = "http://www.w3.org/2000/svg";

  function Viewer(pane) {
    this.pane = pane;
    this.viewport = pane.querySelector(".viewport");
    this.fit = "width";
    this.scale = 1;
    this.rotation = 0;
    this.boxes = [];  // [{page, left, top, width, height, path}]
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
    if (!stage || !stage.getAttribute("data-width")) { return; }
    var w = parseFloat(stage.getAttribute("data-width")), h = parseFloat(stage.getAttribute("data-height"));
    var turned = this.rotation % 180 !== 0;
    var rw = turned ? h : w, rh = turned ? w : h;
    var availW = Math.max(50, this.viewport.clientWidth - 2 * PAD - 4);
    var availH = Math.max(50, this.viewport.clientHeight - 2 * PAD - 24);
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

  /* Proof boxes: draw those on the shown page; the caller loads another page when none is here. */
  Viewer.prototype.show = function (boxes) {
    this.boxes = boxes || [];
    this.draw();
    this.reveal(false);
  };

  Viewer.prototype.draw = function () {
    var stage = this.stage();
    var group = stage && stage.querySelector("svg.overlay .proofs");
    if (!group) { return; }
    var w = parseFloat(stage.getAttribute("data-width")), h = parseFloat(stage.getAttribute("data-height"));
    var page = this.pageNumber();
    while (group.firstChild) { group.removeChild(group.firstChild); }
    this.boxes.forEach(function (b) {
      if (b.page !== page) { return; }
      var r = document.createElementNS(SVG, "rect");
      r.setAttribute("class", "proof-box on");
      r.setAttribute("data-path", b.path || "");
      r.setAttribute("x", (b.left * w).toFixed(1));
      r.setAttribute("y", (b.top * h).toFixed(1));
      r.setAttribute("width", (b.width * w).toFixed(1));
      r.setAttribute("height", (b.height * h).toFixed(1));
      r.setAttribute("vector-effect", "non-scaling-stroke");
      group.appendChild(r);
    });
  };

  /* Scroll the viewport (never the window) so the highlighted boxes are in view. */
  Viewer.prototype.reveal = function (always) {
    var shown = this.pane.querySelectorAll(".proof-box.on");
    if (!shown.length) { return; }
    var box = null;
    shown.forEach(function (el) {
      var r = el.getBoundingClientRect();
      box = box ? { left: Math.min(box.left, r.left), top: Math.min(box.top, r.top),
                    right: Math.max(box.right, r.right), bottom: Math.max(box.bottom, r.bottom) }
                : { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    });
    var vp = this.viewport.getBoundingClientRect(), margin = 24;
    var inside = box.left >= vp.left + margin && box.right <= vp.right - margin && box.top >= vp.top + margin && box.bottom <= vp.bottom - margin;
    if (inside && !always) { return; }
    var dx = 0, dy = 0;
    if (box.right - box.left > vp.width - 2 * margin) { dx = box.left - vp.left - margin; }
    else { dx = (box.left + box.right) / 2 - (vp.left + vp.right) / 2; }
    if (box.bottom - box.top > vp.height - 2 * margin) { dy = box.top - vp.top - margin; }
    else { dy = (box.top + box.bottom) / 2 - (vp.top + vp.bottom) / 2; }
    this.viewport.scrollLeft += dx;
    this.viewport.scrollTop += dy;
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
    window.addEventListener("resize", function () { if (self.fit) { self.layout(); } });
    var img = this.pane.querySelector(".page-image");
    if (img && !img.complete) { img.addEventListener("load", function () { self.layout(); }); }
  };

  /* After a new page was swapped in: lay it out and draw the boxes that belong to it. */
  Viewer.prototype.pageChanged = function () {
    this.layout();
    this.draw();
    this.vpTop();
    this.reveal(false);
  };
  Viewer.prototype.vpTop = function () { this.viewport.scrollTop = 0; };

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
