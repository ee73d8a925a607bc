// The live fabric page (docs/operations.md). It reads the controller's API
// with a bearer token (from the URL's #token=..., kept for the tab in
// sessionStorage, or typed in) and follows GET /v1/stream, a Server-Sent
// Events stream read with fetch so that it carries the token too.
//
// A tenant's token (docs/tenants.md) reaches no fabric data: the page then
// shows its services only, kept live by the stream's `services` events.
//
// window.e3 exposes the graph and the selection, for tests and the console.
"use strict";

const e3 = (window.e3 = { cy: null, selected: null, services: [], view: null, streaming: false, tenant: null });

// ---- the token -------------------------------------------------------------
function token() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    sessionStorage.setItem("e3-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname); // keep it out of the address bar
  }
  return sessionStorage.getItem("e3-token");
}

function showLogin(message) {
  document.getElementById("app").hidden = true;
  document.getElementById("login").hidden = false;
  document.getElementById("login-error").textContent = message || "";
}

document.getElementById("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem("e3-token", document.getElementById("token").value.trim());
  start();
});

class Unauthorized extends Error {}
class Forbidden extends Error {}

async function api(path, options = {}) {
  const r = await fetch(path, { ...options, headers: { Authorization: "Bearer " + token() } });
  if (r.status === 401) throw new Unauthorized("the controller refused the token");
  if (r.status === 403) throw new Forbidden(`${path}: ${await r.text()}`);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r;
}

const getJSON = async (path) => (await api(path)).json();

// ---- the graph -------------------------------------------------------------
const STYLE = [
  { selector: "node", style: { label: "data(id)", "text-valign": "center", color: "#fff", "font-size": 12,
    width: 70, height: 34, shape: "round-rectangle", "background-color": "#3b4a63" } },
  { selector: "node[role = 'spine']", style: { "background-color": "#26324a" } },
  { selector: "node.down", style: { "background-color": "#b22222" } },
  { selector: "node.drained", style: { "border-width": 3, "border-style": "dashed", "border-color": "#d29922",
    "background-opacity": 0.55 } },
  { selector: "node.member", style: { "border-width": 3, "border-color": "#1f6feb" } },
  { selector: "edge", style: { width: 3, "line-color": "#9aa3b2", "curve-style": "bezier", label: "data(rate)",
    "font-size": 9, color: "#5a6272", "text-rotation": "autorotate", "text-background-color": "#f6f7f9",
    "text-background-opacity": 0.85, "text-background-padding": 2 } },
  { selector: "edge.down", style: { "line-color": "#d62728", "line-style": "dashed", width: 4 } },
  { selector: "edge.tree", style: { "line-color": "#2e8b57", width: 6 } },
  { selector: "edge.backup", style: { "line-color": "#8957e5", "line-style": "dashed", width: 5 } },
  { selector: "edge.active", style: { "line-color": "#1f6feb", width: 7, "line-style": "solid" } },
  { selector: "edge.down.active, edge.down.backup, edge.down.tree", style: { "line-color": "#d62728" } },
];

// Spines on top, leaves below, each row spread evenly.
function positions(nodes) {
  const rows = { spine: [], leaf: [], other: [] };
  for (const n of nodes) (rows[n.role] || rows.other).push(n.name);
  const pos = {};
  Object.entries({ spine: 0, other: 150, leaf: 300 }).forEach(([role, y]) => {
    rows[role].forEach((name, i) => { pos[name] = { x: (i - (rows[role].length - 1) / 2) * 180, y }; });
  });
  return pos;
}

function draw(topo) {
  const pos = positions(topo.nodes);
  const elements = topo.nodes.map((n) => ({ group: "nodes", data: { id: n.name, role: n.role || "" }, position: pos[n.name] }));
  for (const l of topo.links) {
    elements.push({ group: "edges", data: { id: "l" + l.id, link: l.id, source: l.a.node, target: l.b.node,
      name: `${l.a.node}:${l.a.port}-${l.b.node}:${l.b.port}`, rate: "" } });
  }
  if (e3.cy) e3.cy.destroy();
  e3.cy = cytoscape({ container: document.getElementById("graph"), elements, style: STYLE,
    layout: { name: "preset", padding: 40 }, userZoomingEnabled: true, wheelSensitivity: 0.2 });
}

// ---- services ----------------------------------------------------------------
async function listServices() {
  showServices(await getJSON("/v1/services"));
}

function showServices(services) {
  e3.services = services;
  const ul = document.getElementById("services");
  ul.replaceChildren(...e3.services.map((s) => {
    const li = document.createElement("li");
    li.dataset.service = s.name;
    li.classList.toggle("selected", s.name === e3.selected);
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `${s.name} (${s.type})`;
    const st = document.createElement("span");
    st.className = "state " + s.status.state;
    st.textContent = s.status.state;
    b.append(st);
    b.addEventListener("click", () => select(s.name));
    li.append(b);
    return li;
  }));
}

const edgesOf = (path) => (path || []).map((h) => "#l" + h.link).join(", ");

// The paths carrying an E-Line's traffic now: the active one, or both
// planned ones while ECMP spreads its flows over them.
function activePaths(r) {
  if (r.ecmp && r.active !== "fallback") return [r.primary, r.backup];
  return [r[r.active]];
}

async function select(name) {
  const s = await getJSON("/v1/services/" + encodeURIComponent(name));
  e3.selected = name;
  document.querySelectorAll("#services li").forEach((li) => li.classList.toggle("selected", li.dataset.service === name));
  showDetail(s);
  const cy = e3.cy;
  if (!cy) return; // a tenant's page: no graph
  cy.elements().removeClass("active backup tree member");
  const r = s.route || {};
  const members = new Set(s.circuits.map((c) => c.node).filter(Boolean));
  if (s.type === "eline") {
    for (const p of activePaths(r)) cy.$(edgesOf(p)).addClass("active");
    const standby = r.active === "primary" ? r.backup : r.active === "backup" ? r.primary : null;
    if (standby && !r.ecmp) cy.$(edgesOf(standby)).removeClass("active").addClass("backup");
  } else {
    cy.$(edgesOf(r.tree)).addClass("tree");
  }
  members.forEach((n) => cy.$id(n).addClass("member"));
}

function pathText(p) {
  return p && p.length ? [p[0].from, ...p.map((h) => h.to)].join(" → ") : "-";
}

function showDetail(s) {
  const r = s.route || {};
  const fields = [
    ["type", s.type + (r.ecmp ? " (ECMP)" : "")],
    ["status", s.status.state + (s.status.reason ? ": " + s.status.reason : "")],
    ["circuits", s.circuits.map((c) => `${c.node || "@" + c.segment}:${c.port || ""}:${c.vlan}`).join(", ")],
  ];
  if (s.type === "eline") {
    fields.push(["active", r.active || "-"], ["primary", pathText(r.primary)], ["backup", pathText(r.backup)]);
  } else {
    fields.push(["flood tree", (r.tree || []).map((h) => `${h.from}–${h.to}`).join(", ") || "-"]);
  }
  document.getElementById("detail-name").textContent = s.name;
  document.getElementById("detail-fields").replaceChildren(...fields.flatMap(([k, v]) => {
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = k;
    dd.textContent = v;
    return [dt, dd];
  }));
  document.getElementById("detail").hidden = false;
}

// ---- the live view -------------------------------------------------------------
const fmt = (x) => (x === undefined ? "-" : x >= 1e6 ? (x / 1e6).toFixed(1) + "M" : x >= 1e3 ? (x / 1e3).toFixed(1) + "k" : x.toFixed(0));

// The state of every node and link, to notice a change.
const states = (view) => JSON.stringify([view.generation, view.nodes.map((n) => [n.up, !!n.drained]),
  view.links.map((l) => l.up)]);

function update(view) {
  const changed = e3.view !== null && states(e3.view) !== states(view);
  e3.view = view;
  if (changed) refresh(); // paths move on failures and repairs
  const cy = e3.cy;
  let up = 0;
  for (const n of view.nodes) {
    cy.$id(n.name).toggleClass("down", !n.up);
    // In maintenance (e3ctl node drain).
    cy.$id(n.name).toggleClass("drained", !!n.drained);
    up += n.up ? 1 : 0;
  }
  const rows = [];
  for (const l of view.links) {
    const [an, bn] = [l.a.split(":")[0], l.b.split(":")[0]];
    const a = (l.stats || {})[an], b = (l.stats || {})[bn];
    const ab = a && a.tx_pps, ba = b && b.tx_pps;
    const edge = cy.$id("l" + l.id);
    edge.toggleClass("down", !l.up);
    edge.data("rate", l.up ? `${fmt(ab)} / ${fmt(ba)} pps` : "down");
    const tr = document.createElement("tr");
    const bfd = (l.bfd || {});
    [l.name, l.up ? "up" : "down", `${bfd[an] || "-"} / ${bfd[bn] || "-"}`, fmt(ab), fmt(ba),
      a ? (a.tx_bps / 1e6).toFixed(2) : "-", b ? (b.tx_bps / 1e6).toFixed(2) : "-"]
      .forEach((v, i) => {
        const td = document.createElement("td");
        td.textContent = v;
        if (i === 1 && !l.up) td.className = "down";
        tr.append(td);
      });
    tr.dataset.link = l.id;
    rows.push(tr);
  }
  document.querySelector("#links tbody").replaceChildren(...rows);
  document.getElementById("summary").textContent =
    `generation ${view.generation} · ${up}/${view.nodes.length} nodes forwarding · ` +
    `${view.links.filter((l) => l.up).length}/${view.links.length} links up` +
    (view.nodes.some((n) => n.drained) ? ` · drained: ${view.nodes.filter((n) => n.drained).map((n) => n.name).join(", ")}` : "");
}

function setLive(on) {
  e3.streaming = on;
  const el = document.getElementById("live");
  el.className = "live " + (on ? "on" : "off");
  el.textContent = on ? "live" : "offline";
}

// Reads the SSE stream until it ends, then reconnects; services and the
// selection are refreshed when the fabric changes, and every tenth event.
async function follow() {
  for (;;) {
    try {
      const r = await api("/v1/stream");
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "", n = 0;
      setLive(true);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const event = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const lines = event.split("\n");
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (!data) continue;
          if (lines.includes("event: services")) {
            tenantUpdate(JSON.parse(data));
            continue;
          }
          update(JSON.parse(data));
          if (++n % 10 === 0) refresh();
        }
      }
    } catch (err) {
      if (err instanceof Unauthorized) return showLogin(err.message);
    }
    setLive(false);
    await new Promise((ok) => setTimeout(ok, 2000));
  }
}

// A tenant's view: its services, their status.
function tenantUpdate(view) {
  e3.tenant = view.tenant;
  showServices(view.services);
  const states = view.services.map((s) => s.status.state);
  document.getElementById("summary").textContent = `tenant ${view.tenant} · ${view.services.length} services · ` +
    `${states.filter((s) => s === "programmed").length} programmed`;
}

async function refresh() {
  await listServices();
  if (e3.selected) await select(e3.selected);
}

async function start() {
  if (!token()) return showLogin();
  let fabric = true;
  try {
    try {
      draw(await getJSON("/v1/topology"));
    } catch (err) {
      if (!(err instanceof Forbidden)) throw err;
      fabric = false; // a tenant's token: its services only
    }
    await listServices();
  } catch (err) {
    return showLogin(err.message);
  }
  document.getElementById("login").hidden = true;
  document.getElementById("app").hidden = false;
  document.getElementById("graph").hidden = !fabric;
  document.getElementById("links-section").hidden = !fabric;
  if (fabric) {
    e3.cy.resize();
    e3.cy.fit(undefined, 40);
  }
  follow();
}

start();
