// fake-pve's dashboard. It logs in through the API (the ticket in the
// PVEAuthCookie cookie, the CSRF token for writes, as PVE's UI keeps
// them), listens to the server-sent events of /_fake/events (the world
// is pushed; nothing is polled) and drives the control API (/_fake).
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const meta = (name) => {
    const m = document.querySelector(`meta[name="${name}"]`);
    return m ? m.content : '';
  };

  const S = {
    user: meta('fake-pve-user'),
    csrf: meta('fake-pve-csrf'),
    view: null,
    received: 0,
    events: null,
    selected: null,
    selectedLines: -1,
    selectedStatus: '',
    requests: [],
    renew: null,
  };

  // ---- helpers ----------------------------------------------------------

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // Replaces the rows of a table body, keeping the keyboard focus on the
  // control with the same data-key.
  function fill(tbody, rows, empty, cols) {
    const active = document.activeElement;
    const key = active && tbody.contains(active) ? active.dataset.key : null;
    tbody.replaceChildren(...(rows.length ? rows
      : [el('tr', {}, el('td', { class: 'empty', colspan: cols, text: empty }))]));
    if (key) {
      const again = tbody.querySelector(`[data-key="${CSS.escape(key)}"]`);
      if (again) again.focus();
    }
  }

  function bytes(n) {
    if (typeof n !== 'number' || !isFinite(n)) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return `${n >= 100 || i === 0 ? n.toFixed(0) : n.toFixed(1)} ${units[i]}`;
  }

  function duration(secs) {
    secs = Math.max(0, Math.floor(secs));
    const d = Math.floor(secs / 86400), h = Math.floor(secs / 3600) % 24;
    const m = Math.floor(secs / 60) % 60, s = secs % 60;
    if (d) return `${d}d ${h}h`;
    if (h) return `${h}h ${m}m`;
    if (m) return `${m}m ${s}s`;
    return `${s}s`;
  }

  const pad = (n, w = 2) => String(n).padStart(w, '0');
  function stamp(ms, withDate) {
    const d = new Date(ms);
    const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    return withDate ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t}` : t;
  }

  // The emulated clock now: the last pushed time moved on at its scale.
  function emulatedMs() {
    const v = S.view;
    if (!v) return Date.now();
    if (v.clock.manual) return v.clock.now_ms;
    return v.clock.now_ms + (Date.now() - S.received) * v.clock.scale;
  }

  function meter(value, max, label) {
    const ratio = max > 0 ? value / max : 0;
    return el('div', { class: 'bar' },
      el('meter', { min: 0, max: 1, low: 0.7, high: 0.9, optimum: 0, value: ratio.toFixed(3), 'aria-label': label }),
      el('span', { text: `${(ratio * 100).toFixed(0)} %` }));
  }

  function notice(text, bad) {
    const n = $('control-status');
    n.textContent = text;
    n.classList.toggle('bad', !!bad);
  }

  // ---- the API ----------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  async function call(method, path, body, type) {
    const headers = { 'X-Fake-Pve-Dashboard': '1' };
    if (method !== 'GET' && S.csrf) headers.CSRFPreventionToken = S.csrf;
    let payload;
    if (body !== undefined) {
      if (type === 'json') {
        headers['Content-Type'] = 'application/json';
        payload = JSON.stringify(body);
      } else {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        payload = new URLSearchParams(body).toString();
      }
    }
    const r = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
    let json = null;
    try { json = await r.json(); } catch (_) { /* status line only */ }
    if (!r.ok) {
      let msg = (json && json.message) || r.statusText || `HTTP ${r.status}`;
      if (json && json.errors) {
        msg += ' ' + Object.entries(json.errors).map(([k, v]) => `${k}: ${v}`).join('; ');
      }
      throw new ApiError(r.status, msg.trim());
    }
    return json ? json.data : null;
  }

  async function control(what, method, path, body, type) {
    try {
      const r = await call(method, path, body, type);
      notice(`${what}: done`);
      return r;
    } catch (e) {
      notice(`${what}: ${e.message}`, true);
      if (e.status === 401) loggedOut();
      throw e;
    }
  }

  // ---- logging in -------------------------------------------------------

  function setCookie(ticket) {
    const secure = location.protocol === 'https:' ? '; Secure' : '';
    document.cookie = `PVEAuthCookie=${encodeURIComponent(ticket)}; path=/; SameSite=Strict${secure}`;
  }

  function ticketFromCookie() {
    const c = document.cookie.split(';').map((s) => s.trim())
      .find((s) => s.startsWith('PVEAuthCookie='));
    return c ? decodeURIComponent(c.slice('PVEAuthCookie='.length)) : '';
  }

  async function realms() {
    try {
      const list = await call('GET', '/api2/json/access/domains');
      const sel = $('realm');
      const current = sel.value;
      sel.replaceChildren(...list.map((d) => el('option', { value: d.realm, text: d.comment || d.realm })));
      sel.value = list.some((d) => d.realm === current) ? current : (list.find((d) => d.default) || list[0]).realm;
    } catch (_) { /* keep pam and pve */ }
  }

  async function login(ev) {
    ev.preventDefault();
    const err = $('login-error');
    err.textContent = '';
    const username = $('username').value.trim();
    const password = $('password').value;
    if (!username || !password) {
      err.textContent = 'Enter a user name and a password.';
      return;
    }
    try {
      const d = await call('POST', '/api2/json/access/ticket',
        { username, password, realm: $('realm').value });
      setCookie(d.ticket);
      S.csrf = d.CSRFPreventionToken;
      S.user = d.username;
      $('password').value = '';
      await open();
    } catch (e) {
      err.textContent = e.status === 401 ? 'Login failed. Please try again.' : `Login failed: ${e.message}`;
    }
  }

  // As PVE's UI does: a fresh ticket every 15 minutes, from the current one.
  async function renew() {
    const ticket = ticketFromCookie();
    if (!ticket || !S.user) return;
    try {
      const d = await call('POST', '/api2/json/access/ticket', { username: S.user, password: ticket });
      setCookie(d.ticket);
      S.csrf = d.CSRFPreventionToken;
    } catch (e) {
      if (e.status === 401) loggedOut();
    }
  }

  function loggedOut() {
    if (S.events) { S.events.close(); S.events = null; }
    clearInterval(S.renew);
    S.csrf = '';
    S.view = null;
    $('dashboard').hidden = true;
    $('sections').hidden = true;
    $('logout').hidden = true;
    $('denied').hidden = true;
    $('whoami').textContent = '';
    $('login').hidden = false;
    live('off', 'Not connected');
    realms();
    $('username').focus();
  }

  function logout() {
    document.cookie = 'PVEAuthCookie=; path=/; Max-Age=0';
    S.user = '';
    loggedOut();
  }

  // Logged in: the control API must let us in (root@pam only), then the
  // event stream starts.
  async function open() {
    try {
      await call('GET', '/_fake/health');
    } catch (e) {
      if (e.status === 401) { loggedOut(); return; }
      $('login').hidden = true;
      const d = $('denied');
      d.textContent = `${S.user} may not use the dashboard: ${e.message}. It shows the whole world and fake-pve's controls, which are root@pam's.`;
      d.hidden = false;
      $('logout').hidden = false;
      return;
    }
    $('login').hidden = true;
    $('denied').hidden = true;
    $('dashboard').hidden = false;
    $('sections').hidden = false;
    $('logout').hidden = false;
    $('whoami').textContent = S.user;
    clearInterval(S.renew);
    S.renew = setInterval(renew, 15 * 60 * 1000);
    connect();
  }

  // ---- the event stream -------------------------------------------------

  function live(kind, text) {
    const l = $('live');
    l.className = `live ${kind}`;
    l.textContent = text;
  }

  function connect() {
    if (S.events) S.events.close();
    live('wait', 'Connecting…');
    const es = new EventSource('/_fake/events');
    S.events = es;
    es.addEventListener('open', () => live('on', 'Live'));
    es.addEventListener('view', (e) => {
      live('on', 'Live');
      S.view = JSON.parse(e.data);
      S.received = Date.now();
      render();
    });
    es.addEventListener('requests', (e) => {
      S.requests = S.requests.concat(JSON.parse(e.data)).slice(-200);
      renderRequests();
    });
    es.addEventListener('error', async () => {
      if (es.readyState !== EventSource.CLOSED) {
        live('wait', 'Reconnecting…');
        return;
      }
      // Refused (an expired ticket) or the server went away.
      live('off', 'Disconnected');
      try {
        await call('GET', '/_fake/health');
        setTimeout(() => { if (S.events === es) connect(); }, 2000);
      } catch (err) {
        if (err.status === 401) loggedOut();
        else setTimeout(() => { if (S.events === es) connect(); }, 2000);
      }
    });
  }

  // ---- rendering --------------------------------------------------------

  function render() {
    const v = S.view;
    $('pve-version').textContent = `emulating PVE ${v.pve.version}`;
    const online = v.nodes.filter((n) => n.status === 'online').length;
    $('cluster-summary').textContent =
      `${online} of ${v.nodes.length} nodes online, ${v.guests_total} guests, ${v.storages.length} storages`;
    renderNodes(v);
    renderGuests(v);
    renderStorages(v);
    renderNetwork(v);
    renderTasks(v);
    renderClock(v);
    renderFaults(v);
    renderCheckpoints(v);
    renderAgentChoices(v);
    followLog(v);
  }

  function renderNodes(v) {
    fill($('nodes'), v.nodes.map((n) => el('tr', {},
      el('th', { scope: 'row', text: n.node }),
      el('td', {}, el('span', { class: `status ${n.status}`, text: n.status })),
      el('td', {}, n.status === 'online'
        ? meter(n.cpu || 0, 1, `CPU of ${n.node}`) : '–', el('span', { class: 'muted', text: ` ${n.maxcpu} CPUs` })),
      el('td', {}, n.status === 'online'
        ? meter(n.mem || 0, n.maxmem, `Memory of ${n.node}`) : '–',
        el('span', { class: 'muted', text: ` ${bytes(n.mem)} of ${bytes(n.maxmem)}` })),
      el('td', { class: 'num', text: n.guests }),
      el('td', { text: n.uptime ? duration(n.uptime) : '–' }),
      el('td', {}, n.status === 'online'
        ? el('button', { type: 'button', class: 'open-console', 'data-console': n.node, text: 'Shell' })
        : ''))), 'No nodes', 7);
  }

  function renderGuests(v) {
    const shown = v.guests.length;
    $('guests-count').textContent = shown < v.guests_total
      ? `(${shown} of ${v.guests_total} shown)` : `(${v.guests_total})`;
    fill($('guests'), v.guests.map((g) => {
      const tags = (g.tags || '').split(/[;, ]+/).filter(Boolean);
      const pending = g.pending || [];
      return el('tr', { 'data-vmid': g.vmid },
        el('td', { class: 'num', text: g.vmid }),
        el('th', { scope: 'row', text: g.name || '' }),
        el('td', { text: g.template ? `${g.type} template` : g.type }),
        el('td', { text: g.node }),
        el('td', {}, el('span', { class: `status ${g.status}`, text: g.status })),
        el('td', {}, tags.map((t) => el('span', { class: 'tag', text: t }))),
        el('td', { text: g.lock || '' }),
        el('td', { class: 'pending', text: pending.join(', ') }),
        el('td', { class: 'ips', text: (g.ips || []).join(', ') }),
        el('td', {}, g.status === 'running' && !g.template
          ? el('button', { type: 'button', class: 'open-console', 'data-console': `${g.node}/${g.type}/${g.vmid}`, text: 'Console' })
          : ''));
    }), 'No guests', 10);
  }

  function renderStorages(v) {
    fill($('storages'), v.storages.map((s) => el('tr', {},
      el('th', { scope: 'row' }, s.storage, el('span', { class: 'muted', text: ` ${s.plugintype}${s.shared ? ', shared' : ''}` })),
      el('td', { text: s.node }),
      el('td', {}, s.maxdisk ? meter(s.disk || 0, s.maxdisk, `Usage of ${s.storage} on ${s.node}`) : '–',
        el('span', { class: 'muted', text: s.maxdisk ? ` ${bytes(s.disk)} of ${bytes(s.maxdisk)}` : '' })),
      el('td', { text: (s.content || '').split(',').join(', ') }))), 'No storages', 4);
  }

  function renderNetwork(v) {
    $('network').replaceChildren(...v.network.map((n) => el('div', { class: 'net' },
      el('h4', { text: n.node }),
      el('ul', {}, n.interfaces.filter((i) => i.type !== 'eth' || i.active).map((i) => el('li', {},
        `${i.iface} (${i.type}${i.active ? '' : ', down'})`,
        i.cidr ? el('span', { class: 'muted', text: ` ${i.cidr}` }) : ''))),
      n.changes
        ? [el('p', { class: 'pending', text: 'Pending changes (apply with PUT /nodes/' + n.node + '/network):' }),
          el('pre', { tabindex: 0, 'aria-label': `Pending network changes of ${n.node}`, text: n.changes })]
        : el('p', { class: 'muted', text: 'No pending changes.' }))));
  }

  function taskStatus(t) {
    if (t.status === 'RUNNING') {
      return el('span', { class: 'task-running', 'data-start': t.starttime, text: `running ${duration(emulatedMs() / 1000 - t.starttime)}` });
    }
    if (t.failed) return el('span', { class: 'task-failed', text: `failed: ${t.status}` });
    if (String(t.status).startsWith('WARNINGS')) return el('span', { class: 'task-warn', text: t.status });
    return el('span', { class: 'task-ok', text: t.status });
  }

  function renderTasks(v) {
    $('tasks-count').textContent = `(${v.tasks_running} running, ${v.tasks_total} in all)`;
    fill($('tasks'), v.tasks.map((t) => el('tr', {
      'data-upid': t.upid,
      'data-status': t.status,
      class: [t.failed ? 'failed' : '', S.selected && S.selected.upid === t.upid ? 'selected' : ''].join(' ').trim() || null,
    },
    el('td', { text: stamp(t.starttime * 1000, false) }),
    el('td', { text: t.node }),
    el('td', {}, el('button', {
      type: 'button', class: 'link', 'data-key': t.upid,
      'aria-pressed': S.selected && S.selected.upid === t.upid ? 'true' : 'false',
      onclick: () => select(t),
      text: `${t.type}${t.id ? ' ' + t.id : ''}`,
    })),
    el('td', { text: t.user }),
    el('td', { class: 'status' }, taskStatus(t)))), 'No tasks yet', 5);
  }

  function tick() {
    if (!S.view) return;
    const now = emulatedMs();
    for (const s of document.querySelectorAll('#tasks .task-running')) {
      s.textContent = `running ${duration(now / 1000 - Number(s.dataset.start))}`;
    }
    $('clock-now').textContent = stamp(now, true);
    $('clock-top').textContent = `Emulated time ${stamp(now, true)}`;
  }

  function renderClock(v) {
    $('clock-kind').textContent = v.clock.manual ? 'manual (moves only when advanced)' : `running at ×${v.clock.scale}`;
    $('clock-advanced').textContent = duration(v.clock.advanced_ms / 1000);
    $('latency-name').textContent = `${v.latency.name} (time scale ${v.latency.time_scale})`;
    const scale = $('time-scale');
    if (document.activeElement !== scale) scale.value = v.latency.time_scale;
    tick();
  }

  function describeRule(r) {
    const m = [r.method || 'any', r.path || '/**'];
    if (r.user) m.push(`by ${r.user}`);
    if (r.task_type) m.push(`task ${r.task_type}`);
    const does = [];
    if (r.status) does.push(`${r.status}${r.message ? ' ' + r.message : ''}`);
    if (r.drop) does.push('drop');
    if (r.delay_ms) does.push(`delay ${r.delay_ms} ms`);
    if (r.task_error) does.push(`task fails: ${r.task_error}`);
    if (r.probability !== null && r.probability !== undefined) does.push(`p=${r.probability}`);
    if (r.count) does.push(`${r.count}×`);
    return [m.join(' '), does.join(', ') || '–'];
  }

  function renderFaults(v) {
    fill($('faults'), v.faults.map((r) => {
      const [matches, does] = describeRule(r);
      return el('tr', { 'data-fault': r.id },
        el('td', { class: 'num', text: r.id }),
        el('td', { text: matches }),
        el('td', { text: does }),
        el('td', { class: 'num', text: r.hits }),
        el('td', {}, el('button', {
          type: 'button', class: 'small', 'data-key': `fault-${r.id}`,
          'aria-label': `Remove rule ${r.id}`, text: 'Remove',
          onclick: () => control(`Remove rule ${r.id}`, 'DELETE', `/_fake/faults/${r.id}`),
        })));
    }), 'No fault rules', 5);
  }

  function renderCheckpoints(v) {
    fill($('checkpoints'), v.checkpoints.map((c) => el('tr', {},
      el('th', { scope: 'row', text: c.name }),
      el('td', { text: stamp(c.time * 1000, true) }),
      el('td', { class: 'num', text: c.vms }),
      el('td', {},
        el('button', {
          type: 'button', class: 'small', 'data-key': `restore-${c.name}`,
          'aria-label': `Restore checkpoint ${c.name}`, text: 'Restore',
          onclick: () => control(`Restore ${c.name}`, 'POST', `/_fake/checkpoints/${encodeURIComponent(c.name)}/restore`),
        }), ' ',
        el('button', {
          type: 'button', class: 'small', 'data-key': `drop-${c.name}`,
          'aria-label': `Delete checkpoint ${c.name}`, text: 'Delete',
          onclick: () => control(`Delete ${c.name}`, 'DELETE', `/_fake/checkpoints/${encodeURIComponent(c.name)}`),
        })))), 'No checkpoints', 4);
  }

  function renderAgentChoices(v) {
    const sel = $('agent-vmid');
    const current = sel.value;
    const vms = v.guests.filter((g) => g.type === 'qemu');
    const want = vms.map((g) => String(g.vmid)).join(',');
    if (sel.dataset.list === want) return;
    sel.dataset.list = want;
    sel.replaceChildren(...vms.map((g) => el('option', { value: g.vmid, text: `${g.vmid} ${g.name || ''}` })));
    if (vms.some((g) => String(g.vmid) === current)) sel.value = current;
  }

  // ---- the task log -----------------------------------------------------

  function select(t) {
    S.selected = { upid: t.upid, node: t.node };
    S.selectedLines = -1;
    S.selectedStatus = '';
    for (const row of document.querySelectorAll('#tasks tr')) {
      const on = row.dataset.upid === t.upid;
      row.classList.toggle('selected', on);
      const b = row.querySelector('button');
      if (b) b.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    $('log-task').textContent = `${t.type} ${t.id || ''} on ${t.node} (${t.upid})`;
    followLog(S.view);
  }

  // Reads the selected task's log again when it has grown or ended.
  async function followLog(v) {
    if (!S.selected || !v) return;
    const t = v.tasks.find((x) => x.upid === S.selected.upid);
    if (t && t.lines === S.selectedLines && t.status === S.selectedStatus) return;
    if (t) { S.selectedLines = t.lines; S.selectedStatus = t.status; }
    const upid = S.selected.upid;
    try {
      const lines = await call('GET',
        `/api2/json/nodes/${encodeURIComponent(S.selected.node)}/tasks/${encodeURIComponent(upid)}/log?start=0&limit=5000`);
      if (!S.selected || S.selected.upid !== upid) return;
      const pre = $('log');
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.replaceChildren(...lines.map((l) => el('span', {
        class: /^TASK ERROR/.test(l.t) ? 'err' : (l.t === 'TASK OK' ? 'okline' : null),
        text: `${l.t}\n`,
      })));
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    } catch (e) {
      $('log').textContent = `The log cannot be read: ${e.message}`;
    }
  }

  // ---- the request log --------------------------------------------------

  function renderRequests() {
    const own = $('own-requests').checked;
    const list = S.requests.filter((r) => own || !r.dashboard).slice(-100).reverse();
    fill($('requests'), list.map((r) => el('tr', { class: r.status >= 400 || r.status === 0 ? 'failed' : null },
      el('td', { text: stamp(r.time_ms, false) }),
      el('td', {}, el('code', { text: `${r.method} ${r.path}` })),
      el('td', { class: `num ${r.status >= 400 || r.status === 0 ? 'task-failed' : ''}`, text: r.status || 'dropped' }),
      el('td', { class: 'num', text: r.ms.toFixed(1) }))), 'No requests yet', 4);
  }

  // ---- consoles ---------------------------------------------------------
  // A guest's console or a node's shell, as PVE's xterm.js opens it: the
  // `termproxy` call, then its `vncwebsocket` (the `binary` subprotocol),
  // the line `USER:TICKET`, `OK`, and `0:LEN:DATA` for each key. What
  // the terminal prints is shown as text.

  const T = { ws: null, lines: [''], x: 0, y: 0, esc: '' };
  const ROWS = 30;

  function termWrite(text) {
    for (const ch of text) {
      if (T.esc) {
        T.esc += ch;
        if (T.esc === '\x1b[2J') { T.lines = ['']; T.x = 0; T.y = 0; }
        if (T.esc.length > 1 && (T.esc === '\x1b[' ? false : /[@-~]/.test(ch))) T.esc = '';
        continue;
      }
      if (ch === '\x1b') { T.esc = ch; continue; }
      if (ch === '\r') { T.x = 0; continue; }
      if (ch === '\n') {
        T.y += 1;
        if (T.y >= T.lines.length) T.lines.push('');
        continue;
      }
      if (ch === '\b') { T.x = Math.max(0, T.x - 1); continue; }
      if (ch < ' ') continue;
      const line = T.lines[T.y].padEnd(T.x, ' ');
      T.lines[T.y] = line.slice(0, T.x) + ch + line.slice(T.x + 1);
      T.x += 1;
    }
    if (T.lines.length > 500) {
      const drop = T.lines.length - 500;
      T.lines.splice(0, drop);
      T.y -= drop;
    }
    const screen = $('console-screen');
    screen.textContent = T.lines.join('\n');
    screen.scrollTop = screen.scrollHeight;
  }

  function termSend(data) {
    if (!T.ws || T.ws.readyState !== WebSocket.OPEN) return;
    const bytes = new TextEncoder().encode(data);
    T.ws.send(`0:${bytes.length}:${data}`);
  }

  function termKey(ev) {
    const keys = {
      Enter: '\r', Backspace: '\x7f', Tab: '\t', Escape: '\x1b', Delete: '\x1b[3~',
      ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C', ArrowLeft: '\x1b[D',
    };
    let data = keys[ev.key];
    if (!data && ev.key.length === 1) {
      data = ev.ctrlKey && /[a-z]/i.test(ev.key)
        ? String.fromCharCode(ev.key.toUpperCase().charCodeAt(0) - 64) : ev.key;
    }
    if (!data) return;
    ev.preventDefault();
    termSend(data);
  }

  function closeConsole() {
    if (T.ws) { const ws = T.ws; T.ws = null; ws.close(); }
    $('console').hidden = true;
  }

  // `what` is `node` or `node/type/vmid`.
  async function openConsole(what) {
    closeConsole();
    const [node, type, vmid] = what.split('/');
    const base = type ? `/api2/json/nodes/${node}/${type}/${vmid}` : `/api2/json/nodes/${node}`;
    $('console-title').textContent = type ? `Console of ${type === 'qemu' ? 'VM' : 'CT'} ${vmid} on ${node}` : `Shell on ${node}`;
    T.lines = ['']; T.x = 0; T.y = 0; T.esc = '';
    $('console-screen').textContent = '';
    $('console-state').textContent = 'Connecting…';
    $('console').hidden = false;
    let d;
    try {
      d = await call('POST', `${base}/termproxy`, {});
    } catch (e) {
      $('console-state').textContent = `Refused: ${e.message}`;
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const url = `${scheme}://${location.host}${base}/vncwebsocket?port=${d.port}&vncticket=${encodeURIComponent(d.ticket)}`;
    const ws = new WebSocket(url, 'binary');
    ws.binaryType = 'arraybuffer';
    T.ws = ws;
    let authed = false;
    const decoder = new TextDecoder();
    ws.addEventListener('open', () => ws.send(`${S.user}:${d.ticket}\n`));
    ws.addEventListener('message', (ev) => {
      if (T.ws !== ws) return;
      let text = typeof ev.data === 'string' ? ev.data : decoder.decode(ev.data, { stream: true });
      if (!authed) {
        if (!text.startsWith('OK')) { $('console-state').textContent = 'Refused'; ws.close(); return; }
        authed = true;
        text = text.slice(2);
        $('console-state').textContent = 'Connected';
        ws.send(`1:80:${ROWS}:`);
        $('console-screen').focus();
      }
      termWrite(text);
    });
    ws.addEventListener('close', () => {
      if (T.ws !== ws) return;
      T.ws = null;
      $('console-state').textContent = 'Disconnected';
    });
  }

  // ---- controls ---------------------------------------------------------

  function bind() {
    $('login-form').addEventListener('submit', login);
    document.addEventListener('click', (ev) => {
      const b = ev.target.closest('button.open-console');
      if (b) openConsole(b.dataset.console);
    });
    $('console-close').addEventListener('click', closeConsole);
    $('console-screen').addEventListener('keydown', termKey);
    $('logout').addEventListener('click', logout);
    $('own-requests').addEventListener('change', renderRequests);

    $('advance-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      control('Advance the clock', 'POST', '/_fake/clock', { advance: $('advance').value });
    });
    $('scale-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const scale = Number($('time-scale').value);
      try {
        const profile = await call('GET', '/_fake/latency');
        profile.time_scale = scale;
        await control('Time scale', 'PUT', '/_fake/latency', profile, 'json');
      } catch (e) { notice(`Time scale: ${e.message}`, true); }
    });
    $('latency-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const body = { profile: $('latency-profile').value };
      if (S.view) body.time_scale = S.view.latency.time_scale;
      control('Latency profile', 'PUT', '/_fake/latency', body, 'json');
    });

    $('fault-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const rule = {};
      const text = (id, key) => { const x = $(id).value.trim(); if (x) rule[key] = x; };
      const num = (id, key) => { const x = $(id).value.trim(); if (x) rule[key] = Number(x); };
      text('fault-method', 'method');
      text('fault-path', 'path');
      text('fault-user', 'user');
      num('fault-status', 'status');
      text('fault-message', 'message');
      num('fault-delay', 'delay_ms');
      num('fault-probability', 'probability');
      num('fault-count', 'count');
      text('fault-task-type', 'task_type');
      text('fault-task-error', 'task_error');
      if ($('fault-drop').checked) rule.drop = true;
      try {
        const ids = await control('Add a fault rule', 'POST', '/_fake/faults', rule, 'json');
        notice(`Fault rule ${ids.join(', ')} added`);
        $('fault-form').reset();
      } catch (_) { /* shown */ }
    });

    $('checkpoint-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const name = $('checkpoint-name').value.trim();
      control(`Save ${name}`, 'POST', '/_fake/checkpoints', { name })
        .then(() => { $('checkpoint-name').value = ''; }, () => {});
    });
    $('reset').addEventListener('click', () => {
      if (confirm('Reset the world to the seed scenario? Guests, users, tokens and tasks go back to how they were at the start.')) {
        control('Reset', 'POST', '/_fake/reset');
      }
    });

    $('agent-load').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const vmid = $('agent-vmid').value;
      if (!vmid) return;
      try {
        const g = await control(`Guest agent of ${vmid}`, 'GET', `/_fake/guests/${vmid}`);
        $('agent-json').value = JSON.stringify(g, null, 2);
        $('agent-json').dataset.vmid = vmid;
      } catch (_) { /* shown */ }
    });
    $('agent-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const vmid = $('agent-json').dataset.vmid;
      if (!vmid) { notice('Load a VM\'s agent state first', true); return; }
      let body;
      try { body = JSON.parse($('agent-json').value); } catch (e) {
        notice(`Guest agent: not JSON: ${e.message}`, true);
        return;
      }
      try {
        const g = await control(`Guest agent of ${vmid}`, 'PUT', `/_fake/guests/${vmid}`, body, 'json');
        $('agent-json').value = JSON.stringify(g, null, 2);
      } catch (_) { /* shown */ }
    });
  }

  function start() {
    bind();
    setInterval(tick, 1000);
    if (S.csrf && S.user) {
      open();
    } else {
      loggedOut();
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
}());
