// The results page: tables (sort, filter, CSV), panel switcher, URL-hash state, chart embedding.
// Labels are data: every text is set with textContent or as a Vega datum, never as markup.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("page-data").textContent);
  function unpack(tab) {  // rows are stored as lists under tab.keys
    if (tab && !tab.rows) tab.rows = tab.data.map(a => Object.fromEntries(tab.keys.map((k, i) => [k, a[i]])));
  }
  for (const p of DATA.panels) { for (const s of p.sections) s.tables.forEach(unpack); unpack(p.top); }
  unpack(DATA.claims); unpack(DATA.provenance.inputs);
  if (DATA.diff) DATA.diff.tables.forEach(unpack);
  const FILTERS = ["language", "backbone", "status", "cpanel"];
  const state = { panel: null, sort: {}, cell: null };
  const views = [];
  const filtered = [];  // [chart, box] of charts the language filter applies to

  // --- helpers -------------------------------------------------------------------------------
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function num(value, digits) {
    if (value === null || value === undefined || value === "") return "\u2014";
    if (typeof value !== "number") return String(value);
    return value.toFixed(digits);
  }
  function pval(value) {
    if (value === null || value === undefined) return "\u2014";
    if (value !== 0 && Math.abs(value) < 1e-3) return value.toExponential(2);
    return value.toFixed(4);
  }
  function show(row, c) {
    // an interval is missing where its low end is
    const v = c.type === "interval" ? row[c.low] : row[c.key];
    if (c.missing && (v === null || v === undefined)) return c.missing;
    switch (c.type) {
      case "interval": {
        const lo = row[c.low], hi = row[c.high];
        if (lo === null || lo === undefined) return "\u2014";
        return "[" + num(lo, c.digits) + ", " + num(hi, c.digits) + "]";
      }
      case "num": return num(v, c.digits);
      case "int": return v === null || v === undefined ? "\u2014" : String(v);
      case "p": return pval(v);
      case "bool": return v === null || v === undefined ? "\u2014" : (v ? "yes" : "no");
      default: return v === null || v === undefined ? "" : String(v);
    }
  }
  // A long identifier (a path, a snake_case id) may break only after _ / . or - (a . or - only
  // before a letter, so numbers stay whole): <wbr> marks those places and adds no text, so what
  // is selected, copied or compared is the value as it is.
  const BREAK_AFTER = /[_\/]|[.-](?=[^\d\s])/g;
  function breakable(td, text) {
    let start = 0;
    for (const m of text.matchAll(BREAK_AFTER)) {
      const end = m.index + 1;
      if (end >= text.length) break;
      td.append(document.createTextNode(text.slice(start, end)), el("wbr"));
      start = end;
    }
    td.append(document.createTextNode(text.slice(start)));
  }
  function sortValue(row, c) { return c.type === "interval" ? row[c.low] : row[c.key]; }
  function csvCell(v) {
    if (v === null || v === undefined) return "";
    const s = String(v);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function fileColumns(tab) {
    const keys = [];
    for (const c of tab.columns) {
      if (c.type === "interval") keys.push(c.low, c.high); else keys.push(c.key);
    }
    return keys;
  }

  // --- URL hash ------------------------------------------------------------------------------
  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const names = DATA.panels.map(p => p.name);
    state.panel = names.includes(params.get("panel")) ? params.get("panel") : names[0] || null;
    for (const f of FILTERS) state[f] = params.get(f) || "";
    state.sort = {};
    for (const [k, v] of params.entries()) {
      if (k.startsWith("sort.")) state.sort[k.slice(5)] = v;
    }
    state.cell = params.has("cell_language") ?
      [params.get("cell_language"), params.get("cell_backbone")] : null;
  }
  function writeHash() {
    const params = new URLSearchParams();
    if (state.panel) params.set("panel", state.panel);
    for (const f of FILTERS) if (state[f]) params.set(f, state[f]);
    for (const [k, v] of Object.entries(state.sort)) params.set("sort." + k, v);
    if (state.cell) { params.set("cell_language", state.cell[0]); params.set("cell_backbone", state.cell[1]); }
    history.replaceState(null, "", "#" + params.toString());
  }

  // --- tables --------------------------------------------------------------------------------
  function highlightsFor(tab) {
    return (DATA.diff && DATA.diff.highlights[tab.id]) || [];
  }
  function visibleRows(tab) {
    let rows = tab.rows.slice();
    for (const f of FILTERS) {
      const cols = tab.filters[f];
      if (!state[f] || !cols || !cols.length) continue;
      rows = rows.filter(r => cols.some(c => String(r[c]) === state[f]));
    }
    const sort = state.sort[tab.id];
    if (sort) {
      const [key, dir] = sort.split(":");
      const c = tab.columns.find(x => x.key === key);
      if (c) {
        const sign = dir === "desc" ? -1 : 1;
        rows = rows.map((r, i) => [r, i]).sort((a, b) => {
          const x = sortValue(a[0], c), y = sortValue(b[0], c);
          const xn = x === null || x === undefined, yn = y === null || y === undefined;
          if (xn || yn) return xn === yn ? a[1] - b[1] : (xn ? 1 : -1);
          const cmp = typeof x === "number" && typeof y === "number" ? x - y :
            String(x).localeCompare(String(y));
          return cmp !== 0 ? sign * cmp : a[1] - b[1];
        }).map(p => p[0]);
      }
    }
    return rows;
  }
  function toCsv(tab, rows) {
    const keys = fileColumns(tab);
    return [keys.map(csvCell).join(",")].concat(
      rows.map(r => keys.map(k => csvCell(r[k])).join(","))).join("\n") + "\n";
  }
  function scopeText(tab) {
    const panel = currentPanel();
    const lang = panel ? panel.filters.language.label : "language";
    const langFilter = tab.filters.language && tab.filters.language.length;
    if (tab.scope === "per language") {
      return "per " + lang + (langFilter ? ": the " + lang + " filter applies" : "");
    }
    return tab.scope + (tab.id === "claims" || tab.id === "inputs" ? "" :
      ": the " + lang + " filter does not apply");
  }
  function renderTable(tab, holder) {
    holder.textContent = "";
    const rows = visibleRows(tab);
    const head = el("div", { class: "table-head" });
    head.append(el("h3", {}, tab.title));
    head.append(el("span", { class: "scope" }, scopeText(tab)));
    head.append(el("span", { class: "count" }, rows.length + " of " + tab.rows.length + " rows"));
    const copy = el("button", { type: "button", class: "copy-csv" }, "Copy CSV");
    copy.addEventListener("click", () => copyText(toCsv(tab, visibleRows(tab)), copy));
    const down = el("button", { type: "button", class: "download-csv" }, "Download CSV");
    down.addEventListener("click", () => download(tab, toCsv(tab, visibleRows(tab))));
    head.append(copy, down, el("span", { class: "source" }, "from " + tab.source));
    holder.append(head);
    if (tab.note) holder.append(el("p", { class: "note" }, tab.note));
    const wrap = el("div", { class: "table-wrap" });
    const table = el("table", { "data-table": tab.id, "data-source": tab.source });
    const tr = el("tr");
    const sort = (state.sort[tab.id] || ":").split(":");
    for (const c of tab.columns) {
      const th = el("th", { "data-key": c.key, scope: "col" });
      const b = el("button", { type: "button" }, c.label);
      if (sort[0] === c.key) { th.setAttribute("aria-sort", sort[1] === "desc" ? "descending" : "ascending"); }
      b.addEventListener("click", () => {
        const cur = state.sort[tab.id];
        state.sort[tab.id] = c.key + ":" + (cur === c.key + ":asc" ? "desc" : "asc");
        writeHash(); renderTable(tab, holder);
      });
      th.append(b); tr.append(th);
    }
    const thead = el("thead"); thead.append(tr); table.append(thead);
    const tbody = el("tbody");
    const marks = highlightsFor(tab);
    for (const r of rows) {
      const row = el("tr");
      if (tab.id.endsWith(".leaderboard") && r.rank_ub_cbc === 1) {
        row.classList.add("top-set"); row.title = "CBC top set (group 1)";
      }
      const hit = marks.filter(m => Object.entries(m.match).every(([k, v]) => String(r[k]) === String(v)));
      for (const c of tab.columns) {
        const td = el("td", { "data-key": c.key, class: c.type === "text" || c.type === "bool" ? "t" : "n" });
        if (c.type === "text") breakable(td, show(r, c)); else td.textContent = show(r, c);
        for (const m of hit) {
          if (m.columns.includes(c.key)) { td.classList.add("changed"); td.title = "run A: " + m.before[c.key]; }
        }
        row.append(td);
      }
      tbody.append(row);
    }
    table.append(tbody); wrap.append(table); holder.append(wrap);
  }
  function copyText(text, button) {
    const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy CSV"; }, 1500); };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
    } else fallbackCopy(text, done);
  }
  function fallbackCopy(text, done) {
    const area = el("textarea"); area.value = text; document.body.append(area);
    area.select(); document.execCommand("copy"); area.remove(); done();
  }
  function download(tab, text) {
    const a = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })),
                        download: tab.id.replace(/[^\w.-]+/g, "_") + ".csv" });
    document.body.append(a); a.click(); a.remove();
  }

  // --- charts --------------------------------------------------------------------------------
  const tip = el("div", { id: "tooltip", role: "tooltip" });
  function tooltip(handler, event, item, value) {
    if (value === null || value === undefined || value === "") { tip.style.display = "none"; return; }
    tip.textContent = "";
    const entries = typeof value === "object" ? Object.entries(value) : [["", value]];
    for (const [k, v] of entries) {
      const line = el("div");
      if (k) line.append(el("b", {}, k + ": "));
      line.append(document.createTextNode(String(v)));
      tip.append(line);
    }
    tip.style.display = "block";
    tip.style.left = (event.pageX + 12) + "px";
    tip.style.top = (event.pageY + 12) + "px";
  }
  function chartSpec(chart) {  // the language filter applies to the slopegraph
    if (!chart.id.endsWith(".slopegraph") || !state.language) return chart.spec;
    const values = chart.spec.data.values.filter(d => String(d.language) === state.language);
    return Object.assign({}, chart.spec, { data: { values: values } });
  }
  function draw(chart, box) {  // (re)draw a chart into its box, replacing the view it had
    const old = box.view;
    box.removeAttribute("data-rendered");
    return vegaEmbed(box, chartSpec(chart), { renderer: "svg", actions: false, mode: "vega-lite",
                                              tooltip: tooltip }).then(result => {
      if (old) { old.finalize(); const i = views.indexOf(old); if (i >= 0) views.splice(i, 1); }
      views.push(result.view); box.view = result.view;
      return result;
    });
  }
  function refreshCharts() {
    for (const [chart, box] of filtered) draw(chart, box).then(() => box.setAttribute("data-rendered", "true"));
  }
  function embed(chart, holder) {
    const box = el("div", { class: "chart", "data-chart": chart.id });
    const figure = el("div", { class: "figure" });  // a heading stays with its own chart
    if (chart.title) figure.append(el("h3", {}, chart.title));
    figure.append(box); holder.append(figure);
    if (chart.id.endsWith(".slopegraph")) filtered.push([chart, box]);
    return draw(chart, box)
      .then(result => {
        if (chart.id.endsWith(".heatmap")) {
          result.view.addEventListener("click", (ev, item) => {
            if (item && item.datum && item.datum.language !== undefined) {
              tip.style.display = "none";  // the detail below answers the click
              state.cell = [String(item.datum.language), String(item.datum.backbone)];
              writeHash(); renderDetail();
            }
          });
        }
        box.setAttribute("data-rendered", "true");
      });
  }

  // --- cell detail ---------------------------------------------------------------------------
  function renderDetail() {
    const holder = document.getElementById("cell-detail");
    const panel = currentPanel();
    if (!holder || !panel || !panel.detail) return;
    holder.textContent = "";
    const d = panel.detail;
    if (!state.cell) { holder.append(el("p", { class: "note" }, "Click a cell of the heatmap for its scores over tasks.")); return; }
    const l = d.languages.map(String).indexOf(state.cell[0]);
    const b = d.backbones.map(String).indexOf(state.cell[1]);
    if (l < 0 || b < 0) return;
    const beta = d.beta[l][b];
    const range = d.score_range || null;  // a calibrated score outside it is flagged
    const rows = d.tasks.map((t, i) => {
      const raw = d.raw[l][b][i];
      const cbc = raw === null ? null : raw - beta;
      return { task: t, raw: raw, cbc: cbc,
               outside: range && cbc !== null ? cbc < range[0] || cbc > range[1] : null };
    });
    const tab = { id: panel.name + ".cell", title: "The same scores, task by task",
                  source: d.sources.join(" and "), scope: "per language", filters: {},
                  columns: [{ key: "task", label: "task", type: "text" },
                            { key: "raw", label: "raw score", type: "num", digits: 3 },
                            { key: "cbc", label: "calibrated score", type: "num", digits: 3 },
                            ...(range ? [{ key: "outside", label: "outside the score range", type: "bool" }] : [])],
                  rows: rows,
                  note: range ? "A calibrated score outside the score range [" + range[0] + ", " + range[1] +
                    "] is flagged: it is kept as it is (the raw score minus the cell's beta), not clipped." : "" };
    const chart = { id: panel.name + ".cell_chart", title: "", spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      data: { values: rows.flatMap((r, i) => [{ i: i, task: r.task, stage: "raw", score: r.raw },
                                            { i: i, task: r.task, stage: "CBC", score: r.cbc }]) },
      mark: { type: "point", filled: true, size: 18 },
      encoding: { x: { field: "i", type: "quantitative", title: "task (file order)" },
                  y: { field: "score", type: "quantitative" },
                  color: { field: "stage", type: "nominal", sort: ["raw", "CBC"],
                           scale: { range: ["#E69F00", "#0072B2"] } },
                  tooltip: [{ field: "task" }, { field: "stage" }, { field: "score", format: ".3f" }] },
      width: 480, height: 140, config: DATA.chart_config } };
    holder.append(el("h3", { class: "cell-title" },
                     "Scores over tasks: " + state.cell[0] + " \u00d7 " + state.cell[1]));
    embed(chart, holder);
    const t = el("div", { class: "table", id: "cell-table" }); holder.append(t); renderTable(tab, t);
  }

  // --- page ----------------------------------------------------------------------------------
  function currentPanel() { return DATA.panels.find(p => p.name === state.panel) || null; }
  const rendered = [];  // [table, holder] of the current view, re-rendered on filter changes
  function select(name, label, values) {
    const wrap = el("label", { class: "filter" }, label + " ");
    const s = el("select", { name: name, "data-filter": name });
    s.append(el("option", { value: "" }, "all"));
    for (const v of values) { const o = el("option", {}, v); o.value = v; s.append(o); }
    s.value = values.includes(state[name]) ? state[name] : "";
    s.addEventListener("change", () => {
      state[name] = s.value; writeHash(); refreshTables();
      if (name === "language") refreshCharts();
    });
    wrap.append(s); return wrap;
  }
  function refreshTables() { for (const [tab, holder] of rendered) renderTable(tab, holder); }
  function addTable(tab, parent) {
    const holder = el("div", { class: "table", id: "table-" + tab.id }); parent.append(holder);
    rendered.push([tab, holder]); renderTable(tab, holder);
  }
  function render() {
    for (const v of views.splice(0)) v.finalize();
    rendered.length = 0; filtered.length = 0;
    const nav = document.getElementById("panels"); nav.textContent = "";
    for (const p of DATA.panels) {
      const b = el("button", { type: "button", "data-panel": p.name, class: p.name === state.panel ? "on" : "" }, p.name);
      b.addEventListener("click", () => { state.panel = p.name; state.cell = null; state.language = ""; state.backbone = ""; writeHash(); render(); });
      nav.append(b);
    }
    const main = document.getElementById("panel"); main.textContent = "";
    if (DATA.diff) renderDiff(main);
    const panel = currentPanel();
    const pending = [];
    if (panel) {
      if ((panel.verdict && panel.verdict.length) || panel.ranked) {
        const verdict = el("div", { id: "verdict", class: "verdict" });
        verdict.append(el("h2", {}, "Verdict: " + panel.name));
        // what "first" means on this panel, before any ranking is read
        if (panel.ranked) verdict.append(el("p", { class: "ranked", id: "ranked" }, panel.ranked));
        for (const sentence of panel.verdict || []) verdict.append(el("p", {}, sentence));
        main.append(verdict);
        if (panel.top) addTable(panel.top, verdict);
      }
      const bar = el("div", { class: "filters" });
      bar.append(el("strong", {}, "Panel " + panel.name + " \u2014 filter: "));
      bar.append(select("language", panel.filters.language.label, panel.filters.language.values));
      bar.append(select("backbone", panel.filters.backbone.label, panel.filters.backbone.values));
      main.append(bar);
      for (const s of panel.sections) {
        const sec = el("section", { id: "section-" + s.id, "data-section": s.id });
        sec.append(el("h2", {}, s.title));
        if (s.warning) sec.append(el("p", { class: "banner", role: "status" }, s.warning));
        if (s.note) sec.append(el("p", { class: "note" }, s.note));
        if (s.facts && s.facts.items.length) {
          const dl = el("dl", { class: "facts", "data-source": s.facts.source });
          for (const [k, v] of s.facts.items) {
            dl.append(el("dt", {}, k), el("dd", {}, typeof v === "number" && !Number.isInteger(v) ? v.toFixed(4) : (typeof v === "boolean" ? (v ? "yes" : "no") : v)));
          }
          sec.append(dl);
        }
        const chartRow = el("div", { class: "charts" });
        for (const c of s.charts) pending.push(embed(c, chartRow));
        sec.append(chartRow);
        if (s.id === "beta" && panel.detail) sec.append(el("div", { id: "cell-detail" }));
        for (const t of s.tables) addTable(t, sec);
        main.append(sec);
      }
    }
    const claims = document.getElementById("claims"); claims.textContent = "";
    if (DATA.claims) {
      const bar = el("div", { class: "filters" });
      const statuses = [...new Set(DATA.claims.rows.map(r => String(r.status)))];
      // claims are grouped by the results folder of their output: a panel's, or another's
      // (the simulation study, a panel of another config), so the filter is named for that
      const key = DATA.claims.filters.cpanel[0];
      const label = DATA.claims.columns.find(c => c.key === key).label;
      const folders = [...new Set(DATA.claims.rows.map(r => String(r[key])))].filter(x => x);
      bar.append(select("status", "status", statuses), select("cpanel", label, folders));
      claims.append(el("h2", {}, "Claims"), bar);
      addTable(DATA.claims, claims);
    }
    const prov = document.getElementById("provenance"); prov.textContent = "";
    prov.append(el("h2", {}, "Provenance"));
    const dl = el("dl", { class: "facts" });
    dl.append(el("dt", {}, "polyjudge version"), el("dd", { id: "version" }, DATA.provenance.version));
    dl.append(el("dt", {}, "configuration SHA-256"), el("dd", { id: "config-sha256" }, DATA.provenance.config_sha256 || "not recorded (page built outside the workflow)"));
    prov.append(dl);
    addTable(DATA.provenance.inputs, prov);
    Promise.all(pending).then(() => { renderDetail(); document.body.setAttribute("data-ready", "true"); },
      err => { document.body.setAttribute("data-ready", "error"); throw err; });
  }
  function renderDiff(main) {
    const sec = el("section", { id: "section-diff", "data-section": "diff" });
    sec.append(el("h2", {}, "Differences from run A"));
    sec.append(el("p", { class: "note" }, "This page shows run B (" + DATA.diff.run_b + "); changes against run A (" +
      DATA.diff.run_a + ") are listed here and outlined in the tables and the heatmap. " + DATA.diff.tolerance));
    for (const t of DATA.diff.tables) addTable(t, sec);
    main.append(sec);
  }

  document.body.append(tip);
  readHash();
  render();
  window.addEventListener("hashchange", () => { readHash(); render(); });
})();
