// reviewbench labelling page: keyboard shortcuts, the triage timer and submission.
//
// Triage time is active time: it runs while the tab is visible and the rater has done
// something (key, pointer, scroll) within the last 60 s; it pauses otherwise. A claim's
// time is the active time from the previous claim's completion (or from opening the
// packet) until its own last field was set; the claims' times add up to the packet's.
(function () {
  "use strict";
  var IDLE_MS = 60000, TICK_MS = 250;
  var FIELDS = ["location", "consequence", "evidence", "safe_fix", "severity_fit"];
  var FIELD_KEYS = { l: "location", c: "consequence", e: "evidence", s: "safe_fix", v: "severity_fit" };
  var CLASS_KEYS = { t: "true_finding", f: "false_positive", d: "duplicate", u: "unclear" };
  var root = document.getElementById("packet");
  if (!root) { return; }
  var adjudicate = root.dataset.mode === "a";
  var claims = Array.prototype.slice.call(document.querySelectorAll(".claim"));
  var current = 0;

  // -- timer -------------------------------------------------------------------------------
  var activeMs = 0, lastTick = Date.now(), lastActivity = Date.now();
  function visible() { return document.visibilityState !== "hidden"; }
  function tick() {
    var now = Date.now();
    if (visible() && now - lastActivity <= IDLE_MS) { activeMs += now - lastTick; }
    lastTick = now;
    var s = Math.floor(activeMs / 1000);
    document.getElementById("timer").textContent = Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2);
  }
  function activity() { tick(); lastActivity = Date.now(); }
  setInterval(tick, TICK_MS);
  document.addEventListener("visibilitychange", function () {
    tick();                       // close the running segment at the moment of the change
    if (visible()) { lastActivity = Date.now(); }
  });
  ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "input"].forEach(function (type) {
    document.addEventListener(type, activity, { passive: true, capture: true });
  });
  window.reviewbenchTimer = { activeSeconds: function () { tick(); return activeMs / 1000; } };

  // -- state of a claim ---------------------------------------------------------------------
  function checked(el, role, field) {
    var sel = 'input[data-role="' + role + '"]' + (field ? '[data-field="' + field + '"]' : "") + ":checked";
    var input = el.querySelector(sel);
    return input ? input.value : null;
  }
  function read(el) {
    var cls = checked(el, "class"), link = checked(el, "link");
    var fields = {};
    FIELDS.forEach(function (f) { var v = checked(el, "field", f); fields[f] = v === null ? null : v === "yes"; });
    var incidental = el.querySelector('[data-role="incidental"]').value.trim();
    var note = el.querySelector('[data-role="note"]').value.trim();
    var reasonBox = el.querySelector('[data-role="reason"]');
    return { cls: cls, link: link, fields: fields, incidental: incidental, note: note,
             reason: reasonBox ? reasonBox.value.trim() : null };
  }
  function complete(state) {
    if (!state.cls) { return false; }
    if (adjudicate && !state.reason) { return false; }
    if (state.cls !== "true_finding") { return true; }
    if (!state.link || (state.link === "valid_incidental" && !state.incidental)) { return false; }
    return FIELDS.every(function (f) { return state.fields[f] !== null; });
  }
  var doneAt = claims.map(function () { return null; });
  function update(i) {
    var el = claims[i], ok = complete(read(el));
    if (ok) { doneAt[i] = activeMsNow(); } else { doneAt[i] = null; }
    el.classList.toggle("complete", ok);
    el.querySelector('[data-role="state"]').textContent = ok ? "complete" : "";
  }
  function activeMsNow() { tick(); return activeMs; }
  claims.forEach(function (el, i) {
    el.classList.toggle("complete", complete(read(el)));
    el.addEventListener("change", function () { focusClaim(i); update(i); });
    el.addEventListener("input", function () { update(i); });
  });

  // -- focus and keys ------------------------------------------------------------------------
  function focusClaim(i) {
    if (!claims.length) { return; }
    current = Math.max(0, Math.min(claims.length - 1, i));
    claims.forEach(function (el, j) { el.classList.toggle("current", j === current); });
  }
  function pick(el, role, value, field) {
    var sel = 'input[data-role="' + role + '"][value="' + value + '"]' + (field ? '[data-field="' + field + '"]' : "");
    var input = el.querySelector(sel);
    if (input) { input.checked = true; }
    return input;
  }
  function setField(el, field, yes) { pick(el, "field", yes ? "yes" : "no", field); }
  function key(event) {
    var target = event.target, typing = target && (target.tagName === "TEXTAREA" ||
      (target.tagName === "INPUT" && target.type === "text"));
    if (typing) {
      if (event.key === "Escape") { target.blur(); event.preventDefault(); }
      else if (event.key === "Enter" && target.tagName === "INPUT") { target.blur(); event.preventDefault(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || (target && target.tagName === "BUTTON")) { return; }
    var el = claims[current], k = event.key, handled = true;
    if (k === "j" || k === "ArrowDown") { focusClaim(current + 1); claims[current].scrollIntoView({ block: "nearest" }); }
    else if (k === "k" || k === "ArrowUp") { focusClaim(current - 1); claims[current].scrollIntoView({ block: "nearest" }); }
    else if (k === "Enter") { save(); }
    else if (!el) { handled = false; }
    else if (CLASS_KEYS[k]) { pick(el, "class", CLASS_KEYS[k]); }
    else if (/^[1-9]$/.test(k)) {
      var links = el.querySelectorAll('input[data-role="link"]:not([value="valid_incidental"])');
      if (links[+k - 1]) { links[+k - 1].checked = true; pick(el, "class", "true_finding"); } else { handled = false; }
    }
    else if (k === "i") {
      pick(el, "link", "valid_incidental"); pick(el, "class", "true_finding");
      el.querySelector('[data-role="incidental"]').focus();
    }
    else if (k === "y" || k === "n") {
      var open = FIELDS.filter(function (f) { return checked(el, "field", f) === null; })[0];
      if (open) { setField(el, open, k === "y"); } else { handled = false; }
    }
    else if (FIELD_KEYS[k]) { var f = FIELD_KEYS[k]; setField(el, f, checked(el, "field", f) !== "yes"); }
    else if (k === "o") { el.querySelector('[data-role="note"]').focus(); }
    else if (k === "r" && adjudicate) { el.querySelector('[data-role="reason"]').focus(); }
    else { handled = false; }
    if (handled) { event.preventDefault(); if (el) { update(current); } }
  }
  document.addEventListener("keydown", key);

  // -- submission ------------------------------------------------------------------------------
  function status(text) { document.getElementById("status").textContent = text; }
  function save() {
    var states = claims.map(read);
    var missing = states.map(complete).indexOf(false);
    if (missing >= 0) { focusClaim(missing); status("claim " + (missing + 1) + " is not complete"); return; }
    // Each claim's time: from the previous completion to its own, in completion order.
    var order = claims.map(function (_, i) { return i; }).sort(function (a, b) { return (doneAt[a] || 0) - (doneAt[b] || 0); });
    var seconds = {}, previous = 0;
    order.forEach(function (i) {
      var at = doneAt[i] === null ? previous : doneAt[i];
      seconds[i] = Math.max(0, at - previous) / 1000; previous = Math.max(previous, at);
    });
    var labels = claims.map(function (el, i) {
      var s = states[i], tf = s.cls === "true_finding";
      var row = { comment_id: el.dataset.comment, part: +el.dataset.part, "class": s.cls,
        defect_id: tf ? s.link : null, fields: s.fields, triage_s: Math.round(seconds[i] * 1000) / 1000,
        note: tf && s.link === "valid_incidental" ? s.incidental : (s.note || null) };
      if (adjudicate) { row.reason = s.reason; }
      return row;
    });
    var body = JSON.stringify({ labels: labels });
    if (new Blob([body]).size > +root.dataset.maxBody) {  // the app refuses larger submissions
      status("too much text for one save: shorten the notes or reasons on this page"); return;
    }
    status("saving…");
    fetch(location.pathname, { method: "POST", headers: { "content-type": "application/json" },
      credentials: "same-origin", body: body })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (r) {
        if (!r.ok) { status(r.body.error || "not saved"); return; }
        status("saved"); location.assign(r.body.next);
      })
      .catch(function () { status("not saved: the app is not reachable"); });
  }
  document.getElementById("save").addEventListener("click", save);
  focusClaim(0);
  tick();
})();
