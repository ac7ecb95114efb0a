// Static explorers: native controls that swap pictures drawn in advance. No libraries, no network.
//
// Each <section class="course-static-explorer"> holds its data as JSON: the controls (option
// labels), the states (an option index per control, a picture and its text alternative) and
// the default state. When control c changes to option v, the page shows the state with exactly
// the current settings; if there is none, the state with c = v that agrees with the most other
// controls (ties: with the default's settings, then the first). Every control is then set to
// that state's settings, so none shows a value its picture was not drawn with, and the status
// line says what else changed.
(function () {
  "use strict";

  function agreement(a, b, skip) {
    var count = 0;
    for (var i = 0; i < a.length; i++) {
      if (i !== skip && a[i] === b[i]) count++;
    }
    return count;
  }

  // The index of the state to show after control `c` is set to option `v`, or -1 if no state
  // has c = v. `states`: arrays of option indices; `current`, `preferred`: the settings shown
  // and the default's.
  function choose(states, current, c, v, preferred) {
    var wanted = current.slice();
    wanted[c] = v;
    var best = -1, bestScore = [-1, -1];
    for (var s = 0; s < states.length; s++) {
      var values = states[s];
      if (values[c] !== v) continue;
      var here = agreement(values, current, c);
      if (here === values.length - 1) return s; // exactly the wanted settings
      var score = [here, agreement(values, preferred, c)];
      if (score[0] > bestScore[0] || (score[0] === bestScore[0] && score[1] > bestScore[1])) {
        best = s;
        bestScore = score;
      }
    }
    return best;
  }

  // What the status line says after control `c` moved from `before` to `after` settings.
  function describe(controls, before, after, c, preferred, limit) {
    var changes = [];
    for (var i = 0; i < controls.length; i++) {
      if (i === c || before[i] === after[i]) continue;
      var how = after[i] === preferred[i] ? " set back to " : " set to ";
      changes.push(controls[i].label + how + controls[i].options[after[i]]);
    }
    if (!changes.length) return "";
    return changes.join("; ") + ": " + limit +
      "; open the lesson in JupyterLab for every combination.";
  }

  function unavailable(control, option) {
    return "No picture for " + control.label + " = " + control.options[option] +
      " on this page; open the lesson in JupyterLab to see it.";
  }

  function Explorer(section) {
    var data = JSON.parse(section.querySelector(".course-explorer-data").textContent);
    var self = this;
    this.section = section;
    this.data = data;
    this.values = data.states.map(function (s) { return s.v; });
    this.preferred = this.values[data.default];
    this.shown = data.default;
    this.img = section.querySelector(".course-explorer-picture");
    this.status = section.querySelector(".course-explorer-status");
    this.announce = section.querySelector(".course-explorer-announce");
    this.boxes = Array.prototype.slice.call(section.querySelectorAll("[data-control]"));
    section.querySelector("form").addEventListener("submit", function (e) { e.preventDefault(); });
    this.boxes.forEach(function (box, c) {
      var kind = data.controls[c].type;
      var event = kind === "slider" ? "input" : "change";
      box.addEventListener(event, function (e) { self.changed(c, self.read(c, e.target)); });
    });
    this.show(data.default);
  }

  Explorer.prototype.read = function (c, target) {
    var control = this.data.controls[c];
    if (control.type === "checkbox") return target.checked ? control.on : 1 - control.on;
    return parseInt(target.value, 10);
  };

  Explorer.prototype.changed = function (c, v) {
    var before = this.values[this.shown];
    var s = choose(this.values, before, c, v, this.preferred);
    if (s < 0) {
      this.show(this.shown);
      this.status.textContent = unavailable(this.data.controls[c], v);
      return;
    }
    this.show(s);
    this.status.textContent = describe(this.data.controls, before, this.values[s], c,
      this.preferred, this.data.limit);
    // A screen reader does not read a changed alt by itself: say what the picture shows now.
    if (this.announce) this.announce.textContent = this.data.states[s].alt;
  };

  // Show state s: its picture and text alternative, and every control at its settings.
  Explorer.prototype.show = function (s) {
    var state = this.data.states[s];
    this.shown = s;
    if (this.img.getAttribute("src") !== state.src) {
      this.img.setAttribute("src", state.src);
      this.img.setAttribute("width", state.w);
      this.img.setAttribute("height", state.h);
    }
    this.img.setAttribute("alt", state.alt);
    for (var c = 0; c < this.boxes.length; c++) {
      var control = this.data.controls[c], v = state.v[c], box = this.boxes[c];
      var label = control.options[v];
      if (control.type === "slider") {
        var input = box.querySelector("input");
        input.value = String(v);
        input.setAttribute("aria-valuetext", label);
        box.querySelector("output").textContent = label;
      } else if (control.type === "buttons") {
        box.querySelectorAll("input").forEach(function (radio) {
          radio.checked = parseInt(radio.value, 10) === v;
        });
      } else if (control.type === "checkbox") {
        box.querySelector("input").checked = v === control.on;
      } else {
        box.querySelector("textarea").value = label;
      }
    }
  };

  if (typeof module !== "undefined" && module.exports) {
    module.exports = {choose: choose, describe: describe, unavailable: unavailable};
    return;
  }
  var explorers = [];
  function start() {
    document.querySelectorAll(".course-static-explorer").forEach(function (section) {
      explorers.push(new Explorer(section));
    });
  }
  // A page restored from the back/forward cache may show a browser-restored form: redraw.
  window.addEventListener("pageshow", function (e) {
    if (e.persisted) explorers.forEach(function (x) { x.show(x.shown); });
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
