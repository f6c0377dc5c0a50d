// The shatranj-tb explorer: a board, the value of the position and of every legal move
// (from /api/v1/probe), back/forward, the best line (/api/v1/line), a FEN field and a
// position editor. The position is kept in the URL (?fen=..., underscores for spaces).
'use strict';

const DEFAULT_FEN = '8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1'; // al-Suli's Diamond
const NAMES = { k: 'shah', q: 'ferz', b: 'alfil', n: 'faras', r: 'rukh', p: 'baidaq' };
const $ = (id) => document.getElementById(id);

const st = {
  board: new Array(64).fill(null), // index rank * 8 + file, a1 = 0; 'K', 'q', ... or null
  turn: 'w',
  half: 0,
  full: 1,
  history: [], // FENs; `at` is the one shown
  at: -1,
  lastMove: [], // the from and to squares of the move that led here
  probe: null, // the last answer of /api/v1/probe for the position shown
  selected: null,
  flipped: false,
  editing: false,
  tool: 'K',
  seq: 0, // answers to older requests are dropped
  playing: null, // timer of "play the best line"
};

// ---- FEN ---------------------------------------------------------------------------

function parseFen(text) {
  const fields = text.trim().split(/[\s_]+/);
  const rows = (fields[0] || '').split('/');
  if (rows.length !== 8) throw new Error(`bad FEN: the board needs 8 ranks, not ${rows.length}`);
  const board = new Array(64).fill(null);
  rows.forEach((row, i) => {
    const rank = 7 - i;
    let file = 0;
    for (const c of row) {
      if (/[1-8]/.test(c)) { file += Number(c); continue; }
      let p = c;
      if ('fF'.includes(c)) p = c === 'f' ? 'q' : 'Q';
      if ('aAeE'.includes(c)) p = c === c.toLowerCase() ? 'b' : 'B';
      if (!/^[kqbnrpKQBNRP]$/.test(p)) throw new Error(`bad FEN: unknown piece '${c}'`);
      if (file > 7) throw new Error(`bad FEN: rank ${rank + 1} has more than 8 squares`);
      board[rank * 8 + file] = p;
      file += 1;
    }
    if (file !== 8) throw new Error(`bad FEN: rank ${rank + 1} has ${file} squares, not 8`);
  });
  const turn = (fields[1] || 'w').toLowerCase();
  if (turn !== 'w' && turn !== 'b') throw new Error(`bad FEN: side to move '${fields[1]}'`);
  const half = Number.parseInt(fields[4] || '0', 10);
  const full = Number.parseInt(fields[5] || '1', 10);
  return { board, turn, half: Number.isFinite(half) ? half : 0, full: Number.isFinite(full) && full > 0 ? full : 1 };
}

function toFen(s) {
  const rows = [];
  for (let rank = 7; rank >= 0; rank -= 1) {
    let row = '';
    let empty = 0;
    for (let file = 0; file < 8; file += 1) {
      const p = s.board[rank * 8 + file];
      if (p) { if (empty) row += empty; empty = 0; row += p; } else empty += 1;
    }
    if (empty) row += empty;
    rows.push(row);
  }
  return `${rows.join('/')} ${s.turn} - - ${s.half} ${s.full}`;
}

const sqName = (i) => 'abcdefgh'[i % 8] + (Math.floor(i / 8) + 1);
const sqIndex = (name) => (name.charCodeAt(1) - 49) * 8 + (name.charCodeAt(0) - 97);
const isWhite = (p) => p === p.toUpperCase();

// The position after a legal move given in UCI (a pawn reaching the last rank becomes a
// ferz, the only promotion).
function afterMove(s, uci) {
  const from = sqIndex(uci.slice(0, 2));
  const to = sqIndex(uci.slice(2, 4));
  const board = s.board.slice();
  const piece = board[from];
  const zeroing = board[to] !== null || piece.toLowerCase() === 'p';
  board[to] = uci.length > 4 ? (isWhite(piece) ? 'Q' : 'q') : piece;
  board[from] = null;
  return {
    board,
    turn: s.turn === 'w' ? 'b' : 'w',
    half: zeroing ? 0 : s.half + 1,
    full: s.full + (s.turn === 'b' ? 1 : 0),
  };
}

// ---- words ---------------------------------------------------------------------------

// The result without the move rule (the page shows DTM): a cursed win is a win, a
// blessed loss a loss (the API's DTZ categories under move-rule=70).
function plain(category) {
  if (category === 'cursed-win') return 'win';
  if (category === 'blessed-loss') return 'loss';
  return category;
}

function verdict(p, turn) {
  const us = turn === 'w' ? 'White' : 'Black';
  const them = turn === 'w' ? 'Black' : 'White';
  if (plain(p.category) === 'draw') return p.end ? `Draw (${p.end})` : 'Draw';
  const d = Math.abs(p.dtm);
  if (p.end) {
    return plain(p.category) === 'win' ? `${us} has won (${p.end})` : `${them} has won (${p.end}): ${us} to move has lost`;
  }
  return `${plain(p.category) === 'win' ? us : them} wins in ${d} ${d === 1 ? 'ply' : 'plies'}`;
}

// A move's result for the side that plays it (the answer gives it for the other side).
function moveResult(m) {
  if (plain(m.category) === 'draw') return { cls: 'draw', text: 'draw' };
  const d = Math.abs(m.dtm) + 1;
  return plain(m.category) === 'loss' ? { cls: 'win', text: `win in ${d}` } : { cls: 'loss', text: `loss in ${d}` };
}

function moveNote(m) {
  if (m.checkmate) return 'mate';
  if (m.stalemate) return 'stalemate';
  if (m.variant_loss) return 'bares the shah';
  if (m.variant_win) return 'bares itself';
  return '';
}

// ---- drawing -------------------------------------------------------------------------

function pieceSvg(p) {
  const cls = isWhite(p) ? 'w' : 'b';
  const name = `${cls === 'w' ? 'white' : 'black'} ${NAMES[p.toLowerCase()]}`;
  return `<svg class="pc ${cls}" viewBox="0 0 45 45" role="img" aria-label="${name}"><use href="#p-${p.toLowerCase()}"/></svg>`;
}

function legalFrom(from) {
  if (!st.probe || st.editing) return [];
  return st.probe.moves.filter((m) => m.uci.startsWith(from));
}

function drawBoard() {
  const targets = st.selected === null ? [] : legalFrom(sqName(st.selected)).map((m) => sqIndex(m.uci.slice(2, 4)));
  const html = [];
  for (let row = 0; row < 8; row += 1) {
    for (let col = 0; col < 8; col += 1) {
      const rank = st.flipped ? row : 7 - row;
      const file = st.flipped ? 7 - col : col;
      const i = rank * 8 + file;
      const p = st.board[i];
      const cls = ['sq', (file + rank) % 2 ? 'l' : 'd'];
      if (st.lastMove.includes(i)) cls.push('last');
      if (st.selected === i) cls.push('sel');
      if (targets.includes(i)) cls.push('to');
      if (p) cls.push('occ');
      let inner = p ? pieceSvg(p) : '';
      if (row === 7) inner += `<span class="coord file">${'abcdefgh'[file]}</span>`;
      if (col === 0) inner += `<span class="coord rank">${rank + 1}</span>`;
      html.push(`<div class="${cls.join(' ')}" data-sq="${sqName(i)}">${inner}</div>`);
    }
  }
  $('board').innerHTML = html.join('');
}

function drawPanel() {
  const p = st.probe;
  const v = $('verdict');
  v.className = '';
  if (p) {
    v.textContent = verdict(p, st.turn);
    if (plain(p.category) !== 'draw') v.classList.add((plain(p.category) === 'win') === (st.turn === 'w') ? 'win' : 'loss');
    $('details').textContent = `${st.turn === 'w' ? 'White' : 'Black'} to move · ${p.material} · ${p.rules}`;
  } else {
    v.textContent = '\u00a0';
    $('details').textContent = '';
  }
  const list = $('moves');
  list.innerHTML = '';
  for (const m of p ? p.moves : []) {
    const r = moveResult(m);
    const li = document.createElement('li');
    li.className = r.cls;
    li.dataset.uci = m.uci;
    li.title = `play ${m.san}`;
    const note = moveNote(m);
    li.innerHTML = `<span class="san"></span><span class="uci"></span>${note ? '<span class="note"></span>' : ''}<span class="res"></span>`;
    li.querySelector('.san').textContent = m.san;
    li.querySelector('.uci').textContent = m.uci;
    if (note) li.querySelector('.note').textContent = note;
    li.querySelector('.res').textContent = r.text;
    list.appendChild(li);
  }
  $('back').disabled = st.at <= 0;
  $('forward').disabled = st.at >= st.history.length - 1;
  $('bestline').textContent = st.playing ? 'Stop' : 'Play the best line';
  $('bestline').disabled = !st.playing && (!p || plain(p.category) === 'draw' || p.moves.length === 0 || st.editing);
  $('edit').classList.toggle('on', st.editing);
  $('editor').hidden = !st.editing;
  $(`turn-${st.turn}`).checked = true;
  for (const b of $('palette').children) b.classList.toggle('on', b.dataset.tool === st.tool);
}

function showError(message) {
  const e = $('error');
  e.hidden = !message;
  e.textContent = message || '';
}

function render() {
  drawBoard();
  drawPanel();
}

// ---- the server ------------------------------------------------------------------------

async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  let body = null;
  try { body = await response.json(); } catch (_) { /* not JSON: reported below */ }
  if (!response.ok) throw new Error(body && body.error ? body.error : `HTTP ${response.status}`);
  if (!body) throw new Error('the server sent no JSON');
  return body;
}

async function probe() {
  const seq = ++st.seq;
  const fen = toFen(st);
  try {
    const answer = await getJson(`/api/v1/probe?fen=${encodeURIComponent(fen)}`);
    if (seq !== st.seq) return;
    st.probe = answer;
    showError('');
  } catch (e) {
    if (seq !== st.seq) return;
    st.probe = null;
    showError(e.message);
  }
  render();
}

// ---- actions -------------------------------------------------------------------------

// Shows a position: `push` adds it to the history after the one shown (dropping the
// positions that followed), else it replaces nothing and only moves within the history.
function show(s, { push = true, lastMove = [] } = {}) {
  st.board = s.board;
  st.turn = s.turn;
  st.half = s.half;
  st.full = s.full;
  st.lastMove = lastMove;
  st.selected = null;
  st.probe = null;
  const fen = toFen(st);
  if (push) {
    st.history = st.history.slice(0, st.at + 1);
    st.history.push({ fen, lastMove });
    st.at = st.history.length - 1;
  }
  $('fen').value = fen;
  const url = `${location.pathname}?fen=${fen.replace(/ /g, '_')}${st.flipped ? '&flip=1' : ''}`;
  history.replaceState(null, '', url);
  render();
  probe();
}

function loadFen(text, opts) {
  try {
    show(parseFen(text), opts);
  } catch (e) {
    showError(e.message);
  }
}

function play(uci) {
  stopLine();
  const from = sqIndex(uci.slice(0, 2));
  const to = sqIndex(uci.slice(2, 4));
  show(afterMove(st, uci), { lastMove: [from, to] });
}

function go(at) {
  if (at < 0 || at >= st.history.length) return;
  st.at = at;
  const h = st.history[at];
  show(parseFen(h.fen), { push: false, lastMove: h.lastMove });
}

function stopLine() {
  if (st.playing) clearTimeout(st.playing);
  st.playing = null;
}

async function bestLine() {
  if (st.playing) { stopLine(); render(); return; }
  const fen = toFen(st);
  let answer;
  try {
    answer = await getJson(`/api/v1/line?fen=${encodeURIComponent(fen)}`);
  } catch (e) {
    showError(e.message);
    return;
  }
  const steps = answer.mainline;
  let k = 0;
  const step = () => {
    if (k >= steps.length) { st.playing = null; render(); return; }
    const s = steps[k];
    k += 1;
    const from = sqIndex(s.uci.slice(0, 2));
    const to = sqIndex(s.uci.slice(2, 4));
    st.playing = setTimeout(step, 450);
    show(parseFen(s.fen), { lastMove: [from, to] });
  };
  step();
}

function clickSquare(name) {
  const i = sqIndex(name);
  if (st.editing) {
    const p = st.board[i];
    const board = st.board.slice();
    board[i] = st.tool === 'x' || p === st.tool ? null : st.tool;
    show({ board, turn: st.turn, half: 0, full: 1 });
    return;
  }
  if (st.selected !== null) {
    const m = legalFrom(sqName(st.selected)).find((mv) => mv.uci.slice(2, 4) === name);
    if (m) { play(m.uci); return; }
  }
  st.selected = legalFrom(name).length ? i : null;
  drawBoard();
}

function setUp() {
  const palette = $('palette');
  for (const t of ['K', 'Q', 'B', 'N', 'R', 'P', 'x', 'k', 'q', 'b', 'n', 'r', 'p']) {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.tool = t;
    if (t === 'x') {
      b.className = 'erase';
      b.textContent = '\u2715';
      b.title = 'remove pieces';
    } else {
      b.innerHTML = pieceSvg(t);
      b.title = `${isWhite(t) ? 'white' : 'black'} ${NAMES[t.toLowerCase()]}`;
    }
    palette.appendChild(b);
  }
  // the eraser sits in the middle of the first row; an empty cell ends it
  palette.insertBefore(document.createElement('span'), palette.children[7]);

  $('board').addEventListener('click', (e) => {
    const sq = e.target.closest('.sq');
    if (sq) clickSquare(sq.dataset.sq);
  });
  $('moves').addEventListener('click', (e) => {
    const li = e.target.closest('li');
    if (li && !st.editing) play(li.dataset.uci);
  });
  palette.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (b) { st.tool = b.dataset.tool; drawPanel(); }
  });
  $('back').addEventListener('click', () => { stopLine(); go(st.at - 1); });
  $('forward').addEventListener('click', () => { stopLine(); go(st.at + 1); });
  $('bestline').addEventListener('click', bestLine);
  $('flip').addEventListener('click', () => {
    st.flipped = !st.flipped;
    show(parseFen(toFen(st)), { push: false, lastMove: st.lastMove });
  });
  $('edit').addEventListener('click', () => { stopLine(); st.editing = !st.editing; st.selected = null; render(); });
  $('done').addEventListener('click', () => { st.editing = false; render(); });
  $('clear').addEventListener('click', () => show({ board: new Array(64).fill(null), turn: st.turn, half: 0, full: 1 }));
  for (const t of ['w', 'b']) {
    $(`turn-${t}`).addEventListener('change', () => show({ board: st.board.slice(), turn: t, half: 0, full: 1 }));
  }
  $('fenform').addEventListener('submit', (e) => {
    e.preventDefault();
    stopLine();
    loadFen($('fen').value);
  });
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT') return;
    if (e.key === 'ArrowLeft') { stopLine(); go(st.at - 1); }
    if (e.key === 'ArrowRight') { stopLine(); go(st.at + 1); }
  });

  const params = new URLSearchParams(location.search);
  st.flipped = params.get('flip') === '1';
  const fen = (params.get('fen') || DEFAULT_FEN).replace(/_/g, ' ');
  try {
    show(parseFen(fen));
  } catch (e) {
    show(parseFen(DEFAULT_FEN));
    showError(`${e.message} (FEN '${fen}'); showing al-Suli's Diamond instead`);
  }
}

setUp();
