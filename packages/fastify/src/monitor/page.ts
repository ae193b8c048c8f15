/**
 * The monitor's live page: plain HTML, one script and one style sheet, served by the plugin (no
 * build step, nothing loaded from elsewhere). The script builds every cell with `textContent`, never
 * HTML, so task text (the agent's and its callers', untrusted) is shown, never run.
 *
 * The operator's token is asked for in a form and kept in sessionStorage (gone with the tab). The
 * events stream is read with fetch, not EventSource: EventSource cannot send an Authorization
 * header, and a token in the URL would end up in access logs, proxies and the browser's history.
 * fetch sends the header, and the Last-Event-ID header on a reconnect, itself.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>A2A monitor</title>
<link rel="stylesheet" href="page.css">
<script src="page.js" defer></script>
</head>
<body>
<header>
  <h1>A2A monitor</h1>
  <span id="status" data-state="idle">not connected</span>
</header>
<form id="login" hidden>
  <label>Operator token <input id="token" type="password" autocomplete="off" required></label>
  <button type="submit">Sign in</button>
  <p id="login-error" role="alert"></p>
</form>
<main id="main" hidden>
  <section>
    <h2>Workers</h2>
    <table id="workers">
      <thead><tr><th>Worker</th><th>Host</th><th>PID</th><th>Started</th><th>Last renewal</th><th>Running</th><th>Queued</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section>
    <h2>Tasks</h2>
    <label>State
      <select id="state-filter">
        <option value="active">running (submitted, working)</option>
        <option value="">all</option>
        <option>submitted</option><option>working</option><option>input-required</option><option>auth-required</option>
        <option>completed</option><option>canceled</option><option>failed</option><option>rejected</option>
      </select>
    </label>
    <table id="tasks">
      <thead><tr><th>Task</th><th>Context</th><th>State</th><th>Owner</th><th>Worker</th><th>Queue</th><th>For</th><th>Push</th><th>Status message</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section id="detail" hidden>
    <h2>Task <span id="detail-id"></span></h2>
    <div id="actions">
      <button type="button" data-action="cancel">Cancel task</button>
      <button type="button" data-action="fail">Fail stuck turn</button>
      <button type="button" data-action="release">Release context slot</button>
    </div>
    <ul id="push"></ul>
    <p id="action-result" role="status"></p>
    <table id="events">
      <thead><tr><th>Seq</th><th>Time</th><th>Kind</th><th>Event</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
</main>
</body>
</html>
`;

export const PAGE_STYLE = `body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5rem 2rem; color: #1d1d1f; }
header { display: flex; align-items: baseline; gap: 1rem; }
h1 { font-size: 1.3rem; }
h2 { font-size: 1.05rem; margin-top: 1.5rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f6; font-weight: 600; }
td { font-family: ui-monospace, monospace; font-size: 12px; max-width: 28rem; overflow-wrap: anywhere; }
#tasks tbody tr { cursor: pointer; }
#tasks tbody tr:hover { background: #f0f6ff; }
#tasks tbody tr.selected { background: #dbeaff; }
#status { font-size: 12px; padding: 0.1rem 0.5rem; border-radius: 1rem; background: #eee; }
#status[data-state="live"] { background: #d8f5dd; }
#status[data-state="error"] { background: #fde2e1; }
.state-working, .state-submitted { color: #0a58ca; }
.state-completed { color: #1a7f37; }
.state-failed, .state-rejected { color: #c62828; }
.state-canceled { color: #6e6e73; }
.state-input-required, .state-auth-required { color: #b26a00; }
#actions button { margin-right: 0.5rem; }
#login { margin: 2rem 0; }
#login-error { color: #c62828; }
`;

export const PAGE_SCRIPT = `'use strict';
(() => {
  const api = location.pathname.replace(/\\/+$/, '');
  const TOKEN_KEY = 'a2a-monitor-token';
  const tasks = new Map();
  let workers = [];
  let selected = null;
  let lastEventId = null;
  let stream = null;
  let renderQueued = false;
  const $ = (id) => document.getElementById(id);

  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const headers = (extra) => Object.assign({ authorization: 'Bearer ' + token() }, extra || {});

  function setStatus(state, text) {
    const el = $('status');
    el.dataset.state = state;
    el.textContent = text;
  }

  function cell(row, text, className) {
    const td = document.createElement('td');
    td.textContent = text === null || text === undefined ? '' : String(text);
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  const time = (ms) => (ms ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '');
  function age(ms) {
    if (ms === null || ms === undefined) return '';
    if (ms < 1000) return ms + ' ms';
    if (ms < 120000) return (ms / 1000).toFixed(1) + ' s';
    return Math.round(ms / 60000) + ' min';
  }

  function showLogin(message) {
    if (stream) stream.abort();
    stream = null;
    $('main').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    setStatus('idle', 'not connected');
  }

  async function call(path, init) {
    const res = await fetch(api + path, Object.assign({ headers: headers() }, init || {}));
    if (res.status === 401 || res.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      showLogin(res.status === 403 ? 'That token is not an operator\\u2019s.' : 'Sign in with an operator token.');
      throw new Error('not an operator');
    }
    const body = await res.json();
    if (!res.ok) throw new Error(body.message || res.statusText);
    return body;
  }

  function filterMatches(task) {
    const filter = $('state-filter').value;
    if (filter === '') return true;
    if (filter === 'active') return task.state === 'submitted' || task.state === 'working';
    return task.state === filter;
  }

  function render() {
    renderQueued = false;
    const wbody = $('workers').tBodies[0];
    wbody.replaceChildren();
    for (const w of workers) {
      const row = wbody.insertRow();
      row.dataset.worker = w.workerId;
      cell(row, w.workerId);
      cell(row, w.host);
      cell(row, w.pid);
      cell(row, time(w.startedAt));
      cell(row, time(w.lastRenewal));
      cell(row, w.runningTurns);
      cell(row, w.queuedTurns);
    }
    const tbody = $('tasks').tBodies[0];
    tbody.replaceChildren();
    const shown = [...tasks.values()].filter(filterMatches).sort((a, b) =>
      (b.statusTimestamp || '').localeCompare(a.statusTimestamp || '') || (a.id < b.id ? 1 : -1));
    for (const t of shown.slice(0, 500)) {
      const row = tbody.insertRow();
      row.dataset.taskId = t.id;
      row.dataset.state = t.state;
      if (t.id === selected) row.className = 'selected';
      cell(row, t.id);
      cell(row, t.contextId);
      cell(row, t.state, 'state-' + t.state);
      cell(row, t.owner);
      cell(row, t.turn ? t.turn.workerId : '');
      cell(row, t.turn ? (t.turn.queuePosition === 0 ? 'running' : t.turn.queuePosition + ' ahead') : '');
      cell(row, t.statusTimestamp ? age(Date.now() - Date.parse(t.statusTimestamp)) : '');
      cell(row, t.push.map((p) => p.host + (p.failed ? ' failed' : p.behind ? ' ' + p.behind + ' behind' : ' ok')).join(', '));
      cell(row, t.statusText);
      row.addEventListener('click', () => showTask(t.id));
    }
  }

  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(render);
  }

  async function showTask(id) {
    selected = id;
    queueRender();
    const detail = await call('/tasks/' + encodeURIComponent(id));
    $('detail').hidden = false;
    $('detail-id').textContent = detail.id + ' (' + detail.state + ')';
    $('action-result').textContent = '';
    const push = $('push');
    push.replaceChildren();
    for (const p of detail.push) {
      const item = document.createElement('li');
      item.textContent = 'push ' + p.configId + ' to ' + p.host + ': ' +
        (p.failed ? 'gave up' : p.behind + ' behind') + (p.lastError ? ' (' + p.lastError + ')' : '') + ' ';
      const retry = document.createElement('button');
      retry.type = 'button';
      retry.textContent = 'Retry delivery';
      retry.addEventListener('click', () => act('retry', p.configId));
      item.appendChild(retry);
      push.appendChild(item);
    }
    const body = $('events').tBodies[0];
    body.replaceChildren();
    for (const e of detail.events) {
      const row = body.insertRow();
      cell(row, e.seq);
      cell(row, time(e.at));
      cell(row, e.kind);
      cell(row, JSON.stringify(e.event));
    }
  }

  async function act(action, configId) {
    const task = tasks.get(selected);
    if (!task) return;
    const paths = {
      cancel: '/tasks/' + encodeURIComponent(task.id) + '/cancel',
      fail: '/tasks/' + encodeURIComponent(task.id) + '/fail',
      release: '/contexts/' + encodeURIComponent(task.contextId) + '/release',
      retry: '/tasks/' + encodeURIComponent(task.id) + '/push/' + encodeURIComponent(configId || '') + '/retry',
    };
    try {
      const result = await call(paths[action], { method: 'POST' });
      $('action-result').textContent = action + ': ' + JSON.stringify(result);
      await showTask(task.id);
    } catch (error) {
      $('action-result').textContent = action + ' failed: ' + error.message;
    }
  }

  async function loadTasks() {
    const list = await call('/tasks?pageSize=100');
    for (const t of list.tasks) tasks.set(t.id, t);
    queueRender();
  }

  function handle(event, data) {
    if (event === 'hello') {
      workers = data.workers;
      setStatus('live', 'live from worker ' + data.workerId);
    } else if (event === 'snapshot' || event === 'task') {
      // Snapshots are read while live events already flow: an older version must not replace a newer one.
      const known = tasks.get(data.id);
      if (known && known.version > data.version) return;
      tasks.set(data.id, data);
      if (data.id === selected && event === 'task') showTask(data.id).catch(() => {});
    } else if (event === 'workers') {
      workers = data.workers;
    } else if (event === 'resync') {
      // Changes were missed: resuming after the last id would skip them. Start over instead.
      setStatus('idle', 'resyncing: ' + data.reason);
      lastEventId = null;
      tasks.clear();
      loadTasks().catch(() => {});
    }
    queueRender();
  }

  async function follow() {
    const controller = new AbortController();
    stream = controller;
    const extra = lastEventId ? { 'last-event-id': lastEventId } : {};
    const res = await fetch(api + '/events', { headers: headers(extra), signal: controller.signal });
    if (res.status === 401 || res.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      showLogin('Sign in again.');
      return;
    }
    if (!res.ok || !res.body) throw new Error('events: ' + res.status);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\\n\\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        let id = null;
        const data = [];
        for (const line of block.split('\\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (id !== null) lastEventId = id;
        if (data.length > 0) handle(event, JSON.parse(data.join('\\n')));
      }
    }
  }

  async function connect() {
    while (token() && stream !== null) {
      try {
        await follow();
      } catch (error) {
        if (stream && stream.signal.aborted) return;
        setStatus('error', 'disconnected: ' + error.message);
      }
      if (!token() || stream === null) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  async function start() {
    $('login').hidden = true;
    $('main').hidden = false;
    setStatus('idle', 'connecting');
    try {
      const agents = await call('/agents');
      workers = agents.workers;
      await loadTasks();
    } catch (error) {
      if (!token()) return;
      setStatus('error', error.message);
    }
    stream = new AbortController();
    connect();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('login').addEventListener('submit', (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $('token').value);
      $('token').value = '';
      start();
    });
    $('state-filter').addEventListener('change', queueRender);
    for (const button of document.querySelectorAll('#actions button')) {
      button.addEventListener('click', () => act(button.dataset.action));
    }
    setInterval(queueRender, 1000);
    if (token()) start();
    else showLogin();
  });
})();
`;
