// execgate web approver. Every string from the server is already escaped
// (control characters made visible) and is only ever set with textContent:
// nothing from a command is parsed as HTML.
"use strict";

(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const cards = new Map(); // id → {data, el}
  const order = [];        // ids, oldest first
  let focused = null;      // id shown in the strip
  let skew = 0;            // server clock − ours, ms
  let ws = null;
  let nextRef = 1;
  const waiting = new Map(); // ref → callback
  let policy = null;         // last policyView
  const labels = {"allow-once": "allowed once", "allow-always": "allowed always", "deny": "denied"};

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function call(msg, cb) {
    if (!ws || ws.readyState !== WebSocket.OPEN) { cb({ok: false, error: "not connected"}); return; }
    msg.ref = nextRef++;
    waiting.set(msg.ref, cb);
    ws.send(JSON.stringify(msg));
  }

  // ---- connection ----
  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(proto + "//" + location.host + "/ws");
    ws.onmessage = (e) => handle(JSON.parse(e.data));
    ws.onclose = () => {
      setState(false, "disconnected from the web server; reload the page (log in again if it asks)");
      for (const cb of waiting.values()) cb({ok: false, error: "connection closed"});
      waiting.clear();
    };
  }

  function setState(ok, text) {
    const s = $("#hub-state");
    s.textContent = ok ? "connected" : text;
    s.className = "state " + (ok ? "ok" : "bad");
    document.body.dataset.connected = ok ? "yes" : "no";
  }

  function handle(m) {
    if (m.nowMs) skew = m.nowMs - Date.now();
    switch (m.type) {
      case "hello": break;
      case "hub": setState(false, "hub: " + (m.hub.error || "not connected")); break;
      case "snapshot":
        setState(true);
        for (const id of [...cards.keys()]) removeCard(id);
        for (const c of m.cards || []) addCard(c, false);
        render();
        break;
      case "requested": addCard(m.card, true); render(); break;
      case "settled": settle(m.settled); break;
      case "sessions": renderSessions(m.sessions || []); break;
      case "reply": {
        const cb = waiting.get(m.ref);
        waiting.delete(m.ref);
        if (cb) cb(m);
        break;
      }
    }
  }

  // ---- approvals ----
  function addCard(c, fresh) {
    if (cards.has(c.id)) return;
    cards.set(c.id, {data: c, el: buildCard(c)});
    order.push(c.id);
    focused = c.id; // the newest goes to the strip
    if (fresh) notify(c);
  }

  function removeCard(id) {
    const c = cards.get(id);
    if (!c) return;
    c.el.remove();
    cards.delete(id);
    order.splice(order.indexOf(id), 1);
    if (focused === id) focused = order.length ? order[order.length - 1] : null;
  }

  function settle(s) {
    const c = cards.get(s.id);
    if (!c) return;
    let text;
    if (s.how === "resolved") {
      text = (labels[s.decision] || s.decision) + " by " + (s.by || "an approver");
      if (s.message) text += ": " + s.message;
    } else if (s.how === "expired") {
      text = "timed out: nobody answered";
    } else {
      text = "withdrawn: the agent stopped waiting";
    }
    const note = el("li", null, "note " + s.how);
    note.dataset.id = s.id;
    note.append(el("code", c.data.lines.join(" ⏎ ")), el("span", " — " + text));
    const notes = $("#notes");
    notes.prepend(note);
    while (notes.children.length > 10) notes.lastChild.remove();
    $("#notes-title").hidden = false;
    removeCard(s.id);
    render();
  }

  function buildCard(c) {
    const e = $("#card-template").content.firstElementChild.cloneNode(true);
    e.dataset.id = c.id;
    e.classList.add("risk-" + c.risk);
    $(".risk", e).textContent = c.risk;
    $(".agent", e).textContent = c.agent;
    $(".via", e).textContent = c.via ? "via " + c.via : "";
    const pre = $(".cmd", e);
    c.lines.forEach((l, i) => { if (i) pre.append("\n"); pre.append(l); });
    $(".cwd", e).textContent = "in " + c.cwd;
    const segs = $(".segments", e);
    if (c.segments.length) {
      // Each reason next to the segment it belongs to, with what
      // "Allow always" would save for that segment.
      for (const s of c.segments) {
        const d = el("div", null, "segment");
        d.append(el("code", s.text, "seg-text"));
        const ul = el("ul", null, "reasons");
        for (const r of s.reasons) ul.append(el("li", r));
        d.append(ul);
        const p = el("p", null, "saves");
        if (s.patterns.length > 1) {
          // A choice of scope, narrowest first (preselected); the page
          // sends the index, the hub accepts only what it proposed.
          p.append("Allow always saves ");
          const sel = el("select", null, "scope");
          s.patterns.forEach((pat, i) => { const o = el("option", pat); o.value = String(i); sel.append(o); });
          const none = el("option", "nothing (ask again)");
          none.value = "-1";
          sel.append(none);
          p.append(sel);
        } else if (s.patterns.length) {
          p.append("Allow always saves ");
          p.append(el("code", s.patterns[0], "pattern"));
        } else {
          p.append("Allow always saves nothing for this part: it will be asked again");
        }
        d.append(p);
        segs.append(d);
      }
      $(".reasons", e).remove();
    } else {
      const ul = $(".reasons", e);
      for (const r of c.reasons) ul.append(el("li", r));
      segs.append(el("p", "Allow always: this requester does not say which pattern it saves", "saves muted"));
    }
    $(".allow-once", e).onclick = () => resolve(c.id, "allow-once", "", e);
    $(".allow-always", e).onclick = () => resolve(c.id, "allow-always", "", e, scopesOf(c, e));
    $(".deny", e).onclick = () => resolve(c.id, "deny", $(".deny-message", e).value.trim(), e);
    e.addEventListener("click", (ev) => {
      if (ev.target.closest("button, input, select")) return;
      focused = c.id;
      render();
    });
    return e;
  }

  // scopesOf reads the scope chosen for each segment (the narrowest where
  // there is no choice, -1 where nothing can be saved); null when no
  // segment offers a choice, so the narrowest of each is saved.
  function scopesOf(c, e) {
    const selects = e.querySelectorAll("select.scope");
    if (!selects.length) return null;
    let k = 0;
    return c.segments.map((s) => {
      if (s.patterns.length > 1) return Number(selects[k++].value);
      return s.patterns.length ? 0 : -1;
    });
  }

  function resolve(id, decision, message, e, scopes) {
    for (const b of e.querySelectorAll("button, select")) b.disabled = true;
    const msg = {op: "resolve", id: id, decision: decision};
    if (message) msg.message = message;
    if (scopes) msg.scopes = scopes;
    call(msg, (r) => {
      if (!r.ok) {
        for (const b of e.querySelectorAll("button, select")) b.disabled = false;
        $(".error", e).textContent = r.error;
      }
      // On success the settled event removes the card, here and in
      // every other tab.
    });
  }

  function render() {
    const strip = $("#strip");
    const queue = $("#queue");
    for (const id of order) {
      const c = cards.get(id);
      if (id === focused) strip.append(c.el); else queue.append(c.el);
    }
    // Newest last in the queue.
    for (const id of order) if (id !== focused) queue.append(cards.get(id).el);
    const rest = order.length - (focused ? 1 : 0);
    $("#count").textContent = order.length;
    $("#queue-count").textContent = rest;
    $("#queue-title").hidden = rest === 0;
    $("#empty").hidden = order.length > 0;
    document.title = order.length ? "(" + order.length + ") execgate approvals" : "execgate approvals";
    tick();
  }

  function tick() {
    const now = Date.now() + skew;
    for (const {data, el: e} of cards.values()) {
      const left = Math.max(0, Math.ceil((data.expiresAtMs - now) / 1000));
      const m = Math.floor(left / 60), s = left % 60;
      $(".left", e).textContent = (m ? m + "m " : "") + s + "s left";
      e.classList.toggle("urgent", left <= 10);
    }
  }

  // ---- notifications ----
  function notify(c) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    try {
      new Notification("execgate: " + c.agent + " asks (" + c.risk + ")", {body: c.lines[0], tag: c.id});
    } catch (_) { /* some browsers allow notifications only from a service worker */ }
  }

  function setupNotify() {
    const b = $("#notify");
    if (!("Notification" in window) || Notification.permission !== "default") return;
    b.hidden = false;
    b.onclick = () => Notification.requestPermission().then(() => { b.hidden = true; });
  }

  // ---- views ----
  function show(view) {
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("on", t.dataset.view === view);
    for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + view;
    if (view === "history") loadHistory();
    if (view === "undo") loadCheckpoints();
    if (view === "policy" && !policy) loadPolicy();
  }

  function when(ms) {
    return ms ? new Date(ms).toLocaleString() : "";
  }

  function loadHistory() {
    call({op: "history", agent: $("#history-agent").value.trim(), risk: $("#history-risk").value}, (r) => {
      $("#history-error").textContent = r.ok ? "" : r.error;
      const tb = $("#history tbody");
      tb.replaceChildren();
      for (const h of (r.ok && r.data) || []) {
        const tr = el("tr", null, "risk-" + h.risk);
        let how = h.decision;
        if (h.always && h.always.length) how += " (always: " + h.always.join(", ") + ")";
        else if (h.scope) how += " (" + h.scope + ")";
        const cmd = el("td");
        cmd.append(el("code", h.command));
        if (h.message) cmd.append(el("div", h.message, "muted"));
        tr.append(el("td", when(h.timeMs)), el("td", h.agent), el("td", h.risk), el("td", how), el("td", h.by), cmd);
        tb.append(tr);
      }
    });
  }

  // ---- undo ----
  let undoKey = null; // the checkpoint being confirmed

  function loadCheckpoints() {
    call({op: "checkpoints"}, (r) => {
      $("#undo-error").textContent = r.ok ? "" : r.error;
      const tb = $("#checkpoints tbody");
      tb.replaceChildren();
      for (const c of (r.ok && r.data) || []) {
        const tr = el("tr");
        tr.dataset.key = c.key;
        const b = el("button", "Undo…", "undo");
        b.type = "button";
        b.onclick = () => previewUndo(c.key);
        const cmd = el("td");
        cmd.append(el("code", c.command));
        const td = el("td");
        td.append(b);
        tr.append(el("td", when(c.timeMs)), el("td", c.root), el("td", c.seq), el("td", c.changes < 0 ? "pending" : c.changes), cmd, td);
        tb.append(tr);
      }
    });
  }

  // previewUndo shows what undoing the checkpoint would change; nothing
  // changes until "Undo it".
  function previewUndo(key) {
    undoKey = null;
    $("#undo-confirm").hidden = true;
    $("#undo-result").hidden = true;
    call({op: "undo", key: key, preview: true}, (r) => {
      $("#undo-error").textContent = r.ok ? "" : r.error;
      if (!r.ok) return;
      undoKey = key;
      $("#undo-preview").textContent = r.data.lines.join("\n");
      $("#undo-confirm").hidden = false;
    });
  }

  function doUndo() {
    const key = undoKey;
    undoKey = null;
    $("#undo-confirm").hidden = true;
    if (!key) return;
    call({op: "undo", key: key}, (r) => {
      $("#undo-error").textContent = r.ok ? "" : r.error;
      if (r.ok) {
        $("#undo-result").textContent = r.data.lines.join("\n");
        $("#undo-result").hidden = false;
      }
      loadCheckpoints();
    });
  }

  function loadPolicy() {
    call({op: "config.get"}, (r) => {
      if (!r.ok) { $("#policy-error").textContent = r.error; return; }
      renderPolicy(r.data);
    });
  }

  function renderPolicy(p) {
    policy = p;
    $("#policy-error").textContent = "";
    $("#policy-path").textContent = p.path;
    $("#policy-raw").value = JSON.stringify(JSON.parse(p.raw), null, 2);
    const box = $("#policy-agents");
    box.replaceChildren();
    for (const a of p.agents) box.append(agentBox(a));
  }

  // savePolicy applies change to the file as loaded and saves it against
  // the hash it was loaded with: if anything else saved in between, the
  // hub refuses it and the page says so.
  function savePolicy(change) {
    const file = JSON.parse(policy.raw);
    try { change(file); } catch (err) { $("#policy-error").textContent = String(err.message || err); return; }
    saveFile(JSON.stringify(file));
  }

  function saveFile(text) {
    call({op: "config.set", file: text, baseHash: policy.hash}, (r) => {
      if (!r.ok) { $("#policy-error").textContent = r.error; $("#policy-error").dataset.code = r.code || ""; return; }
      renderPolicy(r.data);
      $("#policy-error").textContent = "saved";
      $("#policy-error").dataset.code = "";
    });
  }

  function section(file, key) {
    if (key === "") { file.defaults = file.defaults || {}; return file.defaults; }
    file.agents = file.agents || {};
    file.agents[key] = file.agents[key] || {};
    return file.agents[key];
  }

  function agentBox(a) {
    const box = el("fieldset", null, "agent-policy");
    box.dataset.agent = a.key;
    box.append(el("legend", a.name));
    const fields = el("div", null, "row");
    const choices = {security: ["", "deny", "allowlist", "full"], ask: ["", "off", "on-miss", "always"], askFallback: ["", "deny", "allowlist", "full"]};
    const inputs = {};
    for (const f of ["security", "ask", "askFallback"]) {
      const s = el("select");
      s.name = f;
      for (const v of choices[f]) { const o = el("option", v || "—"); o.value = v; s.append(o); }
      if (a[f] && !choices[f].includes(a[f])) { const o = el("option", a[f]); o.value = a[f]; s.append(o); }
      s.value = a[f] || "";
      inputs[f] = s;
      const l = el("label", f + " ");
      l.append(s);
      fields.append(l);
    }
    const t = el("input");
    t.type = "number"; t.min = "1000"; t.step = "1000"; t.name = "timeoutMs"; t.value = a.timeoutMs; t.size = 7;
    const tl = el("label", "timeoutMs ");
    tl.append(t);
    fields.append(tl);
    const save = el("button", "Save");
    save.type = "button";
    save.onclick = () => savePolicy((file) => {
      const sec = section(file, a.key);
      for (const f of ["security", "ask", "askFallback"]) {
        if (inputs[f].value) sec[f] = inputs[f].value; else delete sec[f];
      }
      if (t.value) sec.timeoutMs = parseInt(t.value, 10); else delete sec.timeoutMs;
    });
    fields.append(save);
    box.append(fields);
    if (a.key !== "" || a.allowlist.length || a.denylist.length) {
      box.append(listBox(a, "allowlist"), listBox(a, "denylist"));
    }
    return box;
  }

  function listBox(a, list) {
    const d = el("div", null, list);
    d.append(el("h3", list));
    const ul = el("ul");
    a[list].forEach((e, i) => {
      const li = el("li");
      li.append(el("code", e.pattern, "pattern"));
      if (e.lastUsedMs) li.append(el("span", " last used " + when(e.lastUsedMs) + (e.lastUsed ? " by " + e.lastUsed : ""), "muted"));
      const rm = el("button", "Remove");
      rm.type = "button";
      rm.onclick = () => savePolicy((file) => {
        const sec = section(file, a.key);
        if (!sec[list] || !sec[list][i]) throw new Error("that entry is gone; reload the policy");
        sec[list].splice(i, 1);
      });
      li.append(" ", rm);
      ul.append(li);
    });
    d.append(ul);
    const add = el("form", null, "row");
    const inp = el("input");
    inp.placeholder = list === "allowlist" ? "npm run test **" : "rm -rf /**";
    inp.required = true;
    add.append(inp, el("button", "Add"));
    add.onsubmit = (ev) => {
      ev.preventDefault();
      const pat = inp.value.trim();
      if (!pat) return;
      savePolicy((file) => {
        const sec = section(file, a.key);
        sec[list] = sec[list] || [];
        sec[list].push({pattern: pat});
      });
    };
    d.append(add);
    return d;
  }

  function renderSessions(list) {
    const tb = $("#sessions tbody");
    tb.replaceChildren();
    for (const s of list) {
      const tr = el("tr");
      let what = s.elevated ? "elevated (security=full, ask=off)" :
        ["security", "ask", "askFallback"].filter((k) => s[k]).map((k) => k + "=" + s[k]).join(" ");
      const clear = el("button", "Clear");
      clear.type = "button";
      clear.onclick = () => call({op: "session.clear", agent: s.key}, (r) => { $("#session-error").textContent = r.ok ? "" : r.error; });
      const td = el("td");
      td.append(clear);
      tr.append(el("td", s.agent), el("td", what), el("td", s.expiresAtMs ? when(s.expiresAtMs) : "never"), el("td", s.setBy), td);
      tb.append(tr);
    }
  }

  function sessionOp(msg) {
    msg.agent = $("#session-agent").value.trim();
    if (!msg.agent) { $("#session-error").textContent = "name the agent"; return; }
    call(msg, (r) => { $("#session-error").textContent = r.ok ? "" : r.error; });
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const t of document.querySelectorAll(".tab")) t.onclick = () => show(t.dataset.view);
    $("#history-form").onsubmit = (ev) => { ev.preventDefault(); loadHistory(); };
    $("#policy-load").onclick = loadPolicy;
    $("#undo-go").onclick = doUndo;
    $("#undo-cancel").onclick = () => { undoKey = null; $("#undo-confirm").hidden = true; };
    $("#policy-save-raw").onclick = () => {
      let text = $("#policy-raw").value;
      try { text = JSON.stringify(JSON.parse(text)); } catch (err) { $("#policy-error").textContent = "not valid JSON: " + err.message; return; }
      saveFile(text);
    };
    $("#session-form").onsubmit = (ev) => {
      ev.preventDefault();
      sessionOp({op: "session.set", security: $("#session-security").value, ask: $("#session-ask").value, askFallback: $("#session-fallback").value});
    };
    $("#session-elevate").onclick = () => sessionOp({op: "session.elevate", minutes: parseInt($("#session-minutes").value, 10) || 0});
    setupNotify();
    setInterval(tick, 250);
    connect();
  });
})();
