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
  // Each gold item with its neighbouring turns (a gold session: its first turns).
  function goldHtml(d, i, where) {
    const parts = [], goldTurns = new Set(d.gold.turn ? d.gold.turn[i] : []);
    for (const gran of Object.keys(d.gold)) {
      const golds = new Set(d.gold[gran][i]);
      for (const id of golds) {
        const hit = gran === "turn" ? where.turns.get(id) : null;
        const s = hit ? hit[0] : where.sessions.get(id);
        if (!s) { parts.push(`<p>✓ gold ${esc(gran)} ${esc(id)}: not in the transcript.</p>`); continue; }
        const lo = hit ? Math.max(0, hit[1] - 2) : 0, hi = hit ? hit[1] + 3 : 4;
        parts.push(`<div class="session" data-gold-item="${esc(id)}"><p><strong>✓ gold ${esc(gran)}</strong> ` +
          `${esc(id)} in session ${esc(s.id)}${s.date ? " (" + esc(s.date) + ")" : ""}</p>` +
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
    const f1 = runs.some((r) => qa.answers[r].f1);
    $("q-answers").tHead.rows[0].innerHTML = `<th scope="col">System</th><th scope="col">Answer</th>` +
      `<th scope="col">Verdict</th>${f1 ? '<th scope="col">Token F1</th>' : ""}`;
    $("q-answers").tBodies[0].innerHTML = runs.map((r) => {
      const a = qa.answers[r];
      return `<tr data-run="${esc(r)}"><th scope="row">${esc(r)}</th><td data-field="answer">${esc(a.answer[i])}</td>` +
        `<td data-field="verdict">${verdictText(a.correct[i], a.status[i])}</td>` +
        (f1 ? `<td class="num" data-field="f1">${a.f1 ? num(a.f1[i], 4) : "—"}</td>` : "") + "</tr>";
    }).join("");
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
    const key = `${d.name}/${hay}`;
    load(d.haystack_files[hay]).then(() => {
      if (state.q !== Q.id[i]) return;  // another question was opened meanwhile
      const where = locate(window.MEMBENCH_EVIDENCE[key]);
      $("q-gold").innerHTML = goldHtml(d, i, where);
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
