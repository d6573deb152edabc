// tablesight referee page: draws the table from the server's view, asks the API, sends corrections.
// Plain JavaScript, no build step. Table coordinates are inches; the SVG viewBox is the table.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const state = {
  view: null,
  picks: [],          // [{kind, id}] — up to two things clicked
  unit: null,         // the selected unit's info from /api/units/{id}
  mode: "normal",     // normal | move | add | lasso
  lasso: [],          // table points of the lasso being drawn
  lassoed: [],        // model ids inside the last lasso
  socket: null,
  flux: null,         // the Flux mode's last reading from /api/flux (null: off or not yet read)
};

// ---------- talking to the server ----------
async function api(path, options = {}) {
  const response = await fetch(path, {
    headers: { "content-type": "application/json" },
    ...options,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (response.status === 403 && path !== "/api/join") { showJoin(); }
  if (!response.ok) {
    const message = (data && data.error) || `${response.status} ${response.statusText}`;
    throw new Error(message);
  }
  return data;
}

function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws`);
  state.socket = socket;
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "view") {
      render(message.view);
      refreshUnit();
    }
  };
  socket.onclose = () => {
    $("camera").textContent = "disconnected — reconnecting…";
    $("camera").classList.add("stale");
    setTimeout(connect, 1500);
  };
}
setInterval(() => { if (state.socket && state.socket.readyState === 1) state.socket.send("ping"); }, 20000);

// ---------- drawing ----------
function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function playerColor(view, playerId) {
  const p = view.players.find((x) => x.id === playerId);
  return (p && p.color) || "#bbb";
}

function isPicked(kind, id) { return state.picks.some((p) => p.kind === kind && p.id === id); }

// Minimum spanning tree over a unit's models: the lines that show its formation.
function spanningLinks(points) {
  if (points.length < 2) return [];
  const inTree = [0];
  const links = [];
  while (inTree.length < points.length) {
    let best = null;
    for (const i of inTree) {
      for (let j = 0; j < points.length; j++) {
        if (inTree.includes(j)) continue;
        const d = Math.hypot(points[i].x - points[j].x, points[i].y - points[j].y);
        if (!best || d < best.d) best = { i, j, d };
      }
    }
    inTree.push(best.j);
    links.push([points[best.i], points[best.j]]);
  }
  return links;
}

// The hex mat of a game played in hexes (Onefinity): every hex whose centre lies on the table, as one path.
function drawHexes(svg, table) {
  const hex = table.hex;
  const size = hex.width_in / Math.sqrt(3);  // centre to corner
  const pointy = hex.orientation === "pointy";
  const ox = hex.origin_x_in || 0, oy = hex.origin_y_in || 0;
  const centre = (q, r) => pointy
    ? [ox + size * Math.sqrt(3) * (q + r / 2), oy + size * 1.5 * r]
    : [ox + size * 1.5 * q, oy + size * Math.sqrt(3) * (r + q / 2)];
  const reach = Math.ceil((table.width_in + table.depth_in) / (size * 1.5)) + 2;
  const parts = [];
  for (let q = -reach; q <= reach; q++) {
    for (let r = -reach; r <= reach; r++) {
      const [cx, cy] = centre(q, r);
      if (cx < 0 || cy < 0 || cx > table.width_in || cy > table.depth_in) continue;
      const corners = [];
      for (let k = 0; k < 6; k++) {
        const angle = Math.PI / 180 * (60 * k + (pointy ? 30 : 0));
        corners.push(`${(cx + size * Math.cos(angle)).toFixed(3)},${(cy + size * Math.sin(angle)).toFixed(3)}`);
      }
      parts.push(`M${corners.join("L")}Z`);
    }
  }
  el("path", { d: parts.join(""), class: "hexgrid" }, svg);
}

function render(view) {
  state.view = view;
  $("game-name").textContent = state.flux && state.flux.enabled && !view.models.length
    ? "Affinity: Flux" : view.game_name + (view.scenario ? ` — ${view.scenario}` : "");
  $("round-no").textContent = view.round;
  const camera = $("camera");
  camera.textContent = view.camera.message;
  camera.classList.toggle("stale", !!view.camera.stale);
  const svg = $("table");
  svg.setAttribute("viewBox", `0 0 ${view.table.width_in} ${view.table.depth_in}`);
  svg.dataset.version = view.version;
  svg.replaceChildren();
  if (view.table.hex) drawHexes(svg, view.table);
  for (const t of view.terrain) {
    const poly = el("polygon", {
      points: t.polygon.map((p) => p.join(",")).join(" "),
      class: `terrain ${t.blocks_sight ? "blocks" : "open"}${isPicked("terrain", t.id) ? " picked" : ""}`,
      "data-kind": "terrain", "data-id": t.id,
    }, svg);
    el("title", {}, poly).textContent = `${t.id} (${t.kind})`;
    const cx = t.polygon.reduce((sum, p) => sum + p[0], 0) / t.polygon.length;
    const cy = t.polygon.reduce((sum, p) => sum + p[1], 0) / t.polygon.length;
    el("text", { x: cx, y: cy, "text-anchor": "middle", class: "label terrain-label" }, svg).textContent = `${t.id} · ${t.kind}`;
  }
  // Parts of the table a hand (or anything the pieces found do not account for) covers: pieces may be missing there.
  for (const [x0, y0, x1, y1] of view.camera.covered || []) {
    const box = el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: "covered" }, svg);
    el("title", {}, box).textContent = "something covers the table here: pieces under it cannot be seen";
  }
  const ranges = el("g", { id: "ranges" }, svg);
  for (const o of view.objectives) {
    el("circle", { cx: o.x, cy: o.y, r: o.r_in, class: "objective", "data-kind": "objective", "data-id": o.id }, svg);
    const ring = o.controller ? playerColor(view, o.controller) : (o.verdict === "too_close" ? "var(--close)" : "none");
    el("circle", { cx: o.x, cy: o.y, r: o.r_in + 0.15, class: "objective-ring", stroke: ring }, svg);
    const holder = o.controller ? ` · ${o.controller}` : (o.verdict === "too_close" ? " · too close" : "");
    el("text", { x: o.x + o.r_in + 0.2, y: o.y + 0.18, class: "label" }, svg).textContent = o.id + holder;
  }
  for (const u of view.units) {
    const points = view.models.filter((m) => m.unit === u.id);
    for (const [a, b] of spanningLinks(points)) {
      el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: `link ${u.coherency || "none"}` }, svg);
    }
  }
  el("g", { id: "sight" }, svg);
  for (const m of view.models) {
    const classes = ["model"];
    if (m.corrected) classes.push("corrected");
    if (m.unsure_size) classes.push("unsure-size");
    if (m.on_hex_edge) classes.push("hex-edge");
    if (isPicked("model", m.id)) classes.push("picked");
    if (state.lassoed.includes(m.id)) classes.push("lassoed");
    const base = el("ellipse", {
      cx: m.x, cy: m.y, rx: m.rx, ry: m.ry,
      transform: `rotate(${m.facing_deg} ${m.x} ${m.y})`,
      fill: m.color || playerColor(view, m.player),
      class: classes.join(" "), "data-kind": "model", "data-id": m.id,
    }, svg);
    if (m.unsure_size) el("title", {}, base).textContent = `${m.id}: is it on a ${m.base} mm base? Pick it to set its base`;
    else if (m.on_hex_edge) el("title", {}, base).textContent = `${m.id}: on a hex edge: which hex it stands in is too close to call`;
    if (m.sigma_in > 0) {
      el("ellipse", { cx: m.x, cy: m.y, rx: m.rx + 2 * m.sigma_in, ry: m.ry + 2 * m.sigma_in,
        transform: `rotate(${m.facing_deg} ${m.x} ${m.y})`, class: "sigma" }, svg);
    }
    el("text", { x: m.x, y: m.y + 0.17, "text-anchor": "middle", class: "label" }, svg).textContent = m.id;
  }
  if (state.unit) drawUnit(state.unit);
  drawFluxCards();
  if (state.lasso.length > 1) {
    el("polygon", { points: state.lasso.map((p) => `${p.x},${p.y}`).join(" "), class: "lasso" }, svg);
  }
  fillUnitSelects(view);
  renderCalibration(view.camera);
  // The table's own problems, as of this view (cleared when they are); an action's error stays in #error.
  $("problems").textContent = (view.problems || []).join("\n");
  renderUnseen(view.camera.unseen || []);
  const skipped = view.skipped || [];
  $("skipped").textContent = skipped.length ? `Corrections waiting for their piece: ${skipped.join("; ")}` : "";
}

// The selected unit's ranges and sight lines follow the table as it changes.
let unitRefresh = null;
function refreshUnit() {
  if (!state.unit || unitRefresh) return;
  unitRefresh = api(`/api/units/${encodeURIComponent(state.unit.unit.id)}`)
    .then((info) => { if (state.unit && state.unit.unit.id === info.unit.id) { state.unit = info; render(state.view); } })
    .catch(() => { state.unit = null; })
    .finally(() => { unitRefresh = null; });
}

function drawUnit(info) {
  const ranges = $("ranges");
  const sight = $("sight");
  if (!ranges || !sight) return;
  for (const [name, rings] of Object.entries(info.ranges || {})) {
    for (const ring of rings) {
      el("polygon", { points: ring.map((p) => p.join(",")).join(" "), class: `range ${name}` }, ranges);
    }
  }
  // The unit's last move: where each model started, a faint base and a line to where it stands now.
  // (a model whose start the camera did not see has no line: its place there is only where it was last seen)
  const moved = info.last_move ? info.last_move.from : {};
  const unseen = new Set(info.last_move ? info.last_move.unseen_from || [] : []);
  for (const [id, start] of Object.entries(moved)) {
    const now = state.view.models.find((m) => m.id === id);
    if (!now || unseen.has(id)) continue;
    el("circle", { cx: start[0], cy: start[1], r: Math.min(now.rx, now.ry), class: "move-start", "data-id": id }, ranges);
    el("line", { x1: start[0], y1: start[1], x2: now.x, y2: now.y, class: "move-path", "data-id": id }, ranges);
  }
  for (const target of info.targets) {
    for (const line of target.lines || []) {
      el("line", { x1: line.from[0], y1: line.from[1], x2: line.to[0], y2: line.to[1],
        class: `sight ${line.visible ? "visible" : "blocked"}${line.verdict === "too_close" ? " doubtful" : ""}` }, sight);
    }
  }
}

function renderCalibration(camera) {
  $("calibration-message").textContent = `${camera.source}: ${camera.message}`;
  const items = [
    ...camera.markers_seen.map((id) => `<li class="seen">marker ${id}: seen</li>`),
    ...camera.markers_hidden.map((id) => `<li class="hidden-marker">marker ${id}: hidden — uncover it</li>`),
  ];
  $("markers").innerHTML = items.join("") || "<li class='hint'>no markers to check (no camera)</li>";
}

function fillUnitSelects(view) {
  for (const id of ["assign-unit", "add-unit"]) {
    const select = $(id);
    const wanted = view.units.map((u) => u.id).join(",");
    if (select.dataset.units === wanted) continue;
    select.dataset.units = wanted;
    select.replaceChildren(...view.units.map((u) => new Option(`${u.name} (${u.player})`, u.id)));
  }
}

// ---------- Flux mode: Source pools read from the camera ----------
const FLUX_COLORS = ["#f0883e", "#79c0ff"];

function fluxOwnerColor(design) {
  if (!state.flux || !design) return null;
  const k = state.flux.players.findIndex((p) => p.player === design);
  return k >= 0 ? FLUX_COLORS[k % FLUX_COLORS.length] : null;
}

function drawFluxCards() {
  const old = $("flux-cards");
  if (old) old.remove();
  if (!state.flux || !state.flux.cards.length) return;
  const group = el("g", { id: "flux-cards" }, $("table"));
  for (const c of state.flux.cards) {
    const sourceZone = ["pool", "deck", "discard"].includes(c.zone_kind);
    const color = fluxOwnerColor(c.design) || (sourceZone ? "var(--close)" : "#bbb");
    const card = el("polygon", {
      points: c.corners_in.map((p) => p.join(",")).join(" "),
      class: "flux-card", stroke: color, "data-design": c.design || (sourceZone ? "unsure" : "none"),
    }, group);
    const whose = c.design ? `design of ${c.design}` : (sourceZone ? "design too close to call" : "not a Source zone");
    el("title", {}, card).textContent = `card in ${c.zone || "no zone"}: ${whose}`;
  }
}

function renderFlux(flux) {
  $("flux").hidden = false;
  const status = $("flux-status");
  const age = flux.read_at ? ` · read ${new Date(flux.read_at * 1000).toLocaleTimeString()} in ${flux.read_s} s` : "";
  status.textContent = `${flux.source}: ${flux.message}${age}`;
  status.classList.toggle("stale", !!flux.stale);
  const rows = flux.players.map((p) => {
    const pool = p.pool;
    const parts = [`${pool.own} own`, `${pool.opponent} opponent's`];
    if (pool.unsure) parts.push(`${pool.unsure} unsure`);
    const source = pool.source !== null ? `<b>${pool.source}</b>`
      : `<b>${pool.source_range[0]}–${pool.source_range[1]}</b> ${verdictBadge("too_close")}`;
    const color = fluxOwnerColor(p.player);
    return `<tr data-player="${escapeHtml(p.player)}"><td><span class="swatch" style="background:${color}"></span>${escapeHtml(p.player)}</td>` +
      `<td>${pool.cards} (${parts.join(", ")})</td><td class="flux-source">${source}</td>` +
      `<td>${p.life_tokens === null ? "–" : `${p.life_tokens} / ${p.life_token_cap}`}</td></tr>`;
  });
  $("flux-pools").tBodies[0].innerHTML = rows.join("") ||
    "<tr><td colspan='4' class='hint'>no reading yet: point the camera at the table and keep hands off it</td></tr>";
  const select = $("flux-player");
  const wanted = flux.players.map((p) => p.player).join(",");
  if (select.dataset.players !== wanted) {
    select.dataset.players = wanted;
    select.replaceChildren(...flux.players.map((p) => new Option(p.player, p.player)));
  }
  const values = [...new Set(flux.burn.flatMap((b) => b.outcomes.map((o) => o.value)))].sort((a, b) => a - b);
  $("flux-burn").innerHTML = `<tr><th>Burned unit</th>${values.map((v) => `<th>${v}</th>`).join("")}<th>mean</th></tr>` +
    flux.burn.map((b) => `<tr><td>${escapeHtml(b.label)}</td>${values.map((v) => {
      const o = b.outcomes.find((x) => x.value === v);
      return `<td>${o ? `${Math.round(o.probability * 1000) / 10}%` : "–"}</td>`;
    }).join("")}<td>${b.mean.toFixed(2)}</td></tr>`).join("");
}

async function refreshFlux() {
  let flux;
  try { flux = await api("/api/flux"); } catch (_) { return; }
  if (!flux.enabled) { $("flux").hidden = true; return; }
  if (state.flux && state.flux.version === flux.version) return;
  state.flux = flux;
  renderFlux(flux);
  if (state.view) render(state.view);  // the header names the card game; the cards are drawn on the table
}

async function askFluxPay() {
  const player = $("flux-player").value;
  const cost = $("flux-cost").value;
  const answer = await api(`/api/flux/can-pay?player=${encodeURIComponent(player)}&cost=${encodeURIComponent(cost)}`);
  const verdict = { yes: "yes", no: "no", "too close to call": "too_close" }[answer.verdict];
  $("flux-answer").innerHTML = `${verdictBadge(verdict)} <div class="reasons">${escapeHtml(answer.reason)}</div>` +
    `<div class="rule">Rule: ${escapeHtml(answer.rule)}</div>`;
}

// ---------- panels ----------
function verdictBadge(verdict) {
  const words = { yes: "yes", no: "no", too_close: "too close to call" };
  return `<span class="verdict ${verdict}">${words[verdict] || verdict}</span>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function rulingHtml(ruling) {
  if (!ruling) return "";
  const reasons = ruling.reasons.map((r) => `<div>${escapeHtml(r)}</div>`).join("");
  return `${verdictBadge(ruling.verdict)} <div class="reasons">${reasons}</div>` +
    (ruling.rule ? `<div class="rule">Rule: ${escapeHtml(ruling.rule)}</div>` : "");
}

async function showModel(id) {
  const info = await api(`/api/models/${encodeURIComponent(id)}`);
  const profile = Object.entries(info.profile).filter(([, v]) => typeof v !== "object")
    .map(([k, v]) => `${escapeHtml(k)} ${escapeHtml(v)}`).join(" · ");
  const stateText = Object.entries(info.state).map(([k, v]) => `${escapeHtml(k)}: ${escapeHtml(v)}`).join(" · ");
  $("selection").innerHTML = `<h2>Model ${escapeHtml(info.model.id)}</h2>
    <p>Unit <b id="selected-unit-name">${escapeHtml(info.unit.name)}</b> (${escapeHtml(info.unit.player)}) · base ${escapeHtml(info.model.base)} mm
    at (${info.model.x.toFixed(2)}", ${info.model.y.toFixed(2)}")${info.model.sigma_in ? ` ± ${(2 * info.model.sigma_in).toFixed(2)}"` : ""}</p>
    <p class="hint">${profile || "no profile"}</p>
    ${info.unit.keywords.length ? `<p class="hint">${info.unit.keywords.map(escapeHtml).join(", ")}</p>` : ""}
    ${stateText ? `<p class="hint">State: ${stateText}</p>` : ""}
    ${info.model.unsure_size ? `<p class="hint" id="unsure-size">The camera read this base's size unsurely
      (edge ± ${info.model.base_sigma_in.toFixed(2)}"); rulings allow for it until you set the base.</p>` : ""}
    ${info.hexes.length > 1 ? `<p class="hint" id="hex-choice">On a hex edge: which hex does it stand in?
      ${info.hexes.map((h) => `<button class="hex-pick" data-x="${h.x}" data-y="${h.y}">hex at (${h.x.toFixed(2)}", ${h.y.toFixed(2)}")${h.holds_centre ? " (measured)" : ""}</button>`).join(" ")}</p>` : ""}
    <label>Base <select id="base-size">${info.bases.map((b) =>
      `<option${b === info.model.base ? " selected" : ""}>${escapeHtml(b)}</option>`).join("")}</select> mm</label>
    <button id="base-save">Set base</button>
    <button id="select-unit" data-unit="${escapeHtml(info.unit.id)}">Select unit (U)</button>
    <button id="move-start">Move (M)</button> <button id="delete-model">Delete</button>`;
  for (const pick of document.querySelectorAll("#hex-choice .hex-pick")) {  // put it in that hex's centre
    pick.onclick = () => correct({ op: "move", model: info.model.id, x: +pick.dataset.x, y: +pick.dataset.y })
      .then(() => showModel(info.model.id)).catch(showError);
  }
  $("base-save").onclick = () => correct({ op: "base", model: info.model.id, base: $("base-size").value })
    .then(() => showModel(info.model.id)).catch(showError);
  $("select-unit").onclick = () => selectUnit(info.unit.id).catch(showError);
  $("move-start").onclick = () => setMode("move");
  $("delete-model").onclick = () => deletePicked().catch(showError);
}

function showThing(kind, id) {
  if (kind === "terrain") {
    const t = state.view.terrain.find((x) => x.id === id);
    $("selection").innerHTML = `<h2>Terrain ${escapeHtml(id)}</h2>
      <p>Category: <b>${escapeHtml(t.kind)}</b> · ${t.blocks_sight ? "blocks sight" : "does not block sight"} in this game</p>
      <label>Set category <input id="terrain-kind" value="${escapeHtml(t.kind)}" size="14"></label>
      <button id="terrain-save">Save</button>`;
    $("terrain-save").onclick = () => correct({ op: "terrain", terrain: id, kind: $("terrain-kind").value.trim() }).catch(showError);
  } else if (kind === "objective") {
    const o = state.view.objectives.find((x) => x.id === id);
    $("selection").innerHTML = `<h2>Objective ${escapeHtml(id)}</h2>
      <p>Held by: <b id="objective-holder">${escapeHtml(o.controller || "nobody")}</b></p>
      ${o.verdict ? rulingHtml({ verdict: o.verdict, reasons: o.reasons, rule: o.rule }) : ""}`;
  }
}

async function measurePicks() {
  const [a, b] = state.picks;
  const d = await api(`/api/measure?a=${encodeURIComponent(`${a.kind}:${a.id}`)}&b=${encodeURIComponent(`${b.kind}:${b.id}`)}`);
  $("measure").hidden = false;
  $("distance").textContent = d.text;
  $("distance-detail").textContent = `${a.kind} ${a.id} → ${b.kind} ${b.id}, edge to edge (closest: ${d.closest.join(" – ")})` +
    (d.vertical_in ? `; vertical gap ${d.vertical_in.toFixed(2)}"` : "");
}

async function selectUnit(unitId) {
  const info = await api(`/api/units/${encodeURIComponent(unitId)}`);
  state.unit = info;
  const reach = info.reach;
  const weapons = reach.weapons.map((w) => `${escapeHtml(w.name)} ${w.min_range_in ? `${w.min_range_in}–` : ""}${w.range_in}"`).join(", ");
  const targets = info.targets.map((t) => {
    const r = t.ruling;
    const sight = t.visible === undefined ? "" : `<div class="reasons">Sight: ${t.visible ? `visible (${Math.round(100 * t.visible_fraction)}% of the best-seen model)` : "no line of sight"}${t.sight_verdict === "too_close" ? " (too close to call: the models' measuring error could change it)" : ""}${t.blocked_by && t.blocked_by.length ? `; blocked lines cross ${t.blocked_by.map(escapeHtml).join(", ")}` : ""}</div>`;
    return `<li data-target="${escapeHtml(t.unit)}"><b>${escapeHtml(t.name)}</b> (${escapeHtml(t.player)}) ${r ? rulingHtml(r) : ""}${sight}</li>`;
  }).join("");
  $("unit").hidden = false;
  $("unit").innerHTML = `<h2>Unit ${escapeHtml(info.unit.name)}</h2>
    <p>Move ${reach.move_in ?? "?"}" · threat ${reach.threat_in ?? "?"}" · weapons: ${weapons || "none"}</p>
    <p class="hint">Blue line: move range; orange: move + longest weapon. Green sight lines are clear, red dashed are blocked.</p>
    ${coherencyHtml(info.unit.id)}
    ${lastMoveHtml(info.last_move)}
    <h3>Targets</h3><ul class="targets" id="targets">${targets || "<li>No enemy units on the table.</li>"}</ul>`;
  render(state.view);
}

function lastMoveHtml(move) {
  if (!move) return "";
  const seen = move.source === "camera" ? "seen by the camera" : "as recorded";
  const judged = move.ruling ? rulingHtml(move.ruling) : (move.problems || []).map((p) => `<div class="reasons">${escapeHtml(p)}</div>`).join("");
  return `<h3>Last ${escapeHtml(move.event)} (${seen})</h3>
    <p class="hint">Faint circles: where each model started; lines: to where it stands.</p>
    <div id="unit-last-move">${judged}</div>`;
}

function coherencyHtml(unitId) {
  const u = state.view && state.view.units.find((x) => x.id === unitId);
  if (!u || !u.coherency) return "";
  return `<h3>Coherency</h3><div id="unit-coherency">${rulingHtml({ verdict: u.coherency, reasons: u.coherency_reasons, rule: u.coherency_rule })}</div>`;
}

async function endRound() {
  const proposal = await api("/api/round");
  const score = proposal.score;
  const vp = score.vp || {};
  const rows = Object.entries(vp).map(([p, v]) => `<tr><td>${escapeHtml(p)}</td><td class="vp" data-player="${escapeHtml(p)}">${v}</td></tr>`).join("");
  const evidence = (score.evidence || []).map((e) => `<li>${escapeHtml(e)}</li>`).join("");
  $("round").hidden = false;
  $("round").innerHTML = `<h2>End of round ${proposal.round}</h2>
    ${rows ? `<table class="score" id="score-table"><tr><th>Player</th><th>Points</th></tr>${rows}</table>` : "<p>This game scores no points per round; its state is kept.</p>"}
    ${score.winner ? `<p>Leading: <b>${escapeHtml(score.winner)}</b></p>` : ""}
    <h3>Evidence</h3><ul>${evidence || "<li>none</li>"}</ul>
    ${score.rule ? `<div class="rule">Rule: ${escapeHtml(score.rule)}</div>` : ""}
    <button id="confirm-round">Confirm round ${proposal.round}</button> <button id="cancel-round">Not yet</button>`;
  $("confirm-round").onclick = async () => {
    try {
      const done = await api("/api/round/confirm", { method: "POST", body: { round: proposal.round } });
      $("round").innerHTML = `<h2>Round ${done.confirmed} confirmed</h2><p id="round-done">Now playing round ${done.next_round}.</p>`;
      loadHistory();
    } catch (error) { showError(error); }
  };
  $("cancel-round").onclick = () => { $("round").hidden = true; };
}

async function loadHistory() {
  const [rounds, snapshots] = await Promise.all([api("/api/rounds"), api("/api/snapshots")]);
  $("rounds-list").innerHTML = rounds.length
    ? `<table class="score"><tr><th>Round</th><th>Points</th></tr>${rounds.map((r) => `<tr><td>${r.round}</td><td>${escapeHtml(JSON.stringify(r.score.vp || {}))}</td></tr>`).join("")}</table>`
    : "<p class='hint'>No round confirmed yet.</p>";
  const list = $("snapshot-list");
  list.replaceChildren(...snapshots.slice(-20).reverse().map((s) => {
    const li = document.createElement("li");
    li.innerHTML = `<img alt="" loading="lazy" src="/api/snapshots/${s.id}/thumbnail.png"> round ${s.round}: ${escapeHtml(s.reason)} <button data-snapshot="${s.id}">Open</button>`;
    li.querySelector("button").onclick = () => openSnapshot(s.id).catch(showError);
    return li;
  }));
}

async function openSnapshot(id) {
  const snap = await api(`/api/snapshots/${id}`);
  const rulings = snap.rulings.filter((r) => r.verdict).map((r) => `<li>${escapeHtml(r.question)} ${verdictBadge(r.verdict)}</li>`).join("");
  $("snapshot-view").innerHTML = `<h3>Snapshot ${id} (round ${snap.round}, ${escapeHtml(snap.reason)})</h3>
    <img alt="snapshot ${id}" src="/api/snapshots/${id}/thumbnail.png" style="width:100%">
    <ul>${rulings}</ul>`;
}

// ---------- clicking on the table ----------
function tablePoint(event) {
  const svg = $("table");
  const point = svg.createSVGPoint();
  point.x = event.clientX; point.y = event.clientY;
  const p = point.matrixTransform(svg.getScreenCTM().inverse());
  return { x: p.x, y: p.y };
}

async function correct(correction) {
  const done = await api("/api/corrections", { method: "POST", body: { correction } });
  showError(null);
  return done;
}

// Models the camera knows but sees nowhere: the players say which were taken off the table (a delete correction).
function renderUnseen(unseen) {
  $("unseen").hidden = !unseen.length;
  $("unseen-list").innerHTML = unseen.map((id) =>
    `<li>${escapeHtml(id)} <button class="taken-off" data-id="${escapeHtml(id)}">Taken off</button></li>`).join("");
  for (const button of $("unseen-list").querySelectorAll("button.taken-off")) {
    button.onclick = () => correct({ op: "delete", model: button.dataset.id }).catch(showError);
  }
}

async function deletePicked() {
  const pick = state.picks[state.picks.length - 1];
  if (!pick || pick.kind !== "model") throw new Error("select a model first");
  await correct({ op: "delete", model: pick.id });
  state.picks = [];
  $("selection").innerHTML = `<p class="hint">Deleted ${escapeHtml(pick.id)}.</p>`;
}

function setMode(mode) {
  state.mode = mode;
  const hints = {
    normal: "Click a model to see it; click a second piece to measure. Keys: Esc clear · U unit · M move · Del delete · L lasso · E end round",
    move: "Click the model's true position on the table (Esc to cancel).",
    add: "Click where the new model stands (Esc to cancel).",
    lasso: "Drag round the models to assign (Esc to cancel).",
  };
  $("mode-hint").textContent = hints[mode];
}

async function onTableClick(event) {
  const target = event.target.closest("[data-kind]");
  const point = tablePoint(event);
  if (state.mode === "move") {
    const pick = state.picks[state.picks.length - 1];
    setMode("normal");
    if (pick && pick.kind === "model") await correct({ op: "move", model: pick.id, x: +point.x.toFixed(3), y: +point.y.toFixed(3) });
    return;
  }
  if (state.mode === "add") {
    setMode("normal");
    const id = `added-${Date.now().toString(36)}`;
    await correct({ op: "add", model: { id, unit: $("add-unit").value, base: $("add-base").value, x: +point.x.toFixed(3), y: +point.y.toFixed(3) } });
    return;
  }
  if (!target) { clearSelection(); return; }
  const pick = { kind: target.dataset.kind, id: target.dataset.id };
  if (state.picks.length === 1 && !(state.picks[0].kind === pick.kind && state.picks[0].id === pick.id)) {
    state.picks.push(pick);
    await measurePicks();
  } else {
    state.picks = [pick];
    $("measure").hidden = true;
  }
  if (pick.kind === "model") await showModel(pick.id); else showThing(pick.kind, pick.id);
  if (state.picks.length === 2) state.picks = [pick];  // the next click measures from here
  render(state.view);
}

function clearSelection() {
  state.picks = []; state.unit = null; state.lassoed = [];
  $("selection").innerHTML = "<p class='hint'>Nothing selected.</p>";
  $("measure").hidden = true; $("unit").hidden = true;
  setMode("normal");
  if (state.view) render(state.view);
}

function insidePolygon(p, poly) {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const a = poly[i], b = poly[j];
    if ((a.y > p.y) !== (b.y > p.y) && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

function setupLasso() {
  const svg = $("table");
  svg.addEventListener("pointerdown", (event) => {
    if (state.mode !== "lasso") return;
    state.lasso = [tablePoint(event)];
    svg.setPointerCapture(event.pointerId);
  });
  svg.addEventListener("pointermove", (event) => {
    if (state.mode !== "lasso" || !state.lasso.length) return;
    state.lasso.push(tablePoint(event));
    render(state.view);
  });
  svg.addEventListener("pointerup", () => {
    if (state.mode !== "lasso" || !state.lasso.length) return;
    state.lassoed = state.view.models.filter((m) => insidePolygon(m, state.lasso)).map((m) => m.id);
    state.lasso = [];
    setMode("normal");
    $("lasso-count").textContent = state.lassoed.length;
    $("assign-apply").disabled = state.lassoed.length === 0;
    state.suppressClick = true;
    render(state.view);
  });
}

// ---------- start ----------
async function loadSetup() {
  const games = await api("/api/games");
  $("setup-game").replaceChildren(...games.games.map((g) => new Option(g.name, g.id, false, g.id === games.current.game)));
  const refreshScenarios = () => {
    const list = games.scenarios[$("setup-game").value] || [];
    $("setup-scenario").replaceChildren(new Option("(none)", ""), ...list.map((s) => new Option(s, s)));
  };
  $("setup-game").onchange = refreshScenarios;
  refreshScenarios();
}

async function showJoinCode() {
  try {
    const info = await api("/api/join-code");
    if (info.lan) { $("join-code").hidden = false; $("join-code").textContent = `Join code: ${info.code}`; }
  } catch (_) { /* not the host */ }
}

function showJoin() { $("join").hidden = false; }

function wire() {
  $("table").addEventListener("click", (event) => {
    if (state.suppressClick) { state.suppressClick = false; return; }
    onTableClick(event).catch(showError);
  });
  setupLasso();
  $("end-round").onclick = () => endRound().catch(showError);
  $("lasso-start").onclick = () => setMode("lasso");
  $("add-start").onclick = () => setMode("add");
  $("assign-apply").onclick = async () => {
    try {
      await api("/api/assign", { method: "POST", body: { unit: $("assign-unit").value, models: state.lassoed } });
      state.lassoed = []; $("assign-apply").disabled = true; $("lasso-count").textContent = "0";
    } catch (error) { showError(error); }
  };
  $("roster-import").onclick = async () => {
    try {
      await api("/api/roster", { method: "POST", body: { format: $("roster-format").value, text: $("roster-text").value } });
      showError(null);
    } catch (error) { showError(error); }
  };
  $("setup-apply").onclick = async () => {
    try {
      const scenario = $("setup-scenario").value || null;
      await api("/api/setup", { method: "POST", body: { game: $("setup-game").value, scenario } });
      clearSelection(); loadHistory();
    } catch (error) { showError(error); }
  };
  $("join-button").onclick = async () => {
    try {
      await api("/api/join", { method: "POST", body: { code: $("join-input").value.trim() } });
      $("join").hidden = true; start();
    } catch (error) { $("join-error").textContent = error.message; }
  };
  $("flux-ask").onclick = () => askFluxPay().catch(showError);
  $("history").addEventListener("toggle", () => { if ($("history").open) loadHistory().catch(showError); });
  document.addEventListener("keydown", (event) => {
    if (["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) return;
    const pick = state.picks[state.picks.length - 1];
    if (event.key === "Escape") clearSelection();
    else if (event.key === "e" || event.key === "E") endRound().catch(showError);
    else if ((event.key === "u" || event.key === "U") && pick && pick.kind === "model") {
      const m = state.view.models.find((x) => x.id === pick.id);
      if (m) selectUnit(m.unit).catch(showError);
    } else if ((event.key === "m" || event.key === "M") && pick && pick.kind === "model") setMode("move");
    else if (event.key === "Delete" || event.key === "Backspace") deletePicked().catch(showError);
    else if (event.key === "l" || event.key === "L") setMode("lasso");
  });
}

async function start() {
  try {
    render(await api("/api/view"));
    connect();
    loadSetup();
    showJoinCode();
    refreshFlux();
  } catch (error) { showError(error); }
}
setInterval(refreshFlux, 2000);  // Flux readings take seconds; polling is enough and survives reconnects

wire();
start();
