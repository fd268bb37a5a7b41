// reviewbench labelling page: keyboard shortcuts, the triage timer and submission.
//
// Triage time is active time: it runs while the tab is visible and the rater has done
// something (key, pointer, scroll) within the last 60 s; it pauses otherwise. A claim's
// time is the active time from the previous claim's completion (or from opening the
// packet) until its own last field was set; the claims' times add up to the packet's.
//
// Work is not lost: every change is kept as a draft in this browser (localStorage, per
// person and page) until the page is saved, restored after a reload, and leaving the page
// with unsaved changes asks first. Save runs once at a time (the button is disabled while
// it is under way); the app also ignores a submission equal to the labels it has.
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
  // What a claim still lacks, in words (null when complete).
  function missing(state) {
    if (!state.cls) { return "choose its class"; }
    if (state.cls === "true_finding") {
      if (!state.link) { return "link a gold defect or valid incidental"; }
      if (state.link === "valid_incidental" && !state.incidental) { return "say what the incidental finding is"; }
      if (!FIELDS.every(function (f) { return state.fields[f] !== null; })) { return "answer the five questions"; }
    }
    if (adjudicate && !state.reason) { return "give a reason"; }
    return null;
  }
  function complete(state) { return missing(state) === null; }
  function status(text) { document.getElementById("status").textContent = text; }
  var doneAt = claims.map(function () { return null; });
  var flagged = null;           // the claim a "not complete" message names
  function sync(el) {           // identifies and actionability belong to true findings only
    var cls = checked(el, "class"), tf = cls === "true_finding";
    Array.prototype.forEach.call(el.querySelectorAll('[data-role="tf-only"]'), function (box) {
      box.disabled = cls !== null && !tf;
    });
  }
  function update(i) {
    var el = claims[i];
    sync(el);
    var ok = complete(read(el));
    if (ok) { doneAt[i] = activeMsNow(); } else { doneAt[i] = null; }
    el.classList.toggle("complete", ok);
    el.querySelector('[data-role="state"]').textContent = ok ? "complete" : "";
    if (flagged === i && ok) { flagged = null; status(""); }
    else if (flagged === i) { status("claim " + (i + 1) + " is not complete: " + missing(read(el))); }
  }
  function activeMsNow() { tick(); return activeMs; }
  claims.forEach(function (el, i) {
    sync(el);
    el.classList.toggle("complete", complete(read(el)));
    el.addEventListener("change", function () { focusClaim(i); update(i); changed(); });
    el.addEventListener("input", function () { update(i); changed(); });
  });

  // -- drafts: nothing chosen is lost to a reload or a closed tab ----------------------------
  var DRAFT = "reviewbench-draft:" + location.pathname + location.search;
  var dirty = false, saving = false, leaving = false;
  function slot(input) { return input.dataset.role + ":" + (input.dataset.field || ""); }
  function snapshot(el) {
    var values = {};
    Array.prototype.forEach.call(el.querySelectorAll("input, textarea"), function (input) {
      if (input.type === "radio") { if (input.checked) { values[slot(input)] = input.value; } }
      else { values[slot(input)] = input.value; }
    });
    return values;
  }
  function restore(el, values) {
    Array.prototype.forEach.call(el.querySelectorAll("input, textarea"), function (input) {
      var v = values[slot(input)];
      if (input.type === "radio") { input.checked = v === input.value; }
      else if (v !== undefined) { input.value = v; }
    });
  }
  function keep() {
    try {
      localStorage.setItem(DRAFT, JSON.stringify({ claims: claims.map(function (el) {
        return { id: el.dataset.comment + ":" + el.dataset.part, values: snapshot(el) }; }),
        activeMs: activeMsNow(), doneAt: doneAt }));
    } catch (e) { /* storage full or disabled: the leave-page warning still guards the work */ }
  }
  function changed() { dirty = true; keep(); }
  function drop() { try { localStorage.removeItem(DRAFT); } catch (e) { /* nothing kept */ } }
  (function () {
    var draft = null;
    try { draft = JSON.parse(localStorage.getItem(DRAFT) || "null"); } catch (e) { draft = null; }
    if (!draft || !draft.claims) { return; }
    var byId = {};
    draft.claims.forEach(function (c) { byId[c.id] = c.values; });
    claims.forEach(function (el, i) {
      var values = byId[el.dataset.comment + ":" + el.dataset.part];
      if (values) { restore(el, values); sync(el); el.classList.toggle("complete", complete(read(el))); }
      if (draft.doneAt && typeof draft.doneAt[i] === "number" && complete(read(el))) { doneAt[i] = draft.doneAt[i]; }
    });
    if (typeof draft.activeMs === "number" && draft.activeMs > 0) { activeMs = draft.activeMs; }
    dirty = true;
    status("restored your unsaved choices on this page");
  })();
  window.addEventListener("beforeunload", function (event) {
    if (!dirty || leaving) { return; }
    keep();
    event.preventDefault();
    event.returnValue = "";       // the browser asks before the page goes
  });

  // -- focus and keys ------------------------------------------------------------------------
  var diffbox = document.getElementById("diffbox");
  function focusClaim(i) {
    if (!claims.length) { return; }
    current = Math.max(0, Math.min(claims.length - 1, i));
    claims.forEach(function (el, j) { el.classList.toggle("current", j === current); });
    // the line the current claim points at, highlighted and brought into the diff's view
    Array.prototype.forEach.call(document.querySelectorAll("tr.current-line"), function (row) {
      row.classList.remove("current-line");
    });
    var anchor = claims[current].dataset.anchor, row = anchor ? document.getElementById(anchor) : null;
    if (row) {
      row.classList.add("current-line");
      var box = diffbox && diffbox.parentNode;
      if (box && box.scrollHeight > box.clientHeight + 1 && getComputedStyle(box).overflowY === "auto") {
        var top = row.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
        if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 40) { box.scrollTop = Math.max(0, top - box.clientHeight / 3); }
      }
    }
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
    else if ((k === "y" || k === "n" || FIELD_KEYS[k]) && el.querySelector(".fields").disabled) { handled = false; }
    else if (k === "y" || k === "n") {
      var open = FIELDS.filter(function (f) { return checked(el, "field", f) === null; })[0];
      if (open) { setField(el, open, k === "y"); } else { handled = false; }
    }
    else if (FIELD_KEYS[k]) { var f = FIELD_KEYS[k]; setField(el, f, checked(el, "field", f) !== "yes"); }
    else if (k === "o") { el.querySelector('[data-role="note"]').focus(); }
    else if (k === "r" && adjudicate) { el.querySelector('[data-role="reason"]').focus(); }
    else { handled = false; }
    if (handled) { event.preventDefault(); if (el) { update(current); changed(); } }
  }
  document.addEventListener("keydown", key);

  // -- submission ------------------------------------------------------------------------------
  var button = document.getElementById("save");
  function save() {
    if (saving) { return; }       // a second click or Enter while the first save is under way
    var states = claims.map(read);
    var gap = states.map(complete).indexOf(false);
    if (gap >= 0) {
      focusClaim(gap); flagged = gap;
      claims[gap].scrollIntoView({ block: "nearest" });
      status("claim " + (gap + 1) + " is not complete: " + missing(states[gap])); return;
    }
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
        defect_id: tf ? s.link : null, triage_s: Math.round(seconds[i] * 1000) / 1000,
        fields: tf ? s.fields : { location: null, consequence: null, evidence: null, safe_fix: null, severity_fit: null },
        note: tf && s.link === "valid_incidental" ? s.incidental : (s.note || null) };
      if (adjudicate) { row.reason = s.reason; }
      return row;
    });
    var body = JSON.stringify({ labels: labels });
    if (new Blob([body]).size > +root.dataset.maxBody) {  // the app refuses larger submissions
      status("too much text for one save: shorten the notes or reasons on this page"); return;
    }
    saving = true; button.disabled = true;
    status("saving…");
    function failed(text) { saving = false; button.disabled = false; status(text); }
    fetch(location.pathname, { method: "POST", headers: { "content-type": "application/json" },
      credentials: "same-origin", body: body })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (r) {
        if (!r.ok) { failed(r.body.error || "not saved"); return; }
        drop(); dirty = false; leaving = true;
        status("saved"); location.assign(r.body.next);
      })
      .catch(function () { failed("not saved: the app is not reachable (your choices are kept in this browser)"); });
  }
  button.addEventListener("click", save);
  focusClaim(0);
  tick();
})();
