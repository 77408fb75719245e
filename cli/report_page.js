// vqsim report: draws the page from the JSON embedded in it (<script id="vqsim-data">): tables
// and Vega-Lite charts (vega-embed). Every number shown is read from that JSON through a JSON
// pointer, which the element carries (data-path) and every chart row carries per field (_src):
// once the charts are drawn, check() compares each shown number and each plotted value with the
// JSON, logs a console error on any mismatch, and leaves the result in <pre id="vqsim-check">
// for tests (tests/test_report_browser.py reads it from the DOM).
(function () {
  'use strict';

  var doc = JSON.parse(document.getElementById('vqsim-data').textContent);
  var root = document.getElementById('report');
  var views = [];  // promises of {view, datasets: [names]}

  // ---------------------------------------------------------------- JSON pointers and numbers

  function token(t) { return String(t).replace(/~/g, '~0').replace(/\//g, '~1'); }
  function ptr() {
    var s = '';
    for (var i = 0; i < arguments.length; i++) s += '/' + token(arguments[i]);
    return s;
  }
  function get(p) {
    var v = doc;
    var parts = p.split('/').slice(1);
    for (var i = 0; i < parts.length; i++) {
      if (v === null || v === undefined) return undefined;
      v = v[parts[i].replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return v;
  }
  function finite(v) { return typeof v === 'number' && isFinite(v); }

  // The precision a reader needs: whole numbers from 1000 up, 4 significant digits below.
  function fmtNumber(v) {
    if (!finite(v)) return '–';
    var a = Math.abs(v);
    if (a >= 1000 || Number.isInteger(v)) return Math.round(v).toLocaleString('en-US');
    // 4 significant digits, less the zeros that end a fraction (8.150 -> 8.15).
    var s = a >= 100 ? v.toFixed(1) : a >= 10 ? v.toFixed(2) : a >= 1 ? v.toFixed(3) : v.toPrecision(3);
    if (s.indexOf('e') < 0 && s.indexOf('.') >= 0) s = s.replace(/0+$/, '').replace(/\.$/, '');
    return s;
  }
  function fmtPercent(v, signed) {
    if (!finite(v)) return '–';
    var s = Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
    return (signed && v > 0 ? '+' : '') + s + '%';
  }
  // Transforms a shown number may apply to its JSON value (the checks apply the same).
  var transforms = {
    // A log-normal sd as the 95% factor "x/ f": exp(1.96 sd).
    factor95: function (v) { return Math.exp(1.96 * v); }
  };

  // A number from the JSON as an element: <span data-path=... [data-scale] [data-fn]>text</span>.
  function num(p, opt) {
    opt = opt || {};
    var v = get(p);
    var shown = v;
    if (finite(v) && opt.fn) shown = transforms[opt.fn](v);
    if (finite(shown) && opt.scale) shown *= opt.scale;
    var el = document.createElement('span');
    el.setAttribute('data-path', p);
    if (opt.scale) el.setAttribute('data-scale', String(opt.scale));
    if (opt.fn) el.setAttribute('data-fn', opt.fn);
    el.textContent = opt.percent ? fmtPercent(shown, opt.signed) : (opt.signed && finite(shown) && shown > 0 ? '+' : '') + fmtNumber(shown);
    return el;
  }
  function pct(p, signed) { return num(p, { scale: 100, percent: true, signed: signed }); }

  // ---------------------------------------------------------------- elements

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs)
      for (var k in attrs) {
        if (k === 'text') e.textContent = attrs[k];
        else if (k === 'cls') e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(parent, child) {
    if (child === null || child === undefined || child === false) return parent;
    if (Array.isArray(child)) child.forEach(function (c) { add(parent, c); });
    else parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    return parent;
  }
  function section(title) {
    add(root, el('h2', { text: title }));
  }
  function para(cls) {
    var p = el('p', cls ? { cls: cls } : null);
    for (var i = 1; i < arguments.length; i++) add(p, arguments[i]);
    add(root, p);
    return p;
  }
  function box(kind) {
    var d = el('div', { cls: 'box ' + (kind || '') });
    for (var i = 1; i < arguments.length; i++) add(d, arguments[i]);
    add(root, d);
    return d;
  }
  function tag(text, kind) { return el('span', { cls: 'tag ' + kind, text: text }); }
  // A table: `columns` = [{title, numeric}], `rows` = arrays of cells (text or nodes); rowClass(i).
  function table(columns, rows, rowClass) {
    var t = el('table');
    var tr = el('tr');
    columns.forEach(function (c) { add(tr, el('th', { text: c.title })); });
    add(t, el('thead', null, tr));
    var body = el('tbody');
    rows.forEach(function (r, i) {
      var row = el('tr', rowClass && rowClass(i) ? { cls: rowClass(i) } : null);
      r.forEach(function (cell, j) { add(row, el('td', columns[j].numeric ? { cls: 'n' } : null, cell)); });
      add(body, row);
    });
    add(t, body);
    return t;
  }
  function interval(p1, p2) { return [num(p1), ' – ', num(p2)]; }
  function verdictTag(v) {
    var kind = v === 'better' || v === 'satisfied' ? 'ok' : v === 'worse' || v === 'violated' ? 'fail'
      : /^borderline/.test(v) ? 'borderline' : 'neutral';
    return tag(v, kind);
  }
  function details(summary, content, open) {
    var d = el('details', open ? { open: '' } : null, el('summary', { text: summary }), content);
    add(root, d);
    return d;
  }

  // ---------------------------------------------------------------- charts

  var chartCount = 0;
  // rows: objects whose fields named in row._src hold the JSON values at those pointers.
  function chart(spec, datasets, parent) {
    var div = el('div', { cls: 'chart', id: 'chart' + chartCount++ });
    add(parent || root, div);
    spec.$schema = 'https://vega.github.io/schema/vega-lite/v6.json';
    spec.datasets = datasets;
    spec.config = Object.assign({
      font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
      axis: { labelFontSize: 11, titleFontSize: 12, labelLimit: 260 },
      legend: { labelFontSize: 11, titleFontSize: 12, labelLimit: 320 },
      title: { fontSize: 13, anchor: 'start' },
      view: { stroke: '#d8dde4' }
    }, spec.config || {});
    // Vega's warnings (an empty domain, a conflicting property) are console errors naming the chart:
    // a page that draws with warnings fails its test.
    var say = function () {
      console.error('vqsim report: chart "' + spec.title + '": ' + Array.prototype.join.call(arguments, ' '));
      return logger;
    };
    var quiet = function () { return logger; };
    var logger = { level: function (l) { return l === undefined ? 2 : logger; }, error: say, warn: say, info: quiet, debug: quiet };
    views.push(vegaEmbed(div, spec, { actions: false, renderer: 'svg', logger: logger }).then(function (r) {
      return { view: r.view, datasets: Object.keys(datasets) };
    }));
  }
  function src(row, field, p) {
    row._src = row._src || {};
    row[field] = get(p);
    row._src[field] = p;
    return row;
  }
  var verdictColors = {
    domain: ['better', 'worse', 'no significant difference'],
    range: ['#2a7d4f', '#b3362b', '#8a8f98']
  };

  // ---------------------------------------------------------------- the kinds

  function header(what) {
    root.innerHTML = '';
    add(root, el('h1', { text: doc.title }));
    para('meta', what + ' · made by vqsim ' + doc.generator + ' from ', el('code', { text: doc.source }));
  }

  // A what-if: `vqsim compare`'s JSON.
  function compareKind() {
    var d = doc.data;
    header('What-if (vqsim compare)');
    para(null, 'Base: ', el('code', { text: d.scenario }), ' — ' + d.setup);
    para('hint', String(d.replications) + ' replications per side on common random numbers' +
      (d.parameter_draws > 0 ? ', ' + d.parameter_draws + ' parameter draws shared by both sides' : '') +
      '. Each point is the alternative\'s difference from the base; its bar is the 95% interval of the paired ' +
      'difference, the wide grey bar what two separate runs\' intervals would give (unpaired). A verdict is better or ' +
      'worse when the paired interval excludes 0.');
    (d.warnings || []).forEach(function (w) { box('warn', 'warning: ' + w); });
    d.comparisons.forEach(function (c, ci) {
      var vs = Object.keys(c.vs).map(function (k) { return k + '=' + c.vs[k]; }).join(',');
      section('--vs ' + vs);
      para(null, 'Alternative: ' + c.setup);
      var rows = [];
      var names = Object.keys(c.metrics);
      names.forEach(function (m) {
        var p = ptr('data', 'comparisons', ci, 'metrics', m);
        var r = { metric: m, verdict: c.metrics[m].verdict };
        ['delta_rel', 'lower_rel', 'upper_rel', 'unpaired_half_width_rel', 'base', 'alt'].forEach(function (f) { src(r, f, p + '/' + f); });
        rows.push(r);
      });
      var ds = 'compare' + ci;
      var y = { field: 'metric', type: 'nominal', sort: names, title: null };
      var verdictColor = { field: 'verdict', type: 'nominal', scale: verdictColors, legend: { title: 'verdict', orient: 'bottom' } };
      chart({
        width: 640,
        height: { step: 26 },
        title: 'alternative vs base, relative difference with its 95% interval',
        data: { name: ds },
        transform: [
          { calculate: 'datum.delta_rel - datum.unpaired_half_width_rel', as: 'ulo' },
          { calculate: 'datum.delta_rel + datum.unpaired_half_width_rel', as: 'uhi' }
        ],
        layer: [
          { mark: { type: 'rule', color: '#555', strokeDash: [3, 3] }, encoding: { x: { datum: 0 } } },
          { mark: { type: 'rule', strokeWidth: 9, color: '#c9ced6', opacity: 0.7 },
            encoding: { y: y, x: { field: 'ulo', type: 'quantitative' }, x2: { field: 'uhi' } } },
          { mark: { type: 'rule', strokeWidth: 2.5 },
            encoding: { y: y, x: { field: 'lower_rel', type: 'quantitative' }, x2: { field: 'upper_rel' }, color: verdictColor } },
          { mark: { type: 'point', filled: true, size: 70 },
            encoding: {
              y: y,
              x: { field: 'delta_rel', type: 'quantitative', axis: { format: '+.1%', title: 'difference (alternative − base) / base' } },
              color: verdictColor,
              tooltip: [
                { field: 'metric' }, { field: 'base', format: ',.2f' }, { field: 'alt', format: ',.2f' },
                { field: 'delta_rel', format: '+.2%', title: 'delta' }, { field: 'lower_rel', format: '+.2%', title: '95% lower' },
                { field: 'upper_rel', format: '+.2%', title: '95% upper' }, { field: 'verdict' }
              ]
            } }
        ]
      }, (function () { var o = {}; o[ds] = rows; return o; })());
      add(root, table(
        [{ title: 'metric' }, { title: 'base', numeric: true }, { title: 'alternative', numeric: true },
          { title: 'delta', numeric: true }, { title: 'delta %', numeric: true }, { title: '95% interval of delta', numeric: true },
          { title: 'unpaired ±', numeric: true }, { title: 'verdict' }],
        names.map(function (m) {
          var p = ptr('data', 'comparisons', ci, 'metrics', m);
          return [m, num(p + '/base'), num(p + '/alt'), num(p + '/delta', { signed: true }), pct(p + '/delta_rel', true),
            ['[', pct(p + '/lower_rel', true), ', ', pct(p + '/upper_rel', true), ']'], pct(p + '/unpaired_half_width_rel'),
            verdictTag(c.metrics[m].verdict)];
        })));
      if (c.one_sided && c.one_sided.length) para('hint', 'not compared (zero or absent on one side): ' + c.one_sided.join(', '));
    });
  }

  // A plan: `vqsim plan`'s JSON and the margins derived from it.
  function planKind() {
    var d = doc.data, der = doc.derived;
    header('Plan (vqsim plan)');
    para(null, 'Goal: ' + d.question + '.');
    para('hint', 'Setup at the answer: ' + d.setup_at_answer + '. DES points: ' + d.replications + ' replications × ' +
      d.ios + ' I/Os, seed ' + d.seed + '.');
    if (d.feasible)
      box('good', el('div', { cls: 'answer' }, 'answer: ' + d.knob + ' = ', num('/data/answer')),
        d.at_range_end ? el('p', { text: 'the answer is at the end of the range searched: the true limit may lie beyond it' }) : null);
    else
      box('bad', el('div', { cls: 'answer' }, 'no value satisfies the constraints; the nearest miss is ' + d.knob + ' = ', num('/data/best')));
    para(null, d.message);

    section('The bound and the margin');
    para('hint', 'Margin: how far the answer\'s value is from the bound, relative to the bound (positive: room left), for ' +
      'the mean and for the 95% interval\'s end nearest the bound.');
    add(root, table(
      [{ title: 'constraint' }, { title: 'value at the answer', numeric: true }, { title: '95% interval', numeric: true },
        { title: 'bound', numeric: true }, { title: 'margin (mean)', numeric: true }, { title: 'margin (interval end)', numeric: true },
        { title: 'verdict' }],
      d.checks.map(function (k, i) {
        var ci = d.constraints.findIndex(function (c) { return c.text === k.constraint; });
        var p = ptr('data', 'checks', i, 'value');
        return [k.constraint, num(p + '/mean'), interval(p + '/lower', p + '/upper'),
          [d.constraints[ci].op + ' ', num(ptr('data', 'constraints', ci, 'bound'))],
          pct(ptr('derived', 'margins', i, 'margin_rel'), true), pct(ptr('derived', 'margins', i, 'interval_end_margin_rel'), true),
          verdictTag(k.verdict)];
      })));
    if (der.beyond) {
      var b = d.tried[der.beyond.tried];
      para(null, 'One step beyond, at ' + d.knob + ' = ', num(ptr('data', 'tried', der.beyond.tried, 'value')), ': ',
        b.checks.map(function (k, i) {
          var p = ptr('data', 'tried', der.beyond.tried, 'checks', i, 'value');
          return [k.constraint + ': ', num(p + '/mean'), ' [', num(p + '/lower'), ' – ', num(p + '/upper'), '] (' + k.verdict + ')',
            i + 1 < b.checks.length ? '; ' : ''];
        }), '.');
    }
    if (d.prediction_checks) {
      section('With the calibration\'s uncertainty');
      para('hint', 'The answer judged with the whole 95% prediction interval (model error, parameters, simulation).');
      add(root, table([{ title: 'constraint' }, { title: 'mean', numeric: true }, { title: '95% prediction interval', numeric: true }, { title: 'verdict' }],
        d.prediction_checks.map(function (k, i) {
          var p = ptr('data', 'prediction_checks', i);
          return [k.constraint, num(p + '/mean'), interval(p + '/lower', p + '/upper'), verdictTag(k.verdict)];
        })));
    }
    if (d.metrics) {
      section('Other figures at the answer');
      add(root, table([{ title: 'metric' }, { title: 'mean', numeric: true }, { title: '± (95%)', numeric: true }, { title: '95% interval', numeric: true }],
        Object.keys(d.metrics).map(function (m) {
          var p = ptr('data', 'metrics', m);
          return [m, num(p + '/mean'), num(p + '/half_width_95'), interval(p + '/lower', p + '/upper')];
        })));
    }

    section('The points tried');
    para('hint', 'MVA points guided the search (means only); DES points, with their 95% intervals, found the boundary. ' +
      'The dashed line is the bound, the vertical line the answer.');
    var grid = el('div', { style: 'display:flex;flex-wrap:wrap;gap:6px 18px' });
    add(root, grid);
    d.constraints.forEach(function (c, ci) {
      var rows = d.tried.map(function (t, ti) {
        var k = t.checks[ci];
        var p = ptr('data', 'tried', ti, 'checks', ci, 'value');
        var r = { method: t.method, satisfied: t.satisfied ? 'satisfies' : 'fails' };
        src(r, 'x', ptr('data', 'tried', ti, 'value'));
        if (k.value !== null && typeof k.value === 'object') { src(r, 'y', p + '/mean'); src(r, 'lo', p + '/lower'); src(r, 'hi', p + '/upper'); }
        else src(r, 'y', p);
        return r;
      }).filter(function (r) { return finite(r.y); });
      // The whole search (log axes when it spans a wide range), then the simulated points near the
      // boundary on linear axes, where the intervals can be read.
      triedChart(d, c, ci, rows, c.text + ': the search', true, grid);
      var near = rows.filter(function (r) { return r.method !== 'MVA'; });
      if (near.length) triedChart(d, c, ci, near, c.text + ': at the boundary (simulated)', false, grid);
    });
    var cols = [{ title: '#' }, { title: d.knob, numeric: true }, { title: 'method' }];
    d.constraints.forEach(function (c) { cols.push({ title: c.text, numeric: true }); });
    cols.push({ title: 'point' });
    details('every point tried, in order (' + d.tried.length + ')', table(cols, d.tried.map(function (t, ti) {
      var r = [String(ti + 1), num(ptr('data', 'tried', ti, 'value')), t.method];
      t.checks.forEach(function (k, ci) {
        var p = ptr('data', 'tried', ti, 'checks', ci, 'value');
        r.push(k.value !== null && typeof k.value === 'object' ? [num(p + '/mean'), ' ± ', num(p + '/half_width_95'), ' ', verdictTag(k.verdict)]
          : [num(p), ' ', verdictTag(k.verdict)]);
      });
      r.push(t.satisfied ? tag('ok', 'ok') : tag('fails', 'fail'));
      return r;
    })), d.tried.length <= 30);
    (d.notes || []).forEach(function (n) { para('hint', 'note: ' + n); });
  }

  function triedChart(d, c, ci, rows, title, wide, parent) {
    var xs = rows.map(function (r) { return r.x; });
    var xlog = wide && Math.min.apply(null, xs) >= 1 && Math.max.apply(null, xs) >= 16 * Math.min.apply(null, xs);
    var ys = rows.map(function (r) { return r.y; }).concat([c.bound]);
    var ymin = Math.min.apply(null, ys);
    var ylog = wide && ymin > 0 && Math.max.apply(null, ys) >= 50 * ymin;
    // On a log axis an interval reaching 0 or below (few replications) is drawn down to the
    // axis's floor; the tooltip has its true end.
    var loPlot = ylog ? 'datum.lo > 0 ? datum.lo : ' + ymin / 2 : 'datum.lo';
    var ds = 'tried' + ci + (wide ? '' : '_near');
    var methodColor = { field: 'method', type: 'nominal', scale: { domain: ['MVA', 'MVA-cal', 'DES'], range: ['#9aa5b4', '#c08a2e', '#2d5d99'] } };
    var xenc = { field: 'x', type: 'quantitative', title: d.knob, scale: xlog ? { type: 'log', base: 2 } : { zero: false, padding: 14 },
      axis: xlog ? { format: 'd' } : { tickMinStep: 1, format: 'd' } };
    var yscale = ylog ? { type: 'log' } : { zero: false, padding: 10 };
    var layers = [
      { mark: { type: 'rule', strokeDash: [6, 4], color: '#b3362b' }, encoding: { y: { datum: c.bound, scale: yscale } } },
      { mark: { type: 'point', size: 60, filled: true },
        encoding: { x: xenc, y: { field: 'y', type: 'quantitative', title: c.metric, scale: yscale },
          color: methodColor,
          shape: { field: 'satisfied', type: 'nominal', scale: { domain: ['satisfies', 'fails'], range: ['circle', 'cross'] } },
          tooltip: [{ field: 'x', title: d.knob }, { field: 'method' }, { field: 'y', format: ',.2f', title: c.metric },
            { field: 'lo', format: ',.2f' }, { field: 'hi', format: ',.2f' }, { field: 'satisfied' }] } }
    ];
    // The DES points' intervals (none among MVA points: an empty layer would leave an empty extent).
    if (rows.some(function (r) { return finite(r.lo); }))
      layers.splice(1, 0, { transform: [{ filter: 'isValid(datum.lo)' }, { calculate: loPlot, as: 'lo_plot' }], mark: { type: 'rule', strokeWidth: 2 },
        encoding: { x: xenc, y: { field: 'lo_plot', type: 'quantitative', scale: yscale }, y2: { field: 'hi' }, color: methodColor } });
    if (finite(d.answer)) layers.splice(1, 0, { mark: { type: 'rule', color: '#2a7d4f' }, encoding: { x: { datum: d.answer, scale: xenc.scale } } });
    var o = {};
    o[ds] = rows;
    chart({ width: 380, height: 260, title: title, data: { name: ds }, layer: layers }, o, parent);
  }

  // A sweep directory: results.jsonl, with the axes, series and knees derived from it.
  function sweepKind() {
    var rows = doc.data, der = doc.derived;
    header('Sweep (vqsim sweep)');
    var metrics = Object.keys(rows[0].metrics);
    var predicted = rows.some(function (r) {
      return Object.keys(r.metrics).some(function (m) { return r.metrics[m] && 'prediction_lower' in r.metrics[m]; });
    });
    var methods = rows.map(function (r) { return r.method; }).filter(function (m, i, a) { return a.indexOf(m) === i; });
    para(null, String(rows.length) + ' points' + (der.x ? '; swept along ' : ''), der.x ? el('code', { text: der.x }) : null,
      der.series_keys.length ? '; one curve per ' + der.series_keys.join(' × ') : '',
      der.with_x.length ? '; moving with it: ' + der.with_x.join(', ') : '', '.');
    var fixed = Object.keys(der.fixed);
    if (fixed.length) para('hint', 'The same at every point: ' + fixed.map(function (k) { return k + '=' + der.fixed[k]; }).join(', ') + '.');
    para('hint', (methods.indexOf('mva') >= 0 ? 'Mean-value analysis points have means only (no band, no percentiles). ' : '') +
      'Bands: ' + (predicted ? 'the whole 95% prediction interval (the model\'s own error, the parameter draws and the simulation noise).'
        : 'the 95% confidence interval of the simulation (mean ± half-width).'));

    section('The knee');
    para('hint', 'The knee of a curve is the last point before the first step where ' + (der.throughput_metric || 'the throughput') +
      ' grows by less than ' + Math.round(100 * der.knee_rule.throughput_gain_below) + '% while ' + (der.latency_metric || 'the tail latency') +
      ' grows by more than ' + Math.round(100 * der.knee_rule.latency_gain_above) + '%: past it, more load buys latency, not throughput.');
    add(root, table([{ title: 'curve' }, { title: 'knee at ' + (der.x || '') , numeric: true }, { title: 'point', numeric: true },
      { title: 'next step to', numeric: true }, { title: (der.throughput_metric || 'throughput') + ' gain', numeric: true },
      { title: (der.latency_metric || 'latency') + ' gain', numeric: true }, { title: 'bottleneck at the knee' }],
      der.series.map(function (s, si) {
        if (!s.knee) return [s.label, '–', '–', '–', '–', '–', 'no knee: ' + s.knee_note];
        var p = ptr('derived', 'series', si, 'knee');
        return [s.label, num(p + '/x_value'),
          num(ptr('data', s.knee.row, 'point')), num(p + '/next_x_value'), pct(p + '/throughput_gain_rel', true),
          pct(p + '/latency_gain_rel', true), rows[s.knee.row].bottleneck || '–'];
      })));

    section('The curves');
    var xnum = der.x_numeric;
    var xscale = der.x_scale === 'log2' ? { type: 'log', base: 2 } : der.x_scale === 'log' ? { type: 'log' } : { zero: false };
    var knees = [];
    der.series.forEach(function (s, si) {
      if (s.knee) knees.push({ series: s.label, row: s.knee.row });
    });
    var grid = el('div', { style: 'display:flex;flex-wrap:wrap;gap:6px 18px' });
    add(root, grid);
    metrics.forEach(function (m) {
      var data = [];
      der.series.forEach(function (s) {
        s.rows.forEach(function (i) {
          var mp = ptr('data', i, 'metrics', m);
          var mm = rows[i].metrics[m];
          if (!mm || !finite(mm.mean)) return;
          var r = { series: s.label, point: rows[i].point, bottleneck: rows[i].bottleneck || '', xs: der.x ? rows[i].settings[der.x] : '' };
          r.x = xnum ? Number(r.xs) : r.xs;
          src(r, 'y', mp + '/mean');
          if ('prediction_lower' in mm) { src(r, 'plo', mp + '/prediction_lower'); src(r, 'phi', mp + '/prediction_upper'); r.lo = r.plo; r.hi = r.phi; }
          else if (finite(mm.half_width_95)) { src(r, 'hw', mp + '/half_width_95'); r.lo = r.y - r.hw; r.hi = r.y + r.hw; }
          r.knee = knees.some(function (k) { return k.row === i; }) && (m === der.throughput_metric || m === der.latency_metric);
          data.push(r);
        });
      });
      if (!data.length) return;
      var ds = 'sweep_' + m.replace(/[^A-Za-z0-9]/g, '_');
      var xenc = xnum ? { field: 'x', type: 'quantitative', title: der.x, scale: xscale, axis: der.x_scale === 'log2' ? { values: uniqueNumbers(data) } : {} }
        : { field: 'x', type: 'ordinal', title: der.x, sort: null };
      var color = { field: 'series', type: 'nominal', title: der.series_keys.join(', ') || null, legend: der.series_keys.length ? { orient: 'bottom', columns: 2, symbolOpacity: 1, symbolType: 'stroke', symbolStrokeWidth: 2.5 } : null };
      var tooltip = [{ field: 'series' }, { field: 'xs', title: der.x }, { field: 'y', format: ',.2f', title: m },
        { field: 'lo', format: ',.2f', title: '95% lower' }, { field: 'hi', format: ',.2f', title: '95% upper' }, { field: 'bottleneck' }, { field: 'point' }];
      // The band where the points have intervals (MVA points have none; an empty layer would
      // leave Vega an empty extent).
      var band = { transform: [{ filter: 'isValid(datum.lo)' }], mark: xnum ? { type: 'area', opacity: 0.18 } : { type: 'rule', strokeWidth: 2 },
        encoding: { x: xenc, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color: color } };
      var layers = [
        { mark: xnum ? { type: 'line', point: { size: 28 }, strokeWidth: 1.6 } : { type: 'point', filled: true, size: 50 },
          encoding: { x: xenc, y: { field: 'y', type: 'quantitative', title: m, scale: { zero: false } }, color: color, tooltip: tooltip } }
      ];
      if (data.some(function (r) { return finite(r.lo); })) layers.unshift(band);
      // The knee, ringed, on the charts of the two metrics it is judged on (an empty layer would
      // leave Vega an empty extent).
      var kneeCount = data.filter(function (r) { return r.knee; }).length;
      if (kneeCount) layers.push(
        { transform: [{ filter: 'datum.knee' }], mark: { type: 'point', shape: 'circle', size: 260, filled: false, strokeWidth: 2, color: '#b3362b' },
          encoding: { x: xenc, y: { field: 'y', type: 'quantitative' }, tooltip: tooltip } });
      // Labelled when few enough not to overprint each other; the rings and the table say the rest.
      if (kneeCount && kneeCount <= 4) layers.push(
        { transform: [{ filter: 'datum.knee' }], mark: { type: 'text', dy: -16, fontWeight: 'bold', color: '#b3362b', text: 'knee' },
          encoding: { x: xenc, y: { field: 'y', type: 'quantitative' } } });
      var o = {}; o[ds] = data;
      chart({ width: 430, height: 250, title: m, data: { name: ds }, layer: layers }, o, grid);
    });

    section('The bottleneck per point');
    para('hint', 'The stage with the highest utilisation at each point (the one a faster setting would relieve first).');
    var bdata = [];
    der.series.forEach(function (s) {
      s.rows.forEach(function (i) {
        var r = { series: s.label, xs: der.x ? rows[i].settings[der.x] : '', point: rows[i].point };
        src(r, 'bottleneck', ptr('data', i, 'bottleneck'));
        bdata.push(r);
      });
    });
    chart({
      width: Math.min(900, Math.max(300, 46 * (der.series.length ? der.series[0].rows.length : 1))),
      height: { step: 24 },
      title: 'bottleneck stage',
      data: { name: 'bottlenecks' },
      mark: { type: 'rect', stroke: '#fff', strokeWidth: 1 },
      encoding: {
        x: { field: 'xs', type: 'ordinal', title: der.x, sort: null },
        y: { field: 'series', type: 'nominal', title: null, sort: null },
        color: { field: 'bottleneck', type: 'nominal', legend: { orient: 'bottom', columns: 3, title: 'bottleneck' } },
        tooltip: [{ field: 'series' }, { field: 'xs', title: der.x }, { field: 'bottleneck' }, { field: 'point' }]
      }
    }, { bottlenecks: bdata });

    var keys = Object.keys(rows[0].settings);
    var cols = [{ title: 'point', numeric: true }].concat(keys.map(function (k) { return { title: k }; }));
    metrics.forEach(function (m) { cols.push({ title: m, numeric: true }); cols.push({ title: '±', numeric: true }); });
    cols.push({ title: 'bottleneck' });
    details('every point (' + rows.length + ')', table(cols, rows.map(function (r, i) {
      var cells = [num(ptr('data', i, 'point'))].concat(keys.map(function (k) { return r.settings[k]; }));
      metrics.forEach(function (m) {
        var mm = r.metrics[m];
        cells.push(mm ? num(ptr('data', i, 'metrics', m, 'mean')) : '–');
        cells.push(mm && 'half_width_95' in mm ? num(ptr('data', i, 'metrics', m, 'half_width_95')) : '–');
      });
      cells.push(r.bottleneck || '–');
      return cells;
    })), rows.length <= 40);
  }
  function uniqueNumbers(data) {
    return data.map(function (r) { return r.x; }).filter(function (v, i, a) { return a.indexOf(v) === i; }).sort(function (a, b) { return a - b; });
  }

  // A calibration: calibrate's --report JSON.
  function calibrationKind() {
    var d = doc.data;
    header('Calibration (vqsim calibrate)');
    para(null, 'Measurements: ', el('code', { text: d.manifest }), '; base scenario: ', el('code', { text: d.base }), '.');
    var fitted = d.runs.filter(function (r) { return r.role === 'fitted'; }).length;
    para('hint', String(fitted) + ' runs fitted' + (d.runs.length > fitted ? ', ' + (d.runs.length - fitted) + ' held out (predicted)' : '') +
      '; ' + (d.converged ? 'converged' : 'NOT converged (' + d.stop_reason + ')') + ' in ', num('/data/rounds'), ' rounds, ',
      num('/data/mva_evaluations'), ' MVA solutions, ', num('/data/des_runs'), ' simulations, ', num('/data/seconds'), ' s.');
    if (d.fit_quality) box('bad', el('strong', { text: 'What the fit suggests is missing: ' }), d.fit_quality);
    else box('good', 'Every fitted figure is within its bar (5% for throughput and mean latency, 15% for percentiles): ' +
      'the data show no pattern the model misses.');
    if (d.notes && d.notes.length)
      box('warn', el('strong', { text: 'Notes of the fit' }), el('ul', null, d.notes.map(function (n) { return el('li', { text: n }); })));
    if (!d.converged) box('bad', 'The fit did not converge: calibrate wrote this report but no FIT.toml.');

    section('Measured vs fitted, per run and metric');
    para('hint', 'Each point is the model\'s figure relative to the measured one (model / measured on a log axis, labelled as the error); its bar the ' +
      '95% interval of the model\'s figure (the parameters\' uncertainty, the simulation and the model\'s own error); the grey ' +
      'box the bar a fitted figure should fall within. Held-out runs were not fitted: they are predictions.');
    var runNames = d.runs.map(function (r) { return r.name; });
    var rows = [];
    d.runs.forEach(function (run, ri) {
      run.targets.forEach(function (t, ti) {
        var p = ptr('data', 'runs', ri, 'targets', ti);
        var r = { run: run.name, role: run.role, metric: t.metric, kind: t.kind, within: t.within_bar ? 'within its bar' : 'beyond its bar' };
        src(r, 'measured', p + '/measured'); src(r, 'model', p + '/model');
        src(r, 'lo', p + '/interval95/0'); src(r, 'hi', p + '/interval95/1');
        rows.push(r);
      });
    });
    var metricsOrder = rows.map(function (r) { return r.metric; }).filter(function (m, i, a) { return a.indexOf(m) === i; });
    chart(errorFacet('fit', runNames, metricsOrder, 'model', 'role', { domain: ['fitted', 'held out (predicted)'], range: ['#2d5d99', '#c08a2e'] }, rows),
      { fit: rows });
    details('the figures (' + rows.length + ')', table(
      [{ title: 'run' }, { title: 'role' }, { title: 'metric' }, { title: 'measured', numeric: true }, { title: 'model', numeric: true },
        { title: 'error', numeric: true }, { title: '95% interval', numeric: true }, { title: '' }],
      flat(d.runs.map(function (run, ri) {
        return run.targets.map(function (t, ti) {
          var p = ptr('data', 'runs', ri, 'targets', ti);
          return [run.name, run.role, t.metric, num(p + '/measured'), num(p + '/model'), pct(p + '/error_rel', true),
            interval(p + '/interval95/0', p + '/interval95/1'), t.within_bar ? '' : tag('beyond bar', 'fail')];
        });
      })),
      function (i) { return rowsWithin(d)[i] ? '' : 'out'; }), rows.length <= 12);

    section('Parameters');
    para('hint', 'Each fitted parameter relative to its documented default, with its 95% interval. Not identified: the runs ' +
      'barely inform it (its interval is mostly the prior\'s), the parameter draws spread it, two explanations that ' +
      'fit about as well differ in it, or one left-out run (or configuration) alone pins it; the status says which. At a limit: the fit pushed it to the end of its range.');
    var prows = d.params.map(function (p, i) {
      var r = { key: p.key, status: paramStatus(p) };
      var pp = ptr('data', 'params', i);
      src(r, 'estimate', pp + '/estimate'); src(r, 'default', pp + '/default');
      src(r, 'lo', pp + '/interval95/0'); src(r, 'hi', pp + '/interval95/1');
      return r;
    });
    statusColor = { field: 'status', type: 'nominal', scale: statusColors, legend: { orient: 'bottom', title: null } };
    chart({
      width: 560, height: { step: 24 }, title: 'estimate / default (log scale)', data: { name: 'params' },
      transform: [{ calculate: 'datum.estimate / datum.default', as: 'ratio' }, { calculate: 'datum.lo / datum.default', as: 'rlo' },
        { calculate: 'datum.hi / datum.default', as: 'rhi' }],
      layer: [
        { mark: { type: 'rule', color: '#555', strokeDash: [3, 3] }, encoding: { x: { datum: 1 } } },
        { mark: { type: 'rule', strokeWidth: 2.5 }, encoding: { y: { field: 'key', type: 'nominal', sort: null, title: null },
          x: { field: 'rlo', type: 'quantitative', scale: { type: 'log' } }, x2: { field: 'rhi' }, color: statusColor } },
        { mark: { type: 'point', filled: true, size: 70 }, encoding: { y: { field: 'key', type: 'nominal', sort: null },
          x: { field: 'ratio', type: 'quantitative', scale: { type: 'log' }, title: 'estimate / default' },
          color: statusColor,
          tooltip: [{ field: 'key' }, { field: 'estimate', format: '.4g' }, { field: 'lo', format: '.4g', title: '95% lower' },
            { field: 'hi', format: '.4g', title: '95% upper' }, { field: 'default', format: '.4g' }, { field: 'status' }] } }
      ]
    }, { params: prows });
    add(root, table([{ title: 'parameter' }, { title: 'default', numeric: true }, { title: 'estimate', numeric: true },
      { title: '95% interval', numeric: true }, { title: 'sd of ln', numeric: true }, { title: 'status' }],
      d.params.map(function (p, i) {
        var pp = ptr('data', 'params', i);
        var st = paramStatus(p);
        return [p.key, num(pp + '/default'), num(pp + '/estimate'), interval(pp + '/interval95/0', pp + '/interval95/1'), num(pp + '/log_sd'),
          tag(st === 'not identified' && p.why_not_identified ? st + ': ' + p.why_not_identified : st,
            st === 'identified' ? 'identified' : st === 'not identified' ? 'not-identified' : 'at-limit')];
      })));
    if (d.correlation && d.correlation.length > 1) {
      var crows = [];
      d.correlation.forEach(function (row, i) {
        row.forEach(function (v, j) {
          var r = { a: d.params[i].key, b: d.params[j].key };
          src(r, 'r', ptr('data', 'correlation', i, j));
          crows.push(r);
        });
      });
      var keys = d.params.map(function (p) { return p.key; });
      details('correlations of the estimates', el('div'), false);
      chart({
        width: { step: 34 }, height: { step: 26 }, title: 'correlation of the parameters\' estimates (ln scale)', data: { name: 'correlation' },
        layer: [
          { mark: 'rect', encoding: { x: { field: 'b', type: 'nominal', sort: keys, title: null, axis: { labelAngle: -40 } },
            y: { field: 'a', type: 'nominal', sort: keys, title: null },
            color: { field: 'r', type: 'quantitative', scale: { domain: [-1, 1], scheme: 'redblue', reverse: true }, legend: { title: 'r' } },
            tooltip: [{ field: 'a' }, { field: 'b' }, { field: 'r', format: '.3f' }] } },
          { mark: { type: 'text', fontSize: 10 }, encoding: { x: { field: 'b', type: 'nominal', sort: keys }, y: { field: 'a', type: 'nominal', sort: keys },
            text: { field: 'r', type: 'quantitative', format: '.2f' } } }
        ]
      }, { correlation: crows }, root.lastChild);
    }
    if (d.alternative) {
      section('A second explanation');
      para('hint', 'The multi-start found other values the data fit about as well; predictions draw around both, ' +
        'weighted by their likelihoods.');
      add(root, table([{ title: 'parameter' }, { title: 'estimate', numeric: true }, { title: 'second explanation', numeric: true }],
        d.params.map(function (p, i) {
          return [p.key, num(ptr('data', 'params', i, 'estimate')), p.key in d.alternative.values ? num(ptr('data', 'alternative', 'values', p.key)) : '–'];
        })));
      para(null, 'Its weight: ', num('/data/alternative/weight'), '; simulated cost ', num('/data/alternative/simulated_cost'),
        ' against the estimate\'s ', num('/data/alternative/estimate_cost'), '.');
    }

    var cv = d.cross_validation;
    section('Leave-one-out errors');
    if (!cv) para('hint', 'Not computed: calibrate with --cv loo to predict each run from a fit without it.');
    else {
      para('hint', 'Each run predicted by a fit on the others: the honest error for a setup not measured. MAPE: the mean ' +
        'absolute relative error per kind of figure.');
      add(root, table([{ title: 'kind' }, { title: 'MAPE', numeric: true }], Object.keys(cv.mape).map(function (k) {
        return [k, pct(ptr('data', 'cross_validation', 'mape', k))];
      })));
      para(null, 'Worst: run ' + cv.worst.run + ', ' + cv.worst.metric + ', ', pct('/data/cross_validation/worst/error_abs_rel'), ' off.');
      var lrows = [];
      cv.folds.forEach(function (f, fi) {
        f.targets.forEach(function (t, ti) {
          var p = ptr('data', 'cross_validation', 'folds', fi, 'targets', ti);
          var r = { run: f.left_out, metric: t.metric, kind: t.kind, role: 'left out' };
          src(r, 'measured', p + '/measured'); src(r, 'model', p + '/predicted');
          src(r, 'lo', p + '/interval95/0'); src(r, 'hi', p + '/interval95/1');
          lrows.push(r);
        });
      });
      chart(errorFacet('loo', cv.folds.map(function (f) { return f.left_out; }), metricsOrder, 'model', 'role',
        { domain: ['left out'], range: ['#7a4fa3'] }, lrows), { loo: lrows });
      details('the leave-one-out figures (' + lrows.length + ')', table(
        [{ title: 'left out' }, { title: 'metric' }, { title: 'measured', numeric: true }, { title: 'predicted', numeric: true },
          { title: 'error', numeric: true }, { title: '95% interval', numeric: true }],
        flat(cv.folds.map(function (f, fi) {
          return f.targets.map(function (t, ti) {
            var p = ptr('data', 'cross_validation', 'folds', fi, 'targets', ti);
            return [f.left_out, t.metric, num(p + '/measured'), num(p + '/predicted'), pct(p + '/error_rel', true),
              interval(p + '/interval95/0', p + '/interval95/1')];
          });
        }))), false);
    }

    if (d.model_error && d.model_error.unmeasured) {
      section('The model\'s own error');
      para('hint', 'Added to every prediction\'s interval: the sd of ln(model / measured) per kind of figure, and the 95% ' +
        'factor it means (×/ f: from value / f to value × f). Source: ' + d.model_error.source + '.');
      // Per distance from the fitted runs, nearest last: a value no fitted run had, a new
      // combination of fitted values, another workload of a fitted configuration, the fitted setups.
      var distances = [['unmeasured', 'another configuration'], ['combination', 'new combination of fitted values'],
        ['workload', 'another workload'], ['fitted', 'fitted setups']].filter(function (dist) {
        return d.model_error[dist[0]] && Object.keys(d.model_error[dist[0]]).length > 0;
      });
      add(root, table([{ title: 'kind' }].concat(flat(distances.map(function (dist) {
        return [{ title: dist[1] + ': sd', numeric: true }, { title: '×/', numeric: true }];
      }))),
        Object.keys(d.model_error.unmeasured).map(function (k) {
          return [k].concat(flat(distances.map(function (dist) {
            var p = ptr('data', 'model_error', dist[0], k);
            return [num(p), num(p, { fn: 'factor95' })];
          })));
        })));
    }
  }
  var statusColor;
  var statusColors = { domain: ['identified', 'not identified', 'at lower limit', 'at upper limit'], range: ['#2d5d99', '#9aa5b4', '#b3362b', '#b3362b'] };
  function paramStatus(p) {
    return p.at_limit === 'lower' ? 'at lower limit' : p.at_limit === 'upper' ? 'at upper limit' : p.identified ? 'identified' : 'not identified';
  }
  function flat(a) { return [].concat.apply([], a); }
  function rowsWithin(d) {
    return flat(d.runs.map(function (run) { return run.targets.map(function (t) { return t.within_bar; }); }));
  }
  // Model / measured per run, one panel per metric, on a log axis labelled as the relative error
  // (a factor-of-2 miss either way is as far from 0): the point, its 95% interval, the bar. Each
  // panel's ticks are chosen here from round factors within its range (a log axis's own ticks
  // crowd a range of less than a decade).
  var tickFactors = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 2, 5, 10, 20, 50, 100];
  function logTicks(lo, hi) {
    var inside = tickFactors.filter(function (f) { return f >= lo && f <= hi; });
    var span = Math.log(hi / lo), ticks = [1];
    // Outwards from 1 (0%), keeping ticks at least 1/6 of the range apart.
    [inside.filter(function (f) { return f > 1; }), inside.filter(function (f) { return f < 1; }).reverse()].forEach(function (side) {
      var last = 1;
      side.forEach(function (f) {
        if (Math.abs(Math.log(f / last)) >= span / 6) { ticks.push(f); last = f; }
      });
    });
    return ticks;
  }
  function errorFacet(ds, runNames, metricsOrder, field, colorField, colorScale, rows) {
    var color = { field: colorField, type: 'nominal', scale: colorScale, legend: { orient: 'bottom', title: null } };
    var x = { field: 'run', type: 'nominal', sort: runNames, title: null, axis: { labelAngle: -40, labelLimit: 120 } };
    var panels = metricsOrder.map(function (m) {
      var vals = [];
      rows.forEach(function (r) {
        if (r.metric !== m || !(r.measured > 0)) return;
        var tol = r.kind === 'throughput' || r.kind === 'mean latency' ? 0.05 : 0.15;
        [r[field] / r.measured, r.lo / r.measured, r.hi / r.measured, 1 - tol, 1 + tol].forEach(function (v) { if (v > 0 && isFinite(v)) vals.push(v); });
      });
      var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
      var y = { type: 'quantitative', scale: { type: 'log', domain: [lo / 1.02, hi * 1.02], nice: false }, title: null,
        axis: { values: logTicks(lo / 1.02, hi * 1.02), labelExpr: "(datum.value >= 1 ? '+' : '') + format(datum.value - 1, '.0%')" } };
      return {
        title: { text: m, anchor: 'middle', fontSize: 12 },
        width: Math.max(150, Math.min(30 * runNames.length, 700)), height: 150,
        transform: [{ filter: { field: 'metric', equal: m } }],
        layer: [
          { mark: { type: 'bar', color: '#e3e7ec', width: { band: 0.8 } },
            encoding: { x: x, y: Object.assign({ field: 'tlo' }, y), y2: { field: 'thi' } } },
          { mark: { type: 'rule', color: '#555', strokeDash: [3, 3] }, encoding: { y: { datum: 1 } } },
          { mark: { type: 'rule', strokeWidth: 2 }, encoding: { x: x, y: Object.assign({ field: 'rlo' }, y), y2: { field: 'rhi' }, color: color } },
          { mark: { type: 'point', filled: true, size: 50 },
            encoding: { x: x, y: Object.assign({ field: 'ratio' }, y), color: color,
              tooltip: [{ field: 'run' }, { field: 'metric' }, { field: 'measured', format: ',.2f' }, { field: field, format: ',.2f' },
                { field: 'err', format: '+.1%', title: 'error' }, { field: 'lo', format: ',.2f', title: '95% lower' }, { field: 'hi', format: ',.2f', title: '95% upper' }] } }
        ]
      };
    });
    return {
      data: { name: ds },
      transform: [
        { calculate: 'datum.' + field + ' / datum.measured', as: 'ratio' },
        { calculate: 'datum.lo / datum.measured', as: 'rlo' },
        { calculate: 'datum.hi / datum.measured', as: 'rhi' },
        { calculate: 'datum.' + field + ' / datum.measured - 1', as: 'err' },
        { calculate: "datum.kind === 'throughput' || datum.kind === 'mean latency' ? 0.05 : 0.15", as: 'tol' },
        { calculate: '1 - datum.tol', as: 'tlo' },
        { calculate: '1 + datum.tol', as: 'thi' }
      ],
      concat: panels,
      columns: 5,
      resolve: { scale: { y: 'independent' } }
    };
  }

  // ---------------------------------------------------------------- the check

  // The number a shown text stands for, and how far from it the text may be by rounding alone.
  function parseShown(text) {
    var t = text.replace(/,/g, '').replace(/%$/, '').replace(/^\+/, '').trim();
    if (t === '–') return { nil: true };
    var v = Number(t);
    if (!isFinite(v)) return { bad: true };
    var m = /^-?\d*(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(t);
    if (!m) return { bad: true };
    var decimals = m[1] ? m[1].length : 0;
    var tol = m[2] !== undefined ? 0.5 * Math.pow(10, Number(m[2]) - decimals) : 0.5 * Math.pow(10, -decimals);
    return { value: v, tol: tol * (1 + 1e-9) + 1e-12 * Math.abs(v) };
  }

  function check() {
    var errors = [], cells = 0, plotted = [];
    document.querySelectorAll('[data-path]').forEach(function (e) {
      cells++;
      var p = e.getAttribute('data-path');
      var v = get(p);
      var shown = parseShown(e.textContent);
      if (shown.nil) { if (finite(v)) errors.push(p + ': shown as "–" but the JSON has ' + v); return; }
      if (shown.bad || !finite(v)) { errors.push(p + ': shown "' + e.textContent + '", JSON ' + JSON.stringify(v)); return; }
      var fn = e.getAttribute('data-fn'), scale = Number(e.getAttribute('data-scale') || 1);
      var expect = (fn ? transforms[fn](v) : v) * scale;
      if (Math.abs(expect - shown.value) > shown.tol) errors.push(p + ': shown ' + e.textContent + ', JSON ' + v);
    });
    return Promise.all(views).then(function (list) {
      list.forEach(function (x) {
        x.datasets.forEach(function (name) {
          x.view.data(name).forEach(function (row) {
            Object.keys(row._src || {}).forEach(function (f) {
              var v = get(row._src[f]);
              if (row[f] !== v && !(row[f] == null && v == null)) errors.push('chart data ' + name + ' ' + row._src[f] + ': plotted ' + row[f] + ', JSON ' + v);
              plotted.push([row._src[f], row[f]]);
            });
          });
        });
      });
      var result = { status: errors.length ? 'mismatch' : 'ok', cells: cells, charts: list.length, plotted: plotted, errors: errors };
      var pre = el('pre', { id: 'vqsim-check', hidden: '' });
      pre.textContent = JSON.stringify(result);
      document.body.appendChild(pre);
      errors.forEach(function (e) { console.error('vqsim report: the page does not match its JSON: ' + e); });
    });
  }

  function footer() {
    add(root, el('footer', null, 'The numbers on this page are the JSON embedded in it (<script id="vqsim-data">): ' +
      'the output of ' + ({ calibration: 'vqsim calibrate --report', compare: 'vqsim compare --format json', plan: 'vqsim plan --format json',
        sweep: 'vqsim sweep (results.jsonl)' })[doc.kind] + '. Charts: Vega-Lite ' + vegaLite.version + ', Vega ' + vega.version +
      ', vega-embed ' + vegaEmbed.version + ' (BSD-3-Clause), inlined.'));
  }

  try {
    ({ calibration: calibrationKind, compare: compareKind, plan: planKind, sweep: sweepKind })[doc.kind]();
    footer();
    check().catch(function (e) { console.error('vqsim report: ' + (e && e.stack || e)); });
  } catch (e) {
    add(root, el('p', { cls: 'error', text: 'This page could not be drawn: ' + e }));
    console.error('vqsim report: ' + (e && e.stack || e));
  }
})();
