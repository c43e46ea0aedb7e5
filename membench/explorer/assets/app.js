// membench results explorer: runs from file:// with no server. Data arrive as scripts that assign to globals
// (data/index.js -> MEMBENCH_INDEX, data/d<N>.js -> MEMBENCH_DATA, data/d<N>/h<M>.js -> MEMBENCH_EVIDENCE),
// the dataset and haystack files injected on demand. The page's state lives in the URL fragment.
"use strict";
(function () {
  const INDEX = window.MEMBENCH_INDEX.run;
  const $ = (id) => document.getElementById(id);
  const state = {};
  const loading = {};
  const FIRST_ROWS = 200;  // rows listed at once: a filter answers at once, "Show all" lists the rest
  let showAll = false;

  // ---- small helpers -----------------------------------------------------------------------------------
  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
      '"': "&quot;", "'": "&#39;" })[c]);
  }
  function num(v, digits) { return v == null ? "—" : (digits == null ? String(v) : Number(v).toFixed(digits)); }
  function options(select, values, labels, chosen) {
    select.innerHTML = values.map((v, i) => `<option value="${esc(v)}"${v === chosen ? " selected" : ""}>` +
      `${esc(labels ? labels[i] : v)}</option>`).join("");
  }
  // A script file, once: resolves when it has run (file:// allows <script src>, not fetch()).
  function load(src) {
    if (!loading[src]) {
      loading[src] = new Promise((resolve, reject) => {
        const tag = document.createElement("script");
        tag.src = src;
        tag.onload = resolve;
        tag.onerror = () => reject(new Error("could not load " + src));
        document.head.appendChild(tag);
      });
    }
    return loading[src];
  }
  function dataset() { return INDEX.datasets.find((d) => d.name === state.ds) || INDEX.datasets[0]; }
  function data() { return (window.MEMBENCH_DATA || {})[dataset().name]; }

  // ---- URL fragment <-> state ----------------------------------------------------------------------------
  const KEYS = ["view", "ds", "metric", "type", "split", "a", "b", "verdict", "text", "q", "gran"];
  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    for (const k of KEYS) state[k] = params.get(k) || "";
  }
  function writeHash() {
    const params = new URLSearchParams();
    for (const k of KEYS) if (state[k]) params.set(k, state[k]);
    const hash = "#" + params.toString();
    if (hash !== location.hash) history.replaceState(null, "", hash);
  }
  function set(changes) {
    if (!("q" in changes)) showAll = false;  // a new filter lists its first rows; back from a question keeps them
    Object.assign(state, changes);
    writeHash();
    render();
  }

  // ---- interval charts: inline SVG drawn here, each system's mean and 95% CI on one axis, the baseline marked -----
  // A step of about a fifth of the range: 1, 2 or 5 times a power of ten.
  function tickStep(range) {
    const raw = range / 5, pow = 10 ** Math.floor(Math.log10(raw)), f = raw / pow;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * pow;
  }
  // The axis: from 0 (or below, for a measure that goes negative) to past the highest end, on whole ticks.
  function axisDomain(values) {
    const lo = Math.min(0, ...values), top = Math.max(0, ...values), hi = top > lo ? top : lo + 0.1;
    const step = tickStep(hi - lo);
    return [Math.floor(lo / step + 1e-9) * step, Math.ceil(hi / step - 1e-9) * step, step];
  }
  function figureText(r, missing) {
    return r.mean == null ? `${r.run}: ${missing || "no figure"}` : `${r.run}: ${num(r.mean)}` +
      (r.lo != null ? ` [${num(r.lo)}, ${num(r.hi)}]` : " (no CI)") + (r.n != null ? `, n = ${r.n}` : "");
  }
  // rows: [{run, mean, lo, hi, n}] in the order drawn (mean null: no figure). opts: baseline, label (the chart's
  // accessible name), up (true: more is better, false: less, null: unsaid), width and label width (viewBox units).
  function intervalChart(rows, opts) {
    const W = opts.width || 720, x0 = opts.labels || 170, x1 = W - 16, ROW = 22, TOP = 26;
    const [lo, hi, step] = opts.domain ? [...opts.domain, tickStep(opts.domain[1] - opts.domain[0])] :
      axisDomain(rows.flatMap((r) => [r.mean, r.lo, r.hi]).filter((v) => v != null));
    const x = (v) => (x0 + (v - lo) / (hi - lo) * (x1 - x0)).toFixed(3);
    const bottom = TOP + rows.length * ROW, H = bottom + 34;
    const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    const parts = [];
    for (let n = 0; lo + n * step <= hi + step / 2; n++) {
      const t = lo + n * step;
      parts.push(`<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="${TOP - 4}" y2="${bottom}"/>` +
        `<text class="tick" x="${x(t)}" y="${bottom + 14}" text-anchor="middle">${t.toFixed(digits)}</text>`);
    }
    if (opts.up != null) {
      parts.push(`<text class="better" x="${opts.up ? x1 : x0}" y="${bottom + 30}" text-anchor="${opts.up ? "end" : "start"}">` +
        `${opts.up ? "more is better →" : "← less is better"}</text>`);
    }
    const base = rows.find((r) => r.run === opts.baseline && r.mean != null);
    if (base) {
      parts.push(`<line class="base" data-baseline="${esc(base.run)}" x1="${x(base.mean)}" x2="${x(base.mean)}" ` +
        `y1="${TOP - 8}" y2="${bottom}"/><text class="base-label" x="${x(base.mean)}" y="${TOP - 12}" ` +
        `text-anchor="middle">baseline ${esc(base.run)} = ${num(base.mean, 3)}</text>`);
    }
    rows.forEach((r, j) => {
      const y = TOP + j * ROW + ROW / 2, isBase = r.run === opts.baseline;
      const name = r.run.length > 24 ? r.run.slice(0, 23) + "…" : r.run;
      let marks = "";
      if (r.mean == null) marks = `<text class="none" x="${x0 + 6}" y="${y + 4}">${esc(opts.missing || "no figure")}</text>`;
      else {
        if (r.lo != null && r.hi != null) {
          marks += `<line class="ci" x1="${x(r.lo)}" x2="${x(r.hi)}" y1="${y}" y2="${y}"/>` +
            `<line class="cap" x1="${x(r.lo)}" x2="${x(r.lo)}" y1="${y - 5}" y2="${y + 5}"/>` +
            `<line class="cap" x1="${x(r.hi)}" x2="${x(r.hi)}" y1="${y - 5}" y2="${y + 5}"/>`;
        }
        marks += `<circle class="mean" cx="${x(r.mean)}" cy="${y}" r="4"/>`;
      }
      parts.push(`<g class="interval${isBase ? " is-baseline" : ""}" data-run="${esc(r.run)}"` +
        (r.mean != null ? ` data-mean="${r.mean}"` : "") +
        (r.lo != null ? ` data-ci-lo="${r.lo}" data-ci-hi="${r.hi}"` : "") + `><title>${esc(figureText(r, opts.missing))}</title>` +
        `<text class="run" x="${x0 - 8}" y="${y + 4}" text-anchor="end">${esc(name)}${isBase ? " (baseline)" : ""}</text>` +
        marks + `</g>`);
    });
    return `<svg class="intervals" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(opts.label)}" ` +
      `data-lo="${lo}" data-hi="${hi}" data-x0="${x0}" data-x1="${x1}">${parts.join("")}</svg>`;
  }
  // The drawing's width in its own units, at most `widest`: about the page's, so its text stays legible on a phone.
  function chartWidth(widest) {
    const width = Math.round(Math.min(widest, Math.max(320, $("board").clientWidth || widest)));
    return { width, labels: width < 500 ? 120 : 170 };
  }
  function chartRow(run, fig) {
    return { run, mean: fig ? fig.mean : null, lo: fig ? fig.ci_lo : null, hi: fig ? fig.ci_hi : null,
      n: fig ? fig.n : null };
  }
  // Whether more of a metric is better: the measures of change say; every other headline metric is a score.
  function moreIsBetter(d, metric) {
    const m = d.change && d.change.measures.find((c) => "change/" + c.name === metric);
    return m ? m.up : true;
  }

  // ---- leaderboard ---------------------------------------------------------------------------------------
  function renderBoard(d) {
    const metric = d.metrics.includes(state.metric) ? state.metric : d.default_metric;
    options($("board-metric"), d.metrics, null, metric);
    const eff = d.efficiency.runs || {};
    $("budget-head").textContent = "Budget recall" + (d.efficiency.budget_metric ? ` (${d.efficiency.budget_metric})` : "");
    $("board-short").textContent = `${d.name}: ${metric}`;
    $("board-caption").textContent = `${d.name}: ${metric}, all questions, means with 95% CIs (resampling unit: ` +
      `${d.unit}); paired tests against ${INDEX.baseline}, Holm-adjusted.`;
    const rows = d.runs.map((run) => ({ run, fig: d.leaderboard[run][metric] }))
      .sort((x, y) => (y.fig ? y.fig.mean : -Infinity) - (x.fig ? x.fig.mean : -Infinity));
    $("board-chart-caption").textContent = `Each system's mean (dot) and 95% CI (bar) on ${metric}, best first; ` +
      `the dashed line is the baseline's mean (${INDEX.baseline}). Hover a system for its figures; the table below ` +
      "lists them all.";
    $("board-chart-svg").innerHTML = intervalChart(rows.map(({ run, fig }) => chartRow(run, fig)), {
      baseline: INDEX.baseline, up: moreIsBetter(d, metric), ...chartWidth(720),
      label: `${d.name}: ${metric}, each system's mean and 95% CI, the baseline ${INDEX.baseline} marked` });
    renderChange(d);
    $("board-table").tBodies[0].innerHTML = rows.map(({ run, fig }, i) => {
      const sig = (d.significance[run] || {})[metric];
      const e = eff[run] || {};
      const ci = fig && fig.ci_lo != null ? `[${num(fig.ci_lo)}, ${num(fig.ci_hi)}]` : "n/a";
      const delta = run === INDEX.baseline ? "baseline" :
        sig ? `${num(sig.diff, 4)} [${num(sig.lo, 4)}, ${num(sig.hi, 4)}]` : "—";
      return `<tr data-run="${esc(run)}"><td class="num">${i + 1}</td><th scope="row">${esc(run)}</th>` +
        `<td class="num" data-field="mean">${fig ? num(fig.mean) : "—"}</td><td data-field="ci">${ci}</td>` +
        `<td class="num">${fig ? fig.n : "—"}</td><td>${delta}</td>` +
        `<td class="num" data-field="p_holm">${sig ? num(sig.p_holm, 4) : "—"}</td>` +
        `<td>${sig ? `${sig.wins} / ${sig.ties} / ${sig.losses}` : "—"}</td>` +
        `<td class="num">${num(e.latency_p50, 3)}</td><td class="num">${num(e.tokens10, 1)}</td>` +
        `<td class="num">${num(e.budget_recall, 3)}</td></tr>`;
    }).join("");
  }

  // ---- BEAM's measures of change: each at k = 10 with its CI, by ability, with the coverage counts ------------
  const ability = (a) => String(a).replace(/_/g, " ");
  const direction = (up) => up ? "↑ more is better" : "↓ less is better";
  const REASONS = { sides_equal: "both sides name the same messages", side_empty: "a side names no message",
    no_source_ids: "the benchmark names no gold message", fewer_than_two_events: "fewer than two events" };
  const ORDER_NOTE = "gold_order_not_conversation_order";
  // order_tau needs two events found in the top k: a system that never finds two has no figure
  const missingText = (m) => m.name.startsWith("order_tau") ? "never two events in its top k" : "no figure";
  function changeCell(m, f) {
    if (!f) return `<td data-measure="${esc(m.name)}">— <small>(${missingText(m)})</small></td>`;
    return `<td data-measure="${esc(m.name)}"><span data-field="mean">${num(f.mean)}</span> ` +
      `<span data-field="ci">${f.ci_lo != null ? `[${num(f.ci_lo)}, ${num(f.ci_hi)}]` : "n/a"}</span> ` +
      `<small>n = <span data-field="n">${f.n}</span></small></td>`;
  }
  function renderChange(d) {
    const c = d.change;
    $("change").hidden = !c;
    if (!c) return;
    $("change-k").textContent = c.k;
    $("change-note").textContent = "Did the system find what changed? fresh: the update in the top k, above the " +
      "original; stale: the original in the top k and the update not (the outdated answer); both_sides / one_side: " +
      "both statements of a contradiction, or only one (the conflict hidden); both_events: both events of a " +
      "temporal question; event_recall, all_events, order_tau: an ordering's events found, all of them, and " +
      "Kendall's tau-b of their conversation order against the gold order. Each is computed over its ability's " +
      "questions that it can score (coverage below). Systems in the same order in every chart, each chart over " +
      `its measure's whole range (0 to 1; tau -1 to 1); the dashed line is the baseline's (${INDEX.baseline}).`;
    $("change-charts").innerHTML = c.measures.map((m) => `<figure class="chart" data-measure="${esc(m.name)}">` +
      `<figcaption><strong>${esc(m.name)}</strong> · ${esc(ability(m.ability))} · ${direction(m.up)}</figcaption>` +
      intervalChart(d.runs.map((run) => chartRow(run, c.runs[run][m.name])), { ...chartWidth(440),
        baseline: INDEX.baseline, up: m.up, missing: missingText(m),
        domain: m.name.startsWith("order_tau") ? [-1, 1] : [0, 1],  // every chart at its measure's full range
        label: `${m.name} (${ability(m.ability)}, ${m.up ? "more" : "less"} is better): each system's mean and 95% CI` }) +
      "</figure>").join("");
    $("change-table").tHead.innerHTML = `<tr><th scope="col">System</th>` + c.measures.map((m) =>
      `<th scope="col" data-measure="${esc(m.name)}">${esc(m.name)} ${m.up ? "↑" : "↓"}<br>` +
      `<small>${esc(ability(m.ability))}; ${m.up ? "more" : "less"} is better</small></th>`).join("") + "</tr>";
    $("change-table").tBodies[0].innerHTML = d.runs.map((run) => `<tr data-run="${esc(run)}">` +
      `<th scope="row">${esc(run)}${run === INDEX.baseline ? " (baseline)" : ""}</th>` +
      c.measures.map((m) => changeCell(m, c.runs[run][m.name])).join("") + "</tr>").join("");
    const abilities = Object.keys(c.coverage).sort();
    const ordered = abilities.some((a) => c.coverage[a][ORDER_NOTE] != null);
    $("change-coverage").tHead.innerHTML = `<tr><th scope="col">Ability</th><th scope="col">Measures</th>` +
      `<th scope="col">Questions</th><th scope="col">Scored</th><th scope="col">Not scored</th>` +
      `<th scope="col">Why not</th>${ordered ? '<th scope="col">Gold order ≠ conversation order</th>' : ""}</tr>`;
    $("change-coverage").tBodies[0].innerHTML = abilities.map((a) => {
      const row = c.coverage[a];
      const why = Object.keys(row).filter((k) => !["questions", "scored", ORDER_NOTE].includes(k) && row[k])
        .map((k) => `${REASONS[k] || k}: ${row[k]}`);
      return `<tr data-ability="${esc(a)}"><th scope="row">${esc(ability(a))}</th>` +
        `<td>${c.measures.filter((m) => m.ability === a).map((m) => esc(m.name)).join(", ")}</td>` +
        `<td class="num" data-field="questions">${row.questions}</td><td class="num" data-field="scored">${row.scored}</td>` +
        `<td class="num" data-field="not-scored">${row.questions - row.scored}</td><td>${why.join("; ") || "—"}</td>` +
        (ordered ? `<td class="num">${row[ORDER_NOTE] != null ? row[ORDER_NOTE] : "—"}</td>` : "") + "</tr>";
    }).join("");
  }

  // ---- question browser ----------------------------------------------------------------------------------
  function distinct(values) { return [...new Set(values.filter((v) => v != null))].sort(); }
  // The indices of the questions the filters keep: outcome = A's metric value > 0 and B's == 0 (skips drop out).
  function matching(d) {
    const Q = d.questions, metric = state.metric, text = state.text.toLowerCase();
    const av = state.a ? d.scores[state.a][metric] : null, bv = state.b ? d.scores[state.b][metric] : null;
    const verdict = verdictFilter(d);
    const out = [];
    for (let i = 0; i < Q.id.length; i++) {
      if (state.type && Q.type[i] !== state.type) continue;
      if (state.split && Q.split[i] !== state.split) continue;
      if (av && !(av[i] != null && av[i] > 0)) continue;
      if (bv && !(bv[i] != null && bv[i] === 0)) continue;
      if (verdict && verdict.correct[i] !== verdict.wanted) continue;
      if (text && !Q.text[i].toLowerCase().includes(text) && !Q.id[i].toLowerCase().includes(text)) continue;
      out.push(i);
    }
    return out;
  }
  // QA mode: "run|1" keeps the questions whose answer from `run` the judge accepted, "run|0" those it rejected.
  function verdictFilter(d) {
    if (!state.verdict || !d.qa) return null;
    const cut = state.verdict.lastIndexOf("|"), run = state.verdict.slice(0, cut);
    const answers = d.qa.answers[run];
    return answers ? { correct: answers.correct, wanted: state.verdict.slice(cut + 1) === "1" } : null;
  }
  function renderBrowser(d) {
    const Q = d.questions;
    if (!d.metrics.includes(state.metric)) state.metric = d.default_metric;
    for (const k of ["a", "b"]) if (state[k] && !d.runs.includes(state[k])) state[k] = "";
    options($("f-type"), ["", ...distinct(Q.type)], ["any", ...distinct(Q.type)], state.type);
    options($("f-split"), ["", ...distinct(Q.split)], ["any", ...distinct(Q.split)], state.split);
    options($("f-metric"), d.metrics, null, state.metric);
    options($("f-a"), ["", ...d.runs], ["any", ...d.runs], state.a);
    options($("f-b"), ["", ...d.runs], ["any", ...d.runs], state.b);
    const qaRuns = d.qa ? d.qa.runs : [];
    $("f-verdict-box").hidden = !qaRuns.length;
    if (!verdictFilter(d)) state.verdict = "";
    options($("f-verdict"), ["", ...qaRuns.flatMap((r) => [r + "|1", r + "|0"])],
      ["any", ...qaRuns.flatMap((r) => [`${r}: ✓ correct`, `${r}: ✗ wrong`])], state.verdict);
    if ($("f-text").value !== state.text) $("f-text").value = state.text;
    const kept = matching(d);
    const outcome = state.a || state.b ?
      ` where ${state.a || "any system"} finds the evidence (${state.metric} > 0)` +
      (state.b ? ` and ${state.b} does not (= 0)` : "") : "";
    $("count").textContent = `${kept.length} of ${Q.id.length} questions${outcome}.`;
    $("qa-head").textContent = state.a ? `${state.a} ${state.metric}` : "A";
    $("qb-head").textContent = state.b ? `${state.b} ${state.metric}` : "B";
    const av = state.a ? d.scores[state.a][state.metric] : null, bv = state.b ? d.scores[state.b][state.metric] : null;
    const listed = showAll ? kept : kept.slice(0, FIRST_ROWS);
    $("show-all").hidden = listed.length === kept.length;
    $("show-all").textContent = `Show all ${kept.length} questions (${listed.length} listed)`;
    $("qtable").tBodies[0].innerHTML = listed.map((i) =>
      `<tr data-qid="${esc(Q.id[i])}"><td><button type="button" data-open="${i}">${esc(Q.id[i])}: ` +
      `${esc(Q.text[i])}</button></td><td>${esc(Q.type[i])}</td><td>${esc(Q.split[i])}</td>` +
      `<td class="num">${av ? num(av[i], 3) : ""}</td><td class="num">${bv ? num(bv[i], 3) : ""}</td></tr>`).join("");
  }

  // ---- one question ----------------------------------------------------------------------------------------
  // item id -> where it sits in the haystack's sessions: turns by their own id, sessions by theirs.
  function locate(evidence) {
    const turns = new Map(), sessions = new Map();
    for (const s of evidence.sessions) {
      sessions.set(s.id, s);
      s.turns.forEach((t, j) => turns.set(t[0], [s, j]));
    }
    return { turns, sessions };
  }
  function itemText(where, gran, id) {
    if (gran === "turn") {
      const hit = where.turns.get(id);
      return hit ? `${hit[0].turns[hit[1]][1]}: ${hit[0].turns[hit[1]][2]}` : "(not in the transcript)";
    }
    const s = where.sessions.get(id);
    return s ? `${s.date || ""} ${s.turns.map((t) => t[2]).join(" ").slice(0, 240)}` : "(not in the transcript)";
  }
  function turnHtml(t, gold) {
    return `<div class="turn${gold ? " gold" : ""}" data-item="${esc(t[0])}"${gold ? ' data-gold="1"' : ""}>` +
      `${gold ? "<strong>✓ gold</strong> " : ""}<span class="who">${esc(t[1])}</span> ` +
      `<small>[${esc(t[0])}]</small> ${esc(t[2])}</div>`;
  }
  // ---- BEAM: the gold's roles (original / update, the two sides, the events in gold order) ----------------------
  const ROLE_NAMES = { original_info: "original — the outdated information", updated_info: "update — what holds now",
    first_statement: "side 1 — the first statement", second_statement: "side 2 — the statement contradicting it",
    first_event: "first event", second_event: "second event" };
  const ROLE_NOTES = {
    knowledge_update: "fresh@10 counts the update found in the top 10 above the original; stale@10 the original " +
      "found and the update not.",
    contradiction_resolution: "both_sides@10 counts both statements found in the top 10; one_side@10 only one.",
    temporal_reasoning: "both_events@10 counts both events found in the top 10.",
    event_ordering: "event_recall@10 is the share of the events found in the top 10, all_events@10 all of them, " +
      "order_tau@10 the agreement of their conversation order with the gold order." };
  // [{role, group, items, label}] for question i, in gold order; null when it has none.
  function rolesOf(d, i) {
    const roles = d.roles && d.roles[d.questions.id[i]];
    if (!roles) return null;
    const events = roles.filter((r) => r[0] === "event"), ordering = d.questions.type[i] === "event_ordering";
    return roles.map(([role, group, items]) => ({ role, group, items, label: role === "event" ?
      (ordering ? `event ${events.findIndex((e) => e[1] === group) + 1} of ${events.length} (gold order)` :
        `gold entry ${events.findIndex((e) => e[1] === group) + 1} of ${events.length}`) : ROLE_NAMES[role] || role }));
  }
  function rolesHtml(d, i, where, roles) {
    const runs = d.runs.filter((r) => d.top[r].turn);
    return roles.map((r) => {
      const found = runs.map((run) => {
        const list = d.top[run].turn[i] || [];
        const rank = list.findIndex((e) => r.items.includes(e[0]));
        return rank < 0 ? null : `${run} #${rank + 1}`;
      }).filter(Boolean);
      return `<tr data-role="${esc(r.role)}" data-group="${r.group}"><th scope="row">${esc(r.label)}</th>` +
        `<td data-field="items">${r.items.map(esc).join(", ")}</td>` +
        `<td>${r.items.map((id) => esc(itemText(where, "turn", id).slice(0, 240))).join("<br>")}</td>` +
        `<td data-field="found">${found.length ? esc(found.join(", ")) : "none"}</td></tr>`;
    }).join("");
  }
  // Each gold item with its neighbouring turns (a gold session: its first turns); BEAM's say their role.
  function goldHtml(d, i, where, roles) {
    const roleOf = new Map();
    for (const r of roles || []) for (const id of r.items) roleOf.set(id, (roleOf.has(id) ? roleOf.get(id) + "; " : "") + r.label);
    const parts = [], goldTurns = new Set(d.gold.turn ? d.gold.turn[i] : []);
    for (const gran of Object.keys(d.gold)) {
      const golds = new Set(d.gold[gran][i]);
      for (const id of golds) {
        const hit = gran === "turn" ? where.turns.get(id) : null;
        const s = hit ? hit[0] : where.sessions.get(id);
        if (!s) { parts.push(`<p>✓ gold ${esc(gran)} ${esc(id)}: not in the transcript.</p>`); continue; }
        const lo = hit ? Math.max(0, hit[1] - 2) : 0, hi = hit ? hit[1] + 3 : 4;
        const role = gran === "turn" && roleOf.has(id) ? ` — ${esc(roleOf.get(id))}` : "";
        parts.push(`<div class="session" data-gold-item="${esc(id)}"><p><strong>✓ gold ${esc(gran)}</strong> ` +
          `${esc(id)}${role} in session ${esc(s.id)}${s.date ? " (" + esc(s.date) + ")" : ""}</p>` +
          s.turns.slice(lo, hi).map((t) => turnHtml(t, goldTurns.has(t[0]))).join("") +
          (hi < s.turns.length ? `<p><small>… ${s.turns.length - hi} more turns</small></p>` : "") + `</div>`);
      }
    }
    return parts.join("") || "<p>This question has no gold evidence.</p>";
  }
  function topHtml(d, i, where, gran) {
    const runs = [state.a, state.b, ...d.runs].filter((r, j, all) => r && all.indexOf(r) === j);
    return runs.map((run) => {
      const list = (d.top[run][gran] || [])[i] || [];
      const hits = list.filter((e) => e[2]).length;
      return `<section class="top" data-run="${esc(run)}"><h4>${esc(run)} — ${hits} gold in the top ${list.length}</h4>` +
        `<table><thead><tr><th scope="col">#</th><th scope="col">Gold</th><th scope="col">Score</th>` +
        `<th scope="col">Item</th></tr></thead><tbody>` +
        list.map((e, r) => `<tr${e[2] ? ' class="hit" data-gold="1"' : ""} data-item="${esc(e[0])}">` +
          `<td class="num">${r + 1}</td><td>${e[2] ? "✓ gold" : ""}</td><td class="num">${num(e[1], 4)}</td>` +
          `<td><small>[${esc(e[0])}]</small> ${esc(itemText(where, gran, e[0]).slice(0, 300))}</td></tr>`).join("") +
        `</tbody></table></section>`;
    }).join("");
  }
  // ---- QA mode: each answering system's answer and verdict, the judge's calibration beside them --------------
  function verdictText(correct, status) {
    return correct === true ? "✓ correct" : correct === false ? "✗ wrong" : `no verdict (${status || "not asked"})`;
  }
  function renderAnswers(d, i) {
    const qa = d.qa, runs = qa ? qa.runs.filter((r) => qa.answers[r].status[i] != null) : [];
    $("q-qa").hidden = !runs.length;
    if (!runs.length) return;
    const f1 = runs.some((r) => qa.answers[r].f1), ev = runs.some((r) => qa.answers[r].evidence);
    $("q-answers").tHead.rows[0].innerHTML = `<th scope="col">System</th>` +
      `${ev ? '<th scope="col">Gold evidence in its top k</th>' : ""}<th scope="col">Answer</th>` +
      `<th scope="col">Verdict</th>${f1 ? '<th scope="col">Token F1</th>' : ""}`;
    $("q-answers").tBodies[0].innerHTML = runs.map((r) => {
      const a = qa.answers[r];
      return `<tr data-run="${esc(r)}"><th scope="row">${esc(r)}</th>` +
        (ev ? `<td data-field="evidence">${evidenceText(a.evidence)}</td>` : "") +
        `<td data-field="answer">${esc(a.answer[i])}</td>` +
        `<td data-field="verdict">${verdictText(a.correct[i], a.status[i])}</td>` +
        (f1 ? `<td class="num" data-field="f1">${a.f1 ? num(a.f1[i], 4) : "—"}</td>` : "") + "</tr>";
    }).join("");
    function evidenceText(shares) {  // a baseline has none; a run: all, none, or the share found
      const v = shares ? shares[i] : null;
      return v == null ? "—" : v >= 1 ? "✓ all" : v === 0 ? "✗ none" : `${num(v * 100, 0)}% of it`;
    }
    $("q-buys").hidden = !qa.buys;
    if (qa.buys) {
      $("q-buys-table").tHead.innerHTML = "<tr>" + qa.buys.header.map((h) => `<th scope="col">${esc(h)}</th>`).join("") + "</tr>";
      $("q-buys-table").tBodies[0].innerHTML = qa.buys.rows.map((row) => `<tr data-run="${esc(row[0])}"><th scope="row">` +
        `${esc(row[0])}</th>` + row.slice(1).map((c) => `<td>${esc(c)}</td>`).join("") + "</tr>").join("");
    }
    const cal = d.calibration;
    $("q-calibration-note").textContent = cal ? `The judge on probes of known correctness (${d.name}): false-accept ` +
      "= wrong answers it accepted, false-reject = right answers it rejected; 95% Wilson intervals (count/probes)." :
      "This run has no calibration probes (qa.judge_calibration).";
    $("q-calibration-table").hidden = !cal;
    if (!cal) return;
    $("q-calibration-table").tHead.innerHTML =
      "<tr>" + cal.header.map((h) => `<th scope="col">${esc(h)}</th>`).join("") + "</tr>";
    $("q-calibration-table").tBodies[0].innerHTML = cal.rows.map((row) => `<tr data-group="${esc(row[0])}">` +
      row.map((v, j) => j ? `<td>${esc(v)}</td>` : `<th scope="row">${esc(v)}</th>`).join("") + "</tr>").join("");
  }
  function renderQuestion(d) {
    const i = d.questions.id.indexOf(state.q);
    if (i < 0) { $("question").hidden = true; return; }
    const Q = d.questions, hay = Q.haystack[i];
    $("q-title").textContent = `${Q.id[i]}: ${Q.text[i]}`;
    $("q-facts").innerHTML = `<dt>Answer</dt><dd>${esc(Q.answer[i] == null ? "—" : Q.answer[i])}</dd>` +
      `<dt>Type</dt><dd>${esc(Q.type[i])}</dd><dt>Split</dt><dd>${esc(Q.split[i])}</dd>` +
      `<dt>Haystack</dt><dd>${esc(hay)}</dd>` +
      d.runs.map((r) => `<dt>${esc(r)}</dt><dd>${esc(state.metric)} = ${num(d.scores[r][state.metric][i], 3)}</dd>`).join("");
    renderAnswers(d, i);
    const grans = [...new Set(d.runs.flatMap((r) => Object.keys(d.top[r])))].sort();
    const gran = grans.includes(state.gran) ? state.gran : grans[0];
    options($("q-gran"), grans, null, gran);
    $("q-k").textContent = "10";
    $("q-gold").innerHTML = "<p>Loading the transcript…</p>";
    $("q-top").innerHTML = "";
    const roles = rolesOf(d, i);
    $("q-roles").hidden = !roles;
    $("q-roles-table").tBodies[0].innerHTML = "";
    $("q-roles-note").textContent = roles ? (ROLE_NOTES[Q.type[i]] || "This ability has no measure of change: " +
      "its gold messages as the benchmark lists them.") + " A role naming several messages is found when any of " +
      "them is." : "";
    const key = `${d.name}/${hay}`;
    load(d.haystack_files[hay]).then(() => {
      if (state.q !== Q.id[i]) return;  // another question was opened meanwhile
      const where = locate(window.MEMBENCH_EVIDENCE[key]);
      if (roles) $("q-roles-table").tBodies[0].innerHTML = rolesHtml(d, i, where, roles);
      $("q-gold").innerHTML = goldHtml(d, i, where, roles);
      $("q-top").innerHTML = topHtml(d, i, where, gran);
      $("question").dataset.ready = "1";
    });
  }

  // ---- the whole page --------------------------------------------------------------------------------------
  function render() {
    const entry = dataset();
    state.ds = entry.name;
    options($("dataset"), INDEX.datasets.map((d) => d.name), null, entry.name);
    const view = state.view === "questions" ? "questions" : "board";
    $("show-board").setAttribute("aria-pressed", String(view === "board"));
    $("show-browser").setAttribute("aria-pressed", String(view === "questions"));
    $("question").dataset.ready = "";
    const d = data();
    if (!d) {
      $("status").textContent = `Loading ${entry.name}…`;
      load(entry.file).then(render, (e) => { $("status").textContent = e.message; });
      return;
    }
    $("status").textContent = `${d.name}: ${d.questions.id.length} questions, ${d.runs.length} systems.`;
    $("board").hidden = view !== "board";
    $("browser").hidden = view !== "questions" || !!state.q;
    $("question").hidden = view !== "questions" || !state.q;
    if (view === "board") renderBoard(d);
    else if (state.q) { if (!d.metrics.includes(state.metric)) state.metric = d.default_metric; renderQuestion(d); }
    else renderBrowser(d);
    document.body.dataset.ready = "1";
  }

  // ---- events ----------------------------------------------------------------------------------------------
  $("dataset").addEventListener("change", (e) => set({ ds: e.target.value, metric: "", type: "", split: "", a: "", b: "", verdict: "", q: "", gran: "" }));
  $("show-board").addEventListener("click", () => set({ view: "board", q: "" }));
  $("show-browser").addEventListener("click", () => set({ view: "questions", q: "" }));
  $("board-metric").addEventListener("change", (e) => set({ metric: e.target.value }));
  for (const [id, key] of [["f-type", "type"], ["f-split", "split"], ["f-metric", "metric"], ["f-a", "a"], ["f-b", "b"], ["f-verdict", "verdict"]]) {
    $(id).addEventListener("change", (e) => set({ [key]: e.target.value }));
  }
  $("f-text").addEventListener("input", (e) => set({ text: e.target.value }));
  $("q-gran").addEventListener("change", (e) => set({ gran: e.target.value }));
  $("qtable").addEventListener("click", (e) => {
    const button = e.target.closest("button[data-open]");
    if (button) set({ view: "questions", q: data().questions.id[Number(button.dataset.open)] });
  });
  $("show-all").addEventListener("click", () => { showAll = true; render(); });
  $("close-question").addEventListener("click", () => set({ q: "" }));
  window.addEventListener("hashchange", () => { readHash(); render(); });
  if (INDEX.subset) {  // a subset run says so first, as every text it writes does
    $("subset").textContent = INDEX.subset;
    $("subset").hidden = false;
  }
  readHash();
  render();
})();
